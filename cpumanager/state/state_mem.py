"""The in-memory store (kubelet's cpumanager state_mem.go)."""
from __future__ import annotations

from typing import Optional

from kubeinputs.cpuset import CPUSet

from cpumanager.state.state import ContainerCPUAssignments, PodCPUAssignments, Reader, State, clone_assignments


class MemoryState(State):
    """Assignments, pod-level sets and the shared pool, held in dicts."""

    def __init__(self) -> None:
        """An empty state: no assignment, an empty shared pool."""
        self._assignments: ContainerCPUAssignments = {}
        self._pod_assignments: PodCPUAssignments = {}
        self._default = CPUSet()

    # readers

    def get_cpu_set(self, pod_uid: str, container_name: str) -> Optional[CPUSet]:
        """The container's exclusive CPUs, or None."""
        return self._assignments.get(pod_uid, {}).get(container_name)

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool."""
        return self._default

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs, else the shared pool."""
        found = self.get_cpu_set(pod_uid, container_name)
        return self._default if found is None else found

    def get_cpu_assignments(self) -> ContainerCPUAssignments:
        """A copy of every assignment."""
        return clone_assignments(self._assignments)

    def get_pod_cpu_set(self, pod_uid: str) -> Optional[CPUSet]:
        """The pod-level set, or None."""
        return self._pod_assignments.get(pod_uid)

    def get_pod_cpu_assignments(self) -> PodCPUAssignments:
        """A copy of every pod-level set."""
        return dict(self._pod_assignments)

    def assigned_containers(self) -> list[tuple[str, str]]:
        """(pod UID, container name) of every assignment, sorted. Cost: O(c log c)."""
        return [(pod, name) for pod in sorted(self._assignments) for name in sorted(self._assignments[pod])]

    # writers

    def set_cpu_set(self, pod_uid: str, container_name: str, cpuset: CPUSet) -> None:
        """Store a container's exclusive CPUs."""
        self._assignments.setdefault(pod_uid, {})[container_name] = cpuset

    def set_default_cpu_set(self, cpuset: CPUSet) -> None:
        """Store the shared pool."""
        self._default = cpuset

    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None:
        """Replace every assignment (a copy is kept)."""
        self._assignments = clone_assignments(assignments)

    def set_pod_cpu_set(self, pod_uid: str, cpuset: CPUSet) -> None:
        """Store a pod-level set."""
        self._pod_assignments[pod_uid] = cpuset

    def set_pod_cpu_assignments(self, assignments: PodCPUAssignments) -> None:
        """Replace every pod-level set (a copy is kept)."""
        self._pod_assignments = dict(assignments or {})

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container's assignment; a pod without containers left is dropped."""
        containers = self._assignments.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._assignments[pod_uid]

    def delete_pod(self, pod_uid: str) -> None:
        """Forget a pod-level set (container assignments stay)."""
        self._pod_assignments.pop(pod_uid, None)

    def clear_state(self) -> None:
        """Empty everything."""
        self._assignments = {}
        self._pod_assignments = {}
        self._default = CPUSet()


def in_memory_copy(state: Reader) -> MemoryState:
    """A store held in memory with `state`'s content (shared pool, assignments, pod-level sets): what a
    copy of a node keeps, never reaching the original's checkpoint file. Cost: O(state)."""
    copy = MemoryState()
    copy.set_default_cpu_set(state.get_default_cpu_set())
    copy.set_cpu_assignments(state.get_cpu_assignments())
    copy.set_pod_cpu_assignments(state.get_pod_cpu_assignments())
    return copy
