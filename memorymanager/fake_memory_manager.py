"""The memory manager kubelet uses when the memory manager is switched off (fake_memory_manager.go).

Every call is accepted and does nothing: no state is restored or written, nothing is
pinned, no container is tracked. The hint calls answer an empty hint map (no resource
at all: "no preference" for the topology manager), the block readers answer empty
lists, and the state reader shows an empty in-memory store. kubelet's fake logs each
call; this one stays silent.
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import ContextManager, Mapping, Optional, Union

from kubeinputs.pod import Container, Pod
from state.state import StateReader
from state.state_mem import MemoryState
from state.types import Block
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints

from memorymanager.container_map import ContainerMap
from memorymanager.manager import ActivePodsFunc
from memorymanager.policy import POLICY_NONE
from memorymanager.policy_none import NonePolicy, new_policy_none


class FakeManager:
    """kubelet's fakeManager: the Manager surface with every call a no-op or an empty answer."""

    def __init__(self) -> None:
        """An empty in-memory state (never written) behind the reader, and the None policy."""
        self.policy: NonePolicy = new_policy_none()
        self._state = MemoryState()

    def start(
        self,
        active_pods: ActivePodsFunc,
        initial_containers: Union[ContainerMap, Mapping[str, tuple[str, str]], None] = None,
    ) -> None:
        """Nothing to restore or validate."""

    def policy_name(self) -> str:
        """`None`: kubelet's fake reports the None policy."""
        return POLICY_NONE

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """An empty hint map (not nil), as kubelet's fake answers."""
        return {}

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """An empty hint map (not nil), as kubelet's fake answers."""
        return {}

    def allocate(self, pod: Pod, container: Container) -> None:
        """Admits every container, pinning nothing."""

    def allocate_pod(self, pod: Pod) -> None:
        """Admits every pod, pinning nothing."""

    def add_container(self, pod: Pod, container: Container, container_id: str) -> None:
        """No container ID is remembered."""

    def remove_container(self, container_id: str) -> None:
        """Nothing to release; never an error."""

    def get_memory_numa_nodes(self, pod: Pod, container: Container) -> Optional[list[int]]:
        """None: no container has memory on any NUMA node."""
        return None

    def get_allocatable_memory(self) -> list[Block]:
        """An empty list: nothing is managed."""
        return []

    def get_memory(self, pod_uid: str, container_name: str) -> Optional[list[Block]]:
        """An empty list (not None), as kubelet's fake answers."""
        return []

    def get_pod_memory(self, pod_uid: str) -> Optional[list[Block]]:
        """An empty list, like get_memory (kubelet's fake has no pod-level reader)."""
        return []

    def deferred_writes(self):
        """No checkpoint: nothing to defer."""
        return nullcontext()

    def keep_in_memory(self) -> None:
        """Nothing ever reaches a file."""

    def pinned_affinity(self, pod_uid: str, hints: Mapping[str, TopologyHint]) -> ContextManager[None]:
        """Nothing is pinned: nothing to read an affinity for."""
        return nullcontext()

    def state(self) -> StateReader:
        """A read-only view of the empty in-memory state."""
        return StateReader(self._state)


def new_fake_manager() -> FakeManager:
    """kubelet's NewFakeManager: the manager used when the memory manager feature is off."""
    return FakeManager()
