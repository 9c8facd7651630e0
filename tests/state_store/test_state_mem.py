"""The in-memory state store: kubelet's stateMemory semantics and copy isolation."""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings

from state.state_mem import MemoryState
from state.types import Block, MemoryTable, NUMANodeState, PodEntry

from tests.helpers.state_strategies import assignments, machine_states, pod_assignments

MACHINE = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 1024, 512)}, [])}


def test_new_state_is_empty() -> None:
    s = MemoryState()
    assert s.get_machine_state() == {}
    assert s.get_memory_assignments() == {}
    assert s.get_pod_memory_assignments() == {}
    assert s.get_memory_blocks("pod", "c") is None
    assert s.get_pod_memory_blocks("pod") is None


@pytest.mark.parametrize(
    "assignments",
    [
        {"pod": {"container1": [Block([0], "memory", 1024)]}},
        {"pod": {"container1": [Block([0], "memory", 512)], "container2": [Block([0], "memory", 512)]}},
        {"pod": {"container1": []}},
    ],
    ids=["one container", "two containers", "container without assigned memory"],
)
def test_set_get_delete_blocks(assignments) -> None:
    # TestCheckpointStateHelpers, on the in-memory store
    s = MemoryState()
    s.set_machine_state(MACHINE)
    assert s.get_machine_state() == MACHINE
    for pod, containers in assignments.items():
        for container, blocks in containers.items():
            s.set_memory_blocks(pod, container, blocks)
            assert s.get_memory_blocks(pod, container) == blocks
            s.delete(pod, container)
            assert s.get_memory_blocks(pod, container) is None
    assert s.get_memory_assignments() == {}


def test_delete_keeps_pod_until_last_container_and_is_idempotent() -> None:
    s = MemoryState()
    s.set_memory_blocks("p", "a", [Block([0], "memory", 1)])
    s.set_memory_blocks("p", "b", [Block([1], "memory", 2)])
    s.delete("p", "a")
    assert s.get_memory_assignments() == {"p": {"b": [Block([1], "memory", 2)]}}
    s.delete("p", "a")
    s.delete("q", "x")
    s.delete("p", "b")
    assert s.get_memory_assignments() == {}


def test_clear_state() -> None:
    s = MemoryState()
    s.set_machine_state(MACHINE)
    s.set_memory_assignments({"pod": {"container1": [Block([0], "memory", 1024)]}})
    s.set_pod_memory_blocks("pod", [Block([0], "memory", 1024)])
    s.clear_state()
    assert s.get_machine_state() == {} and s.get_memory_assignments() == {} and s.get_pod_memory_assignments() == {}


def test_pod_level_blocks() -> None:
    s = MemoryState()
    s.set_pod_memory_blocks("p", [Block([0], "memory", 5)])
    assert s.get_pod_memory_blocks("p") == [Block([0], "memory", 5)]
    assert s.get_pod_memory_assignments() == {"p": PodEntry([Block([0], "memory", 5)])}
    s.set_pod_memory_blocks("p", None)
    assert s.get_pod_memory_blocks("p") == []
    s.delete_pod("p")
    s.delete_pod("p")
    assert s.get_pod_memory_blocks("p") is None
    s.set_pod_memory_assignments({"q": PodEntry(None)})
    assert s.get_pod_memory_blocks("q") == []
    assert s.get_pod_memory_assignments() == {"q": PodEntry(None)}


def test_kubelet_clone_normalisation() -> None:
    # NUMANodeMap.Clone: nil cells become [], nil memory maps stay nil, a nil map is empty;
    # ContainerMemoryAssignments.Clone: nil inner maps become {}, nil block lists []
    s = MemoryState()
    s.set_machine_state({0: NUMANodeState(1, None, None), 1: None})
    assert s.get_machine_state() == {0: NUMANodeState(1, None, []), 1: None}
    s.set_machine_state(None)
    assert s.get_machine_state() == {}
    s.set_memory_assignments({"p": None, "q": {"c": None}})
    assert s.get_memory_assignments() == {"p": {}, "q": {"c": []}}
    s.set_memory_blocks("r", "c", None)
    assert s.get_memory_blocks("r", "c") == []
    s.set_memory_assignments(None)
    assert s.get_memory_assignments() == {}


@settings(max_examples=100, deadline=None)
@given(machine_states(True), assignments(True), pod_assignments(True))
def test_readers_and_writers_copy(ms, entries, pods) -> None:
    s = MemoryState()
    s.set_machine_state(ms)
    s.set_memory_assignments(entries)
    s.set_pod_memory_assignments(pods)
    snapshot = (s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments())
    expected = copy.deepcopy(snapshot)
    # mutating what was passed in, or what was read, changes nothing inside the store
    for value in (ms, entries, pods) + snapshot:
        if value is not None:
            _scramble(value)
    assert (s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments()) == expected


def _scramble(value) -> None:
    """Mutate every mutable part of a state value in place."""
    if isinstance(value, dict):
        for v in list(value.values()):
            _scramble(v)
        value["__scrambled__"] = None
    elif isinstance(value, list):
        for v in value:
            _scramble(v)
        value.append(None)
    elif isinstance(value, (NUMANodeState, PodEntry, Block, MemoryTable)):
        for name, v in list(vars(value).items()):
            if isinstance(v, (dict, list)):
                _scramble(v)
            elif isinstance(v, int):
                setattr(value, name, v + 1)


def test_copies_are_deep() -> None:
    s = MemoryState()
    s.set_machine_state(MACHINE)
    s.set_memory_blocks("p", "c", [Block([0], "memory", 1)])
    s.set_pod_memory_blocks("p", [Block([0], "memory", 1)])
    before = copy.deepcopy((s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments()))
    ms = s.get_machine_state()
    ms[0].memory_map["memory"].free = 0
    ms[0].cells.append(9)
    s.get_memory_blocks("p", "c")[0].numa_affinity.append(7)
    s.get_memory_assignments()["p"]["c"][0].size = 99
    s.get_pod_memory_blocks("p")[0].numa_affinity.append(3)
    s.get_pod_memory_assignments()["p"].memory_blocks[0].size = 5
    assert (s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments()) == before
