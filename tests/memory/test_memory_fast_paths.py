"""Fast paths of the memory manager's bookkeeping against their plain versions.

* ContainerMap's reverse index against a plain list scan (the former implementation);
* the stores' key listing and map hand-over against the copying readers and writers;
* calculate_hints above the memoised node count, with sparse NUMA ids.
"""
from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from memorymanager.container_map import ContainerMap, ContainerMapError
from memorymanager.hints import calculate_hints
from memorymanager.reference_hints import reference_calculate_hints
from state.state_mem import MemoryState
from state.types import MemoryTable, NUMANodeState
from tests.helpers.state_strategies import assignments, machine_states


class PlainContainerMap:
    """The container map as a dict scanned in order (what ContainerMap must behave like)."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, str]] = {}

    def add(self, pod_uid, container_name, container_id):
        self.entries[container_id] = (pod_uid, container_name)

    def remove_by_container_id(self, container_id):
        self.entries.pop(container_id, None)

    def get_container_id(self, pod_uid, container_name):
        for container_id, ref in self.entries.items():
            if ref == (pod_uid, container_name):
                return container_id
        raise ContainerMapError("missing")

    def remove_by_container_ref(self, pod_uid, container_name):
        try:
            self.remove_by_container_id(self.get_container_id(pod_uid, container_name))
        except ContainerMapError:
            pass


PODS = st.sampled_from(["p1", "p2"])
NAMES = st.sampled_from(["a", "b"])
IDS = st.sampled_from(["id1", "id2", "id3", "id4"])
OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), PODS, NAMES, IDS),
    st.tuples(st.just("remove_by_container_id"), IDS),
    st.tuples(st.just("remove_by_container_ref"), PODS, NAMES),
), max_size=30)


def _lookup(m, pod, name):
    try:
        return m.get_container_id(pod, name)
    except ContainerMapError:
        return None


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_container_map_index_equals_plain_scan(ops) -> None:
    fast, plain = ContainerMap(), PlainContainerMap()
    for op, *args in ops:
        getattr(fast, op)(*args)
        getattr(plain, op)(*args)
        assert fast.items() == list(plain.entries.items())
        for pod in ("p1", "p2"):
            for name in ("a", "b"):
                assert _lookup(fast, pod, name) == _lookup(plain, pod, name)
    rebuilt = ContainerMap(dict(plain.entries))
    assert rebuilt.items() == fast.copy().items() == list(plain.entries.items())


@settings(max_examples=100, deadline=None)
@given(machine_states(True), assignments(True))
def test_adopt_and_listing_equal_the_copying_calls(machine_state, entries) -> None:
    by_copy, by_adoption = MemoryState(), MemoryState()
    by_copy.set_machine_state(machine_state)
    by_adoption.adopt_machine_state(copy.deepcopy(machine_state))
    assert by_adoption.get_machine_state() == by_copy.get_machine_state()
    by_copy.set_memory_assignments(entries)
    stored = by_copy.get_memory_assignments()
    assert by_copy.assigned_containers() == [(p, c) for p in sorted(stored) for c in sorted(stored[p])]


def test_adopted_map_is_not_copied_but_readers_still_copy() -> None:
    state = MemoryState()
    machine_state = {0: NUMANodeState(0, {"memory": MemoryTable(2, 0, 2, 0, 2)}, None)}
    state.adopt_machine_state(machine_state)
    read = state.get_machine_state()
    read[0].memory_map["memory"].free = 0
    assert state.get_machine_state()[0].memory_map["memory"].free == 2
    assert state.get_machine_state()[0].cells == []


def test_calculate_hints_beyond_memoised_hints_with_sparse_ids() -> None:
    """13 NUMA nodes with ids 0, 2, ..., 24: fresh hint objects and id mapping."""
    table = lambda free: {"memory": MemoryTable(10, 0, 8, 8 - free, free)}  # noqa: E731
    state = {2 * i: NUMANodeState(1 if i == 3 else 0, table(1 if i == 3 else 4), [2 * i]) for i in range(13)}
    fast = calculate_hints(copy.deepcopy(state), {"memory": 6})
    assert fast == reference_calculate_hints(copy.deepcopy(state), {"memory": 6})
    assert len(fast["memory"]) == (1 << 12) - 1 - 12
