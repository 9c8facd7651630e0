"""The kubelet CPU manager (cpu_manager.go): policy choice, state restore, container bookkeeping.

The Manager is the topology manager's `cpu` hint provider (registered before the memory
manager, as kubelet registers it). It owns the state store (the checkpoint file
`cpu_manager_state`, or memory only), the container ID map and the active-pods callback used
to drop state of pods that are gone, and delegates every decision to its policy (`none` or
`static`). kubelet's reconcile loop (writing cpusets to running containers through the CRI)
is not simulated: the state is the answer.
"""
from __future__ import annotations

from typing import Mapping, Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import Quantity
from kubeinputs.pod import Container, Pod
from memorymanager.container_map import ContainerMapError
from memorymanager.policy_manager import ActivePodsFunc, PolicyManager  # noqa: F401 (ActivePodsFunc: kubelet's)
from topologymanager.observer import CPU_MANAGER, NO_OBSERVER, Observer

from cpumanager.errors import CPUManagerError
from cpumanager.policy import POLICY_NONE, POLICY_STATIC, AffinityStore, Policy
from cpumanager.policy_none import new_policy_none
from cpumanager.policy_static import StaticPolicy, new_policy_static
from cpumanager.reserved_cpus import num_reserved_cpus
from cpumanager.state import CHECKPOINT_FILE_NAME
from cpumanager.state.checkpoint import encode_checkpoint
from cpumanager.state.state import State, StateReader
from cpumanager.state.state_checkpoint import new_checkpoint_state
from cpumanager.state.state_mem import MemoryState, in_memory_copy
from cpumanager.topology import CPUTopology, discover

__all__ = ["ActivePodsFunc", "Manager", "CPUManagerError", "new_manager"]

def new_manager(
    policy_name: str,
    policy_options: Optional[Mapping[str, str]],
    machine_info: MachineInfo,
    specific_cpus: CPUSet,
    node_allocatable_reservation: Mapping[str, Quantity],
    state_dir: Optional[str],
    affinity: Optional[AffinityStore],
    feature_gates: Optional[FeatureGates] = None,
    observer: Observer = NO_OBSERVER,
) -> "Manager":
    """kubelet's NewManager: discover the CPU topology, then build the policy, with kubelet's errors.

    `specific_cpus` is `reservedSystemCPUs` already checked by `reserved_cpus.get_reserved_cpus`;
    `node_allocatable_reservation` is kubeinputs.kubelet_config.node_allocatable_reservation (its
    `cpu` sizes the reserved set when no list is given). `state_dir` None keeps the state in memory.
    `observer` hears the manager's and its policy's events (`topologymanager.observer`).
    """
    gates = feature_gates if feature_gates is not None else FeatureGates()
    try:
        topology = discover(machine_info)
    except CPUManagerError:
        if policy_name != POLICY_NONE:
            raise
        # kubelet discovers first for every policy and refuses a machine reporting no CPU ("could not detect
        # number of cpus"), which no real node reports; a hand-written machine without CPUs (valid for the
        # memory manager, as scenario files before 1.2 have them) keeps starting with the none policy, which
        # reads nothing of the topology
        topology = CPUTopology(0, 0, 0, {})
    policy: Policy
    if policy_name == POLICY_NONE:
        try:
            policy = new_policy_none(policy_options)
        except CPUManagerError as err:
            raise CPUManagerError(f"new none policy error: {err}") from None
    elif policy_name == POLICY_STATIC:
        count = num_reserved_cpus(node_allocatable_reservation)
        try:
            policy = new_policy_static(topology, count, specific_cpus, affinity, policy_options, gates, observer)
        except CPUManagerError as err:
            raise CPUManagerError(f"new static policy error: {err}") from None
    else:
        raise CPUManagerError(f'unknown policy: "{policy_name}"')
    return Manager(policy, topology, state_dir, gates, observer)


class Manager(PolicyManager[State]):
    """kubelet's CPU manager. Build with `new_manager`, then `start` before anything else (the state
    store, stale state, hint and Allocate calls: `memorymanager.policy_manager.PolicyManager`)."""

    PROVIDER = CPU_MANAGER

    def __init__(self, policy: Policy, topology: CPUTopology, state_dir: Optional[str], feature_gates: FeatureGates,
                 observer: Observer = NO_OBSERVER):
        super().__init__(policy, state_dir, feature_gates, observer)
        self.topology = topology
        self._allocatable_cpus = CPUSet()
        self._all_cpus = topology.details().cpus()

    def _new_state(self) -> State:
        """The checkpoint-backed store, or an in-memory one when there is no state directory."""
        if self.state_dir is None:
            return MemoryState()
        return new_checkpoint_state(
            self.state_dir, CHECKPOINT_FILE_NAME, self.policy.name(),
            pod_level_resource_managers=self.feature_gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE),
            ops=self.file_ops,
        )

    def _in_memory_copy(self, state: State) -> State:
        return state if isinstance(state, MemoryState) else in_memory_copy(state)

    def _not_started(self) -> Exception:
        return CPUManagerError("cpu manager is not started")

    def _started(self, state: State) -> None:
        """The allocatable CPUs, computed once at start (CPUManagerError, CPUStateError come from the
        policy and the store)."""
        self._allocatable_cpus = self.policy.get_allocatable_cpus(state)

    # ----- container lifecycle ------------------------------------------------------------------

    def add_container(self, pod: Pod, container: Container, container_id: str) -> None:
        """Register the container ID (the CPU manager releases nothing here: a finished init
        container's CPUs go back when the container is removed or its pod goes stale)."""
        self._started_state()
        self.container_map.add(pod.uid, container.name, container_id)

    def remove_container(self, container_id: str) -> None:
        """Release a container's CPUs by ID; an unknown ID is not an error."""
        self._started_state()
        try:
            pod_uid, container_name = self.container_map.get_container_ref(container_id)
        except ContainerMapError:
            return
        self.policy.remove_container(self._started_state(), pod_uid, container_name)
        self.container_map.remove_by_container_id(container_id)

    # ----- readers ------------------------------------------------------------------------------

    def get_cpus(self, pod_uid: str, container_name: str) -> Optional[CPUSet]:
        """The container's exclusive CPUs, None for a container in the shared pool."""
        return self._started_state().get_cpu_set(pod_uid, container_name)

    def get_exclusive_cpus(self, pod_uid: str, container_name: str) -> CPUSet:
        """GetExclusiveCPUs (PodResources cpu_ids): the container's exclusive CPUs, empty if none."""
        found = self._started_state().get_cpu_set(pod_uid, container_name)
        return CPUSet() if found is None else found

    def get_pod_cpus(self, pod_uid: str) -> Optional[CPUSet]:
        """The pod-level set (PodLevelResourceManagers), None if none."""
        return self._started_state().get_pod_cpu_set(pod_uid)

    def get_cpu_affinity(self, pod_uid: str, container_name: str) -> CPUSet:
        """GetCPUAffinity: the CPUs the container may run on (its exclusive set, else the shared pool)."""
        return self._started_state().get_cpu_set_or_default(pod_uid, container_name)

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool (the checkpoint's defaultCpuSet)."""
        return self._started_state().get_default_cpu_set()

    def get_allocatable_cpus(self) -> CPUSet:
        """GetAllocatableCPUs: what exclusive allocations can take, as computed at start (empty under `none`)."""
        return self._allocatable_cpus

    def get_all_cpus(self) -> CPUSet:
        """GetAllCPUs: every CPU of the machine's topology."""
        return self._all_cpus

    def reserved_cpus(self) -> CPUSet:
        """The reserved CPUs of the static policy (empty under `none`)."""
        return self.policy.reserved_cpus if isinstance(self.policy, StaticPolicy) else CPUSet()

    def checkpoint_bytes(self) -> bytes:
        """The bytes `cpu_manager_state` holds for the state now, as kubelet writes them (also for a state kept
        in memory): what a restart from a copy of this node reads. Pod-level sets only under their gate."""
        state = self._started_state()
        pods = state.get_pod_cpu_assignments() if self.feature_gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE) else {}
        return encode_checkpoint(self.policy.name(), state.get_default_cpu_set(), state.get_cpu_assignments(), pods)

    def state(self) -> StateReader:
        """A read-only view of the state store (kubelet's State() returns a state.Reader)."""
        return StateReader(self._started_state())
