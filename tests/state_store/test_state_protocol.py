"""The State protocol: its two non-kubelet calls have defaults, stores override them, and the
manager hands out a read-only view."""
from __future__ import annotations

import pytest

from state.state import Reader, State, StateReader, Writer
from state.state_checkpoint import CheckpointState
from state.state_mem import MemoryState
from state.types import Block, MemoryTable, NUMANodeState

MACHINE = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 0, 1536)}, None)}
ENTRIES = {"pod-b": {"c2": [], "c1": [Block([0], "memory", 1)]}, "pod-a": {"c": []}}


class DelegatingStore(State):
    """A store that implements only kubelet's calls (by delegation): it gets the defaults."""

    def __init__(self) -> None:
        self.inner = MemoryState()
        self.set_machine_state_calls = 0

    def get_machine_state(self):
        return self.inner.get_machine_state()

    def get_memory_blocks(self, pod_uid, container_name):
        return self.inner.get_memory_blocks(pod_uid, container_name)

    def get_memory_assignments(self):
        return self.inner.get_memory_assignments()

    def get_pod_memory_blocks(self, pod_uid):
        return self.inner.get_pod_memory_blocks(pod_uid)

    def get_pod_memory_assignments(self):
        return self.inner.get_pod_memory_assignments()

    def set_machine_state(self, memory_map):
        self.set_machine_state_calls += 1
        self.inner.set_machine_state(memory_map)

    def set_memory_blocks(self, pod_uid, container_name, blocks):
        self.inner.set_memory_blocks(pod_uid, container_name, blocks)

    def set_memory_assignments(self, assignments):
        self.inner.set_memory_assignments(assignments)

    def set_pod_memory_blocks(self, pod_uid, blocks):
        self.inner.set_pod_memory_blocks(pod_uid, blocks)

    def set_pod_memory_assignments(self, assignments):
        self.inner.set_pod_memory_assignments(assignments)

    def delete(self, pod_uid, container_name):
        self.inner.delete(pod_uid, container_name)

    def delete_pod(self, pod_uid):
        self.inner.delete_pod(pod_uid)

    def clear_state(self):
        self.inner.clear_state()


def test_defaults_equal_the_overrides() -> None:
    default, own = DelegatingStore(), MemoryState()
    for store in (default, own):
        store.set_memory_assignments(ENTRIES)
        store.adopt_machine_state({0: NUMANodeState(0, {"memory": MemoryTable(1, 0, 1, 0, 1)}, None)})
    assert default.set_machine_state_calls == 1  # the default adopts by copying
    assert default.get_machine_state() == own.get_machine_state()
    assert default.assigned_containers() == own.assigned_containers() == [
        ("pod-a", "c"), ("pod-b", "c1"), ("pod-b", "c2")
    ]
    for pod, name in [("pod-b", "c1"), ("pod-b", "c2"), ("pod-b", "zz"), ("nope", "c")]:
        assert default.peek_memory_blocks(pod, name) == own.peek_memory_blocks(pod, name) == \
            own.get_memory_blocks(pod, name)


def test_both_stores_override_the_defaults() -> None:
    for store in (MemoryState, CheckpointState):
        assert store.assigned_containers is not State.assigned_containers
        assert store.adopt_machine_state is not State.adopt_machine_state
        assert store.peek_memory_blocks is not State.peek_memory_blocks


def test_a_store_missing_a_kubelet_call_cannot_be_built() -> None:
    class Incomplete(State):
        def get_machine_state(self):
            return {}

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


def test_the_reader_view_has_only_the_readers() -> None:
    store = MemoryState()
    view = StateReader(store)
    store.set_machine_state(MACHINE)
    store.set_memory_assignments(ENTRIES)
    assert view.get_machine_state() == store.get_machine_state()  # live
    assert view.get_memory_assignments() == store.get_memory_assignments()
    assert view.get_memory_blocks("pod-b", "c1") == [Block([0], "memory", 1)]
    assert view.get_pod_memory_blocks("pod-b") is None
    assert view.get_pod_memory_assignments() == {}
    writers = [name for name in dir(Writer) if not name.startswith("_")] + ["adopt_machine_state"]
    for name in writers + ["assigned_containers", "peek_memory_blocks"]:
        assert not hasattr(view, name), name
    readers = {name for name in dir(Reader) if name.startswith("get_")}
    assert readers == {name for name in dir(view) if not name.startswith("_")}
