"""The in-memory state store (kubelet's state_mem.go).

Every reader returns a copy and every writer stores a copy, so nothing outside the store
can change its content. The copies follow kubelet's Clone functions, which normalise nil
values: a stored machine state's nil `cells` reads back as [], nil block lists as [].
"""
from __future__ import annotations

from typing import Optional, Sequence

from state.state import Reader, State
from state.types import (
    Block,
    ContainerMemoryAssignments,
    NUMANodeMap,
    PodEntry,
    PodMemoryAssignments,
    clone_assignments,
    clone_blocks,
    clone_machine_state,
    clone_pod_assignments,
)


class MemoryState(State):
    """kubelet's stateMemory: machine state, container assignments, pod-level assignments."""

    def __init__(self) -> None:
        """An empty state."""
        self._machine_state: NUMANodeMap = {}
        self._assignments: ContainerMemoryAssignments = {}
        self._pod_assignments: PodMemoryAssignments = {}

    # readers

    def get_machine_state(self) -> NUMANodeMap:
        """A copy of the NUMA node map (NUMANodeMap.Clone)."""
        return clone_machine_state(self._machine_state)

    def get_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[list[Block]]:
        """A copy of the container's blocks, or None when the container has no entry."""
        containers = self._assignments.get(pod_uid)
        if containers is None or container_name not in containers:
            return None
        return clone_blocks(containers[container_name])

    def peek_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[Sequence[Block]]:
        """The container's stored blocks themselves (read-only: see State.peek_memory_blocks), or None."""
        containers = self._assignments.get(pod_uid)
        return None if containers is None else containers.get(container_name)

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        """A copy of all container assignments."""
        return clone_assignments(self._assignments)

    def assigned_containers(self) -> list[tuple[str, str]]:
        """(pod UID, container name) of every container entry, pods then containers sorted
        (keys only: nothing to copy). Cost: O(c log c) for c containers."""
        return [
            (pod_uid, name) for pod_uid in sorted(self._assignments) for name in sorted(self._assignments[pod_uid] or {})
        ]

    def get_pod_memory_blocks(self, pod_uid: str) -> Optional[list[Block]]:
        """A copy of the pod-level blocks, or None when the pod has no pod entry."""
        entry = self._pod_assignments.get(pod_uid)
        if entry is None:
            return None
        return clone_blocks(entry.memory_blocks)

    def get_pod_memory_assignments(self) -> PodMemoryAssignments:
        """A copy of all pod-level assignments."""
        return clone_pod_assignments(self._pod_assignments)

    # writers

    def set_machine_state(self, memory_map: Optional[NUMANodeMap]) -> None:
        """Store a copy of the NUMA node map."""
        self._machine_state = clone_machine_state(memory_map)

    def adopt_machine_state(self, memory_map: Optional[NUMANodeMap]) -> None:
        """Store a NUMA node map without copying it, for a caller that hands the map over and
        never uses it again (the static policy saving the map it has just changed). What is
        stored equals what set_machine_state would store (nil `cells` become []).
        Cost: O(nodes), against O(nodes * tables) for set_machine_state."""
        if memory_map is None:
            memory_map = {}
        for node in memory_map.values():
            if node is not None and node.cells is None:
                node.cells = []
        self._machine_state = memory_map

    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Optional[list[Block]]) -> None:
        """Store a copy of one container's blocks (creating the pod's entry)."""
        self._assignments.setdefault(pod_uid, {})[container_name] = clone_blocks(blocks)

    def set_memory_assignments(self, assignments: Optional[ContainerMemoryAssignments]) -> None:
        """Replace all container assignments by a copy."""
        self._assignments = clone_assignments(assignments)

    def set_pod_memory_blocks(self, pod_uid: str, blocks: Optional[list[Block]]) -> None:
        """Store a copy of one pod's pod-level blocks."""
        self._pod_assignments[pod_uid] = PodEntry(memory_blocks=clone_blocks(blocks))

    def set_pod_memory_assignments(self, assignments: Optional[PodMemoryAssignments]) -> None:
        """Replace all pod-level assignments by a copy."""
        self._pod_assignments = clone_pod_assignments(assignments)

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget one container; the pod's key goes when its last container goes."""
        containers = self._assignments.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._assignments[pod_uid]

    def delete_pod(self, pod_uid: str) -> None:
        """Forget a pod's pod-level blocks (its container entries stay)."""
        self._pod_assignments.pop(pod_uid, None)

    def clear_state(self) -> None:
        """Empty machine state and assignments."""
        self._machine_state = {}
        self._assignments = {}
        self._pod_assignments = {}


def in_memory_copy(state: Reader) -> MemoryState:
    """A store held in memory with a copy of `state`'s content (machine state, container and pod-level
    assignments): what a copy of a node keeps, never reaching the original's checkpoint file.
    Cost: O(state)."""
    copy = MemoryState()
    copy.set_machine_state(state.get_machine_state())
    copy.set_memory_assignments(state.get_memory_assignments())
    copy.set_pod_memory_assignments(state.get_pod_memory_assignments())
    return copy
