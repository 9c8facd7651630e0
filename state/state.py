"""The State interface (kubelet's `state.Reader`, `state.Writer`, `state.State`).

Readers return copies: nothing outside a store can change its contents by mutating
a returned value.

`State` adds four calls kubelet does not have, each with the same result as kubelet's
calls, only cheaper: `assigned_containers` (the stored container keys without copying
their blocks), `peek_memory_blocks` (a container's blocks to look at, not copied),
`adopt_machine_state` (store a map without copying it) and `deferred_writes` (write a
persistent store once after a batch of changes). Their default implementations here are those combinations; a
store subclasses `State` explicitly, so it inherits the defaults (and cannot be
instantiated while a kubelet method is missing) and overrides them when it can do
better.

`StateReader` is the read-only view the memory manager hands out (kubelet's
`Manager.State()` returns a `state.Reader`).
"""
from __future__ import annotations

from contextlib import nullcontext

from abc import abstractmethod
from typing import ContextManager, Optional, Protocol, Sequence

from state.types import Block, ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments


class Reader(Protocol):
    """kubelet's state.Reader: every reader returns a copy."""

    @abstractmethod
    def get_machine_state(self) -> NUMANodeMap: ...

    @abstractmethod
    def get_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[list[Block]]: ...

    @abstractmethod
    def get_memory_assignments(self) -> ContainerMemoryAssignments: ...

    @abstractmethod
    def get_pod_memory_blocks(self, pod_uid: str) -> Optional[list[Block]]: ...

    @abstractmethod
    def get_pod_memory_assignments(self) -> PodMemoryAssignments: ...


class Writer(Protocol):
    """kubelet's state.Writer: every writer stores a copy."""

    @abstractmethod
    def set_machine_state(self, memory_map: Optional[NUMANodeMap]) -> None: ...

    @abstractmethod
    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Optional[list[Block]]) -> None: ...

    @abstractmethod
    def set_memory_assignments(self, assignments: Optional[ContainerMemoryAssignments]) -> None: ...

    @abstractmethod
    def set_pod_memory_blocks(self, pod_uid: str, blocks: Optional[list[Block]]) -> None: ...

    @abstractmethod
    def set_pod_memory_assignments(self, assignments: Optional[PodMemoryAssignments]) -> None: ...

    @abstractmethod
    def delete(self, pod_uid: str, container_name: str) -> None: ...

    @abstractmethod
    def delete_pod(self, pod_uid: str) -> None: ...

    @abstractmethod
    def clear_state(self) -> None: ...


class State(Reader, Writer, Protocol):
    """Everything a policy needs from its store: kubelet's State plus two cheaper calls."""

    def assigned_containers(self) -> list[tuple[str, str]]:
        """(pod UID, container name) of every container entry, pods then containers sorted.

        Default: from a copy of all assignments. Cost: O(stored blocks + c log c) for c
        containers; a store that can list its keys without copying should override it.
        """
        assignments = self.get_memory_assignments()
        return [(pod_uid, name) for pod_uid in sorted(assignments) for name in sorted(assignments[pod_uid] or {})]

    def peek_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[Sequence[Block]]:
        """A container's blocks (or None) for a caller that only looks at them and never keeps or
        changes them: a loop that skips containers with nothing to do (kubelet's walks over every
        earlier init container) then costs no copy per container.

        Default: get_memory_blocks (a copy); a store that can hand out its own list overrides it.
        """
        return self.get_memory_blocks(pod_uid, container_name)

    def adopt_machine_state(self, memory_map: Optional[NUMANodeMap]) -> None:
        """Store a NUMA node map handed over by a caller that never uses it again.

        What is stored equals what set_machine_state stores. Default: set_machine_state
        (a copy); a store that can keep the map itself should override it.
        """
        self.set_machine_state(memory_map)

    def deferred_writes(self) -> ContextManager[object]:
        """A context inside which a persistent store may write once at the end instead of after
        every change (same final contents). Default: nothing to defer (an in-memory store)."""
        return nullcontext(self)


class StateReader(Reader):
    """A read-only view of a store: only kubelet's Reader calls, each passed through."""

    __slots__ = ("_state",)

    def __init__(self, state: Reader):
        """A view of `state` (live: it shows the store's current content)."""
        self._state = state

    def get_machine_state(self) -> NUMANodeMap:
        """A copy of the NUMA node map."""
        return self._state.get_machine_state()

    def get_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[list[Block]]:
        """A copy of a container's blocks, or None."""
        return self._state.get_memory_blocks(pod_uid, container_name)

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        """A copy of all container assignments."""
        return self._state.get_memory_assignments()

    def get_pod_memory_blocks(self, pod_uid: str) -> Optional[list[Block]]:
        """A copy of a pod's pod-level blocks, or None."""
        return self._state.get_pod_memory_blocks(pod_uid)

    def get_pod_memory_assignments(self) -> PodMemoryAssignments:
        """A copy of all pod-level assignments."""
        return self._state.get_pod_memory_assignments()
