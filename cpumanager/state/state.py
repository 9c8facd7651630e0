"""The CPU manager's State interface (kubelet's cpumanager `state.Reader`, `state.writer`, `state.State`).

Sets are immutable `CPUSet`s, so readers hand out the stored sets themselves; maps are copied.
`get_cpu_set` returns None where kubelet returns `(CPUSet{}, false)`.

`State` adds two calls kubelet does not have, with the same results as kubelet's, only cheaper:
`assigned_containers` (the stored (pod, container) keys without copying the sets) and
`deferred_writes` (write a persistent store once after a batch of changes).
"""
from __future__ import annotations

from abc import abstractmethod
from contextlib import nullcontext
from typing import ContextManager, Optional, Protocol

from kubeinputs.cpuset import CPUSet

ContainerCPUAssignments = dict[str, dict[str, CPUSet]]
"""pod UID -> container name -> exclusive CPUs."""

PodCPUAssignments = dict[str, CPUSet]
"""pod UID -> the pod-level CPU set (KEP-5526, PodLevelResourceManagers)."""


def clone_assignments(assignments: Optional[ContainerCPUAssignments]) -> ContainerCPUAssignments:
    """ContainerCPUAssignments.Clone (a nil map becomes empty)."""
    return {pod: dict(containers) for pod, containers in (assignments or {}).items()}


class Reader(Protocol):
    """kubelet's cpumanager state.Reader."""

    @abstractmethod
    def get_cpu_set(self, pod_uid: str, container_name: str) -> Optional[CPUSet]: ...

    @abstractmethod
    def get_default_cpu_set(self) -> CPUSet: ...

    @abstractmethod
    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet: ...

    @abstractmethod
    def get_cpu_assignments(self) -> ContainerCPUAssignments: ...

    @abstractmethod
    def get_pod_cpu_set(self, pod_uid: str) -> Optional[CPUSet]: ...

    @abstractmethod
    def get_pod_cpu_assignments(self) -> PodCPUAssignments: ...


class Writer(Protocol):
    """kubelet's cpumanager state.writer."""

    @abstractmethod
    def set_cpu_set(self, pod_uid: str, container_name: str, cpuset: CPUSet) -> None: ...

    @abstractmethod
    def set_default_cpu_set(self, cpuset: CPUSet) -> None: ...

    @abstractmethod
    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None: ...

    @abstractmethod
    def set_pod_cpu_set(self, pod_uid: str, cpuset: CPUSet) -> None: ...

    @abstractmethod
    def set_pod_cpu_assignments(self, assignments: PodCPUAssignments) -> None: ...

    @abstractmethod
    def delete(self, pod_uid: str, container_name: str) -> None: ...

    @abstractmethod
    def delete_pod(self, pod_uid: str) -> None: ...

    @abstractmethod
    def clear_state(self) -> None: ...


class State(Reader, Writer, Protocol):
    """Everything a policy needs from its store: kubelet's State plus two cheaper calls."""

    def assigned_containers(self) -> list[tuple[str, str]]:
        """(pod UID, container name) of every assignment, pods then containers sorted. Default: from
        a copy of all assignments; a store that can list its keys should override it."""
        assignments = self.get_cpu_assignments()
        return [(pod, name) for pod in sorted(assignments) for name in sorted(assignments[pod])]

    def deferred_writes(self) -> ContextManager[object]:
        """A context inside which a persistent store writes once at the end (same final contents).
        Default: nothing to defer (an in-memory store)."""
        return nullcontext(self)


class StateReader(Reader):
    """A read-only view of a store: only kubelet's Reader calls, each passed through."""

    __slots__ = ("_state",)

    def __init__(self, state: Reader):
        """A live view of `state`."""
        self._state = state

    def get_cpu_set(self, pod_uid: str, container_name: str) -> Optional[CPUSet]:
        """The container's exclusive CPUs, or None."""
        return self._state.get_cpu_set(pod_uid, container_name)

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool."""
        return self._state.get_default_cpu_set()

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs, else the shared pool."""
        return self._state.get_cpu_set_or_default(pod_uid, container_name)

    def get_cpu_assignments(self) -> ContainerCPUAssignments:
        """A copy of every assignment."""
        return self._state.get_cpu_assignments()

    def get_pod_cpu_set(self, pod_uid: str) -> Optional[CPUSet]:
        """The pod-level set, or None."""
        return self._state.get_pod_cpu_set(pod_uid)

    def get_pod_cpu_assignments(self) -> PodCPUAssignments:
        """A copy of every pod-level set."""
        return self._state.get_pod_cpu_assignments()
