"""The kubelet memory manager (memory_manager.go): policy choice, state restore, container bookkeeping.

The Manager is the topology manager's memory hint provider. It owns the state
store (the checkpoint file `memory_manager_state`, or memory only), the container
ID map and the active-pods callback used to drop state of pods that are gone, and
delegates every decision to its policy (`None` or `Static`).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping, Optional, Sequence

from state import CHECKPOINT_FILE_NAME
from state.state import State, StateReader
from state.state_checkpoint import new_checkpoint_state
from state.state_mem import MemoryState, in_memory_copy
from state.types import Block
from kubeinputs.machine import MachineInfo
from kubeinputs.features import FeatureGates
from kubeinputs.pod import Container, Pod
from topologymanager.hint import TopologyHint
from topologymanager.observer import MEMORY_MANAGER, NO_OBSERVER, Observer

from memorymanager.container_map import ContainerMapError
from kubeinputs.goformat import go_map_string, go_quote
from memorymanager.memory_drift import PROC_IOMEM_PATH
from memorymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_STATIC,
    AffinityStore,
    EmptyPodSharedPoolError,
    MemoryManagerError,
    Policy,
)
from memorymanager.policy_manager import ActivePodsFunc, PolicyManager
from memorymanager.policy_none import new_policy_none
from memorymanager.policy_static import new_policy_static
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE
from kubeinputs.quantity import Quantity
from memorymanager.requests import is_restartable_init_container
from memorymanager.reserved_memory import get_system_reserved_memory

__all__ = [
    "ActivePodsFunc",
    "Manager",
    "MemoryManagerError",
    "EmptyPodSharedPoolError",
    "new_manager",
    "PLATFORM",
]

# kubelet's memoryManagerStateFileName; the name itself lives in state/.
# The simulated kubelet runs on Linux: Static is available, BestEffort (Windows only) is not.
PLATFORM = "linux"

def new_manager(
    policy_name: str,
    machine_info: MachineInfo,
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved_memory: Sequence,
    state_dir: Optional[str],
    affinity_store: AffinityStore,
    policy_options: Optional[Mapping[str, str]] = None,
    feature_gates: Optional[FeatureGates] = None,
    iomem_path: str = PROC_IOMEM_PATH,
    observer: Observer = NO_OBSERVER,
) -> "Manager":
    """kubelet's NewManager: pick and build the policy, with kubelet's validation order and errors.

    `state_dir` None keeps the state in memory only (no checkpoint file).
    `iomem_path` is where `memory-drift-tolerance: auto` reads the kernel image size.
    `observer` hears the manager's and its policy's events (`memorymanager.observer`).
    """
    gates = feature_gates if feature_gates is not None else FeatureGates.from_config({})
    options = dict(policy_options or {})
    affinity = PinnedAffinity(affinity_store)
    policy: Policy
    if policy_name == POLICY_NONE:
        if options:
            raise MemoryManagerError(
                f"policy {go_quote(POLICY_NONE)} does not support policy options {go_map_string(options)}"
            )
        policy = new_policy_none()
    elif policy_name == POLICY_STATIC:
        system_reserved = get_system_reserved_memory(machine_info, node_allocatable_reservation, reserved_memory)
        policy = new_policy_static(machine_info, system_reserved, affinity, gates, options, iomem_path, observer)
    elif policy_name == POLICY_BEST_EFFORT:
        if options:
            raise MemoryManagerError(
                f"policy {go_quote(POLICY_BEST_EFFORT)} does not support policy options {go_map_string(options)}"
            )
        raise MemoryManagerError(
            f"policy {go_quote(POLICY_BEST_EFFORT)} is not available for platform {go_quote(PLATFORM)}"
        )
    else:
        raise MemoryManagerError(f"unknown policy: {go_quote(policy_name)}")
    return Manager(policy, state_dir, gates, observer, affinity)


class PinnedAffinity:
    """The topology manager's stored hints as the policy reads them, except the hints pinned for one
    admission (`Manager.pinned_affinity`): memory placed beforehand (a DRA claim on a NUMA node) that
    kubelet's own Allocate then reserves. Nothing is pinned outside such an admission."""

    def __init__(self, store: AffinityStore) -> None:
        self.store = store
        self.pod_uid: Optional[str] = None
        self.pinned: dict[str, TopologyHint] = {}

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The pinned hint of a pinned container of the pinned pod, else the store's."""
        if pod_uid == self.pod_uid:
            hint = self.pinned.get(container_name)
            if hint is not None:
                return hint
        return self.store.get_affinity(pod_uid, container_name)


class Manager(PolicyManager[State]):
    """kubelet's memory manager. Build with `new_manager`, then `start` before anything else (the state
    store, stale state, hint and Allocate calls: `policy_manager.PolicyManager`)."""

    PROVIDER = MEMORY_MANAGER

    def __init__(self, policy: Policy, state_dir: Optional[str], feature_gates: FeatureGates,
                 observer: Observer = NO_OBSERVER, affinity: Optional[PinnedAffinity] = None):
        super().__init__(policy, state_dir, feature_gates, observer)
        self._affinity = affinity  # what the policy reads the stored hints through (None: no pinning)
        self._allocatable_memory: list[Block] = []

    def _new_state(self) -> State:
        """The checkpoint-backed store, or an in-memory one when there is no state directory."""
        if self.state_dir is None:
            return MemoryState()
        return new_checkpoint_state(
            self.state_dir,
            CHECKPOINT_FILE_NAME,
            self.policy.name(),
            pod_level_resource_managers=self.feature_gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE),
            ops=self.file_ops,
        )

    def _in_memory_copy(self, state: State) -> State:
        """The state in memory (StateError and MemoryManagerError of start come from the store and policy)."""
        return state if isinstance(state, MemoryState) else in_memory_copy(state)

    def _not_started(self) -> Exception:
        return MemoryManagerError("memory manager is not started")

    def _started(self, state: State) -> None:
        """Allocatable memory, computed once at start."""
        self._allocatable_memory = self.policy.get_allocatable_memory(state)

    @contextmanager
    def pinned_affinity(self, pod_uid: str, hints: Mapping[str, TopologyHint]) -> Iterator[None]:
        """Within: the policy reads `hints` (container name -> hint) as the stored affinity of those
        containers of pod `pod_uid`, whatever the topology manager stored (kubelet's rules still apply
        to the mask: a mask too small is widened, one mixing single- and cross-NUMA groups refused)."""
        if self._affinity is None:
            raise MemoryManagerError("this memory manager cannot pin affinities (build it with new_manager)")
        self._affinity.pod_uid, self._affinity.pinned = pod_uid, dict(hints)
        try:
            yield
        finally:
            self._affinity.pod_uid, self._affinity.pinned = None, {}

    # ----- container lifecycle ------------------------------------------------------------------

    def add_container(self, pod: Pod, container: Container, container_id: str) -> None:
        """Register the container ID, then release every regular init container declared before
        this container (they have finished); sidecars are never released here.

        kubelet releases each earlier init container on every call, so a pod of n init containers
        makes n^2/2 release calls; one that holds no blocks and no ID, in a pod without pod-level
        blocks, has nothing to release and is skipped without the calls (same result, cheaper).
        """
        state = self._started_state()
        self.container_map.add(pod.uid, container.name, container_id)
        pod_level = state.get_pod_memory_blocks(pod.uid) is not None
        for init_container in pod.init_containers:
            if init_container.name == container.name:
                break
            if is_restartable_init_container(init_container):
                continue
            if (not pod_level and state.peek_memory_blocks(pod.uid, init_container.name) is None
                    and not self.container_map.has_ref(pod.uid, init_container.name)):
                continue  # released already: nothing left to release
            self._policy_remove_container_by_ref(pod.uid, init_container.name)

    def remove_container(self, container_id: str) -> None:
        """Release a container's memory by ID; an unknown ID is not an error (kubelet logs it)."""
        self._started_state()
        try:
            pod_uid, container_name = self.container_map.get_container_ref(container_id)
        except ContainerMapError:
            return
        self._policy_remove_container_by_ref(pod_uid, container_name)

    # ----- readers ------------------------------------------------------------------------------

    def get_memory_numa_nodes(self, pod: Pod, container: Container) -> Optional[list[int]]:
        """NUMA nodes of the container's blocks, ascending; None when it has none."""
        nodes: set[int] = set()
        for block in self._started_state().get_memory_blocks(pod.uid, container.name) or []:
            nodes.update(block.numa_affinity or [])
        return sorted(nodes) if nodes else None

    def get_allocatable_memory(self) -> list[Block]:
        """Allocatable memory per (node, resource), as computed once at start."""
        return [Block(list(b.numa_affinity or []), b.type, b.size) for b in self._allocatable_memory]

    def get_memory(self, pod_uid: str, container_name: str) -> Optional[list[Block]]:
        """The container's blocks (None if it has none)."""
        return self._started_state().get_memory_blocks(pod_uid, container_name)

    def get_pod_memory(self, pod_uid: str) -> Optional[list[Block]]:
        """The pod-level blocks (PodLevelResourceManagers), None if none."""
        return self._started_state().get_pod_memory_blocks(pod_uid)

    def state(self) -> StateReader:
        """A read-only view of the state store (kubelet's State() returns a state.Reader)."""
        return StateReader(self._started_state())
