"""The `static` CPU-manager policy: exclusive CPUs for Guaranteed containers with integral requests.

kubelet's policy_static.go (v1.37). The CPUs of the machine fall in these sets:

* SHARED (the state's default cpuset): every CPU not exclusively assigned; Burstable,
  BestEffort and non-integral Guaranteed containers run here;
* RESERVED: `reservedSystemCPUs`, or `ceil(systemReserved.cpu + kubeReserved.cpu)` CPUs taken by
  takeByTopology from the lowest cores; never given exclusively (with `strict-cpu-reservation`
  not even in the shared pool);
* ASSIGNABLE = SHARED - RESERVED: where exclusive CPUs come from;
* EXCLUSIVE: per container, stored as assignments.

Allocation takes the CPUs of the NUMA nodes (or, with align-by-socket, the sockets) of the
topology manager's merged hint first, then any others, with takeByTopology; CPUs of the pod's
finished init containers are re-used by later containers. Every error carries kubelet's text.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from kubeinputs.pod import Container, Pod
from topologymanager import bitmask
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import (ALREADY_PRESENT, CPU_MANAGER, NO_OBSERVER, PHYSICAL_CPU, POD_LEVEL_RESOURCES,
                                      UNCORE_CACHE, Observer)
from topologymanager.scope import CONTAINER_TOPOLOGY_SCOPE

from cpumanager.alignment import Allocation
from cpumanager.cpu_assignment import (CPU_SORTING_STRATEGY_PACKED, CPU_SORTING_STRATEGY_SPREAD, TakeStep,
                                       take_by_topology_numa_distributed, take_by_topology_numa_packed)
from cpumanager.errors import CPUManagerError
from cpumanager.hints import generate_cpu_topology_hints
from cpumanager.policy import POLICY_STATIC, AffinityStore
from cpumanager.policy_options import StaticPolicyOptions, new_static_policy_options, validate_static_policy_options
from cpumanager.requests import (guaranteed_cpus, is_restartable_init_container, pod_guaranteed_cpus,
                                 pod_level_managed, skips_pod_level)
from cpumanager.state.state import State
from cpumanager.topology import CPUTopology

ERROR_SMT_ALIGNMENT = "SMTAlignmentError"
EMPTY_POD_SHARED_POOL_REASON = "EmptyPodSharedPoolError"
CPU = "cpu"
# Why Allocate leaves a container alone (`Observer.skipped`): no integral request of a Guaranteed pod.
SHARED_POOL = "container belongs in the shared pool"
# plan_cpus' phases (TakeStep.phase): CPUs of the merged hint's NUMA nodes (or sockets) first, then any.
PHASE_ALIGNED = "aligned"
PHASE_REST = "rest"


def _phase(steps: Optional[list[TakeStep]], phase: str) -> None:
    """Mark the steps recorded since the last phase with `phase`."""
    for step in steps or ():
        if not step.phase:
            step.phase = phase


class SMTAlignmentError(CPUManagerError):
    """full-pcpus-only refused a request (kubelet's SMTAlignmentError; admission reason `SMTAlignmentError`)."""

    error_type = ERROR_SMT_ALIGNMENT

    def __init__(self, requested_cpus: int, cpus_per_core: int, available_physical_cpus: int = 0,
                 caused_by_physical_cpus: bool = False):
        self.requested_cpus = requested_cpus
        self.cpus_per_core = cpus_per_core
        self.available_physical_cpus = available_physical_cpus
        self.caused_by_physical_cpus = caused_by_physical_cpus
        if caused_by_physical_cpus:
            message = (f"SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                       f"{available_physical_cpus}, requested CPUs = {requested_cpus}, CPUs per core = {cpus_per_core}")
        else:
            message = f"SMT Alignment Error: requested {requested_cpus} cpus not multiple cpus per core = {cpus_per_core}"
        super().__init__(message)

    def type(self) -> str:
        """The admission failure reason."""
        return ERROR_SMT_ALIGNMENT


class EmptyPodSharedPoolError(CPUManagerError):
    """KEP-5526: a pod-level CPU budget leaves its shared pool empty (reason `EmptyPodSharedPoolError`)."""

    error_type = EMPTY_POD_SHARED_POOL_REASON


def check_state_cpus(default: CPUSet, assignments: Mapping[str, Mapping[str, CPUSet]], pod_sets: Iterable[CPUSet],
                     all_cpus: CPUSet) -> None:
    """validateState's checks of a non-empty shared pool that need only the machine's CPUs: no assignment
    overlaps the pool, and the pool with every assignment (and pod-level set) is exactly the machine's
    CPUs. Pods and containers in sorted order (Go's map order is random). Raises CPUManagerError."""
    for pod in sorted(assignments):
        for container in sorted(assignments[pod]):
            cset = assignments[pod][container]
            if not default.intersection(cset).is_empty():
                raise CPUManagerError(f"pod: {pod}, container: {container} cpuset: {_q(cset)} overlaps with "
                                      f"default cpuset {_q(default)}")
    known = default.union(*(c for containers in assignments.values() for c in containers.values()))
    known = known.union(*pod_sets)
    if not known.equals(all_cpus):
        raise CPUManagerError(f"current set of available CPUs {_q(all_cpus)} doesn't match with CPUs in state "
                              f"{_q(known)}")


class StaticPolicy:
    """kubelet's static policy. Build it with `new_policy_static`."""

    def __init__(self, topology: CPUTopology, affinity: Optional[AffinityStore], options: StaticPolicyOptions,
                 feature_gates: FeatureGates, observer: Observer = NO_OBSERVER):
        self.topology = topology
        self.affinity = affinity
        self.options = options
        self.observer = observer  # hears the early returns, pinning and alignment (topologymanager.observer)
        self.feature_gates = feature_gates
        self.cpu_group_size = topology.cpus_per_core()
        self.reserved_cpus = CPUSet()
        self.reserved_physical_cpus = CPUSet()
        # pod UID -> CPUs of its finished regular init containers that later containers may take
        self.cpus_to_reuse: dict[str, CPUSet] = {}

    def name(self) -> str:
        """`static`."""
        return POLICY_STATIC

    # ----- start / validateState --------------------------------------------------------------

    def start(self, state: State) -> None:
        """Validate the restored state (kubelet then refuses to start: "invalid state, please drain
        node and remove policy state file")."""
        self.validate_state(state)

    def _all_cpus(self) -> CPUSet:
        """Every CPU the shared pool and the assignments must cover (reserved ones left out when strict)."""
        all_cpus = self.topology.details().cpus()
        if self.options.strict_cpu_reservation:
            all_cpus = all_cpus.difference(self.reserved_cpus)
        return all_cpus

    def validate_state(self, state: State) -> None:
        """validateState: an empty state is initialised to every CPU; otherwise the reserved CPUs must be
        in (or, strict, out of) the shared pool, no assignment may overlap it, and the pool plus every
        assignment must be exactly the machine's CPUs. Pods and containers are checked in sorted order
        (Go's map order is random)."""
        assignments = state.get_cpu_assignments()
        default = state.get_default_cpu_set()
        all_cpus = self._all_cpus()
        if default.is_empty():
            if assignments:
                raise CPUManagerError("default cpuset cannot be empty")
            state.set_default_cpu_set(all_cpus)
            return
        reserved = self.reserved_cpus
        if self.options.strict_cpu_reservation:
            overlap = reserved.intersection(default)
            if not overlap.is_empty():
                raise CPUManagerError(f"some of strictly reserved cpus: {_q(overlap)} are present in "
                                      f"defaultCpuSet: {_q(default)}")
        elif not reserved.intersection(default).equals(reserved):
            raise CPUManagerError(f"not all reserved cpus: {_q(reserved)} are present in defaultCpuSet: {_q(default)}")
        pod_sets = state.get_pod_cpu_assignments().values() if pod_level_managed_gate(self.feature_gates) else ()
        check_state_cpus(default, assignments, pod_sets, all_cpus)

    # ----- the sets -----------------------------------------------------------------------------

    def get_allocatable_cpus(self, state: State) -> CPUSet:
        """GetAllocatableCPUs: every CPU but the reserved ones."""
        return self.topology.details().cpus().difference(self.reserved_cpus)

    def get_available_cpus(self, state: State) -> CPUSet:
        """GetAvailableCPUs: the shared pool minus the reserved CPUs."""
        return state.get_default_cpu_set().difference(self.reserved_cpus)

    def get_available_physical_cpus(self, state: State) -> CPUSet:
        """GetAvailablePhysicalCPUs: the shared pool minus the reserved CPUs' whole cores."""
        return state.get_default_cpu_set().difference(self.reserved_physical_cpus)

    def update_cpus_to_reuse(self, pod: Pod, container: Container, cset: CPUSet) -> None:
        """updateCPUsToReuse: only the current pod is remembered; a regular init container adds its
        CPUs, an app container (or a sidecar) takes its own out."""
        for uid in list(self.cpus_to_reuse):
            if uid != pod.uid:
                del self.cpus_to_reuse[uid]
        reuse = self.cpus_to_reuse.setdefault(pod.uid, CPUSet())
        for init_container in pod.init_containers:
            if container.name == init_container.name:
                if is_restartable_init_container(init_container):
                    break
                self.cpus_to_reuse[pod.uid] = reuse.union(cset)
                return
        self.cpus_to_reuse[pod.uid] = reuse.difference(cset)

    # ----- allocation ---------------------------------------------------------------------------

    def enforce_smt_alignment(self, state: State, num_cpus: int, held: Optional[CPUSet] = None) -> None:
        """enforceSMTAlignment (full-pcpus-only): whole cores only, and enough free whole cores, counting the
        CPUs the container already holds (`held`: kubernetes/kubernetes#129079, in v1.37: after a restart a
        running container's restored CPUs are no longer free, yet its re-admission must pass)."""
        if not self.options.full_physical_cpus_only:
            return
        if self.cpu_group_size == 0 or num_cpus % self.cpu_group_size != 0:
            raise SMTAlignmentError(num_cpus, self.cpu_group_size)
        available_physical = self.get_available_physical_cpus(state).size()
        if held is not None:
            available_physical += held.size()
        if num_cpus > available_physical:
            raise SMTAlignmentError(num_cpus, self.cpu_group_size, available_physical, True)

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Allocate: exclusive CPUs for one container of a Guaranteed pod with an integral request
        (idempotent: a container already holding CPUs keeps them). Past the guards the call is a
        pinning request (a pinning error when it raises), and under full-pcpus-only an alignment at
        the physical CPU, reported where kubelet counts them."""
        num_cpus = guaranteed_cpus(pod, container, self.feature_gates)
        if num_cpus == 0:
            self.observer.skipped(CPU_MANAGER, pod, container, SHARED_POOL)
            return
        if skips_pod_level(pod, self.feature_gates):
            self.observer.skipped(CPU_MANAGER, pod, container, POD_LEVEL_RESOURCES)
            return
        self.observer.pinning_requested(CPU_MANAGER, pod, container)
        try:
            self._allocate(state, pod, container, num_cpus)
        except Exception as err:
            self.observer.pinning_failed(CPU_MANAGER, pod, container, err)
            if self.options.full_physical_cpus_only:
                self.observer.alignment(CONTAINER_TOPOLOGY_SCOPE, PHYSICAL_CPU, False)
            raise
        if self.options.full_physical_cpus_only:
            self.observer.alignment(CONTAINER_TOPOLOGY_SCOPE, PHYSICAL_CPU, True)

    def _allocate(self, state: State, pod: Pod, container: Container, num_cpus: int) -> None:
        """Allocate past the guards."""
        cset = state.get_cpu_set(pod.uid, container.name)
        self.enforce_smt_alignment(state, num_cpus, cset)
        if cset is not None:
            self.update_cpus_to_reuse(pod, container, cset)
            self.observer.skipped(CPU_MANAGER, pod, container, ALREADY_PRESENT)
            return
        hint = self.affinity.get_affinity(pod.uid, container.name) if self.affinity is not None else TopologyHint()
        allocation = self.allocate_cpus(state, num_cpus, hint.numa_node_affinity,
                                        self.cpus_to_reuse.get(pod.uid, CPUSet()))
        state.set_cpu_set(pod.uid, container.name, allocation.cpus)
        self.update_cpus_to_reuse(pod, container, allocation.cpus)
        if allocation.aligned.uncore_cache:
            self.observer.alignment(CONTAINER_TOPOLOGY_SCOPE, UNCORE_CACHE, True)

    def allocate_cpus(self, state: State, num_cpus: int, numa_affinity: Optional[int],
                      reusable: CPUSet) -> Allocation:
        """allocateCPUs: aligned CPUs (the hint's NUMA nodes or sockets) first, then any others; the
        result leaves the shared pool."""
        allocatable = self.get_available_cpus(state).union(reusable)
        result = self.plan_cpus(allocatable, num_cpus, numa_affinity)
        state.set_default_cpu_set(state.get_default_cpu_set().difference(result))
        return Allocation(result, self.topology.check_alignment(result))

    def plan_cpus(self, allocatable: CPUSet, num_cpus: int, numa_affinity: Optional[int],
                  steps: Optional[list[TakeStep]] = None) -> CPUSet:
        """The CPUs allocateCPUs takes out of `allocatable` (free plus re-usable) for the hint's NUMA nodes,
        changing nothing; `steps` receives each takeByTopology stage, its `phase` PHASE_ALIGNED (from the
        hint's NUMA nodes or sockets) or PHASE_REST (from anywhere). Raises CPUManagerError."""
        result = CPUSet()
        if numa_affinity is not None:
            aligned = self.get_aligned_cpus(numa_affinity, allocatable)
            result = result.union(self.take_by_topology(aligned, min(num_cpus, aligned.size()), steps))
            _phase(steps, PHASE_ALIGNED)
        result = result.union(self.take_by_topology(allocatable.difference(result), num_cpus - result.size(), steps))
        _phase(steps, PHASE_REST)
        return result

    def get_aligned_cpus(self, numa_affinity: int, allocatable: CPUSet) -> CPUSet:
        """getAlignedCPUs: the allocatable CPUs of the hint's NUMA nodes (align-by-socket: of their sockets)."""
        details = self.topology.details()
        bits = bitmask.get_bits(numa_affinity)
        if self.options.align_by_socket:
            return allocatable.intersection(details.cpus_in_sockets(*details.sockets_in_numa_nodes(*bits)))
        return allocatable.intersection(details.cpus_in_numa_nodes(*bits))

    def take_by_topology(self, available: CPUSet, num_cpus: int, steps: Optional[list[TakeStep]] = None) -> CPUSet:
        """takeByTopology with the policy options: distributed across NUMA nodes (in whole cores with
        full-pcpus-only) or packed (spread across cores, uncore-cache aligned as configured); `steps`
        receives the stages (cpu_assignment.TakeStep)."""
        strategy = CPU_SORTING_STRATEGY_SPREAD if self.options.distribute_cpus_across_cores \
            else CPU_SORTING_STRATEGY_PACKED
        if self.options.distribute_cpus_across_numa:
            group = self.cpu_group_size if self.options.full_physical_cpus_only else 1
            return take_by_topology_numa_distributed(self.topology, available, num_cpus, group, strategy, steps)
        return take_by_topology_numa_packed(self.topology, available, num_cpus, strategy,
                                            self.options.prefer_align_by_uncore_cache, steps)

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """RemoveContainer: give the container's CPUs back to the shared pool, except CPUs another
        container of the pod still holds (idempotent). With pod-level sets (KEP-5526) the pod's set
        returns only with its last container."""
        to_release = state.get_cpu_set(pod_uid, container_name)
        if to_release is None:
            return
        state.delete(pod_uid, container_name)
        if pod_level_managed_gate(self.feature_gates):
            pod_cpus = state.get_pod_cpu_set(pod_uid)
            if pod_cpus is not None:
                if not state.get_cpu_assignments().get(pod_uid):
                    state.set_default_cpu_set(state.get_default_cpu_set().union(pod_cpus))
                    state.delete_pod(pod_uid)
                return
        in_use = CPUSet().union(*state.get_cpu_assignments().get(pod_uid, {}).values())
        state.set_default_cpu_set(state.get_default_cpu_set().union(to_release.difference(in_use)))

    # ----- hints --------------------------------------------------------------------------------

    def _hints(self, available: CPUSet, reusable: CPUSet, request: int) -> ProviderHints:
        """{"cpu": generateCPUTopologyHints(...)}."""
        return {CPU: generate_cpu_topology_hints(self.topology, available, reusable, request,
                                                 self.options.align_by_socket)}

    def get_topology_hints(self, state: State, pod: Pod, container: Container) -> ProviderHints:
        """GetTopologyHints: none for a shared-pool container; regenerated from the CPUs a container
        already holds (no possible placement when their number differs from the request)."""
        requested = guaranteed_cpus(pod, container, self.feature_gates)
        if requested == 0:
            return None
        if skips_pod_level(pod, self.feature_gates):
            return None
        allocated = state.get_cpu_set(pod.uid, container.name)
        if allocated is not None:
            if allocated.size() != requested:
                return {CPU: []}
            return self._hints(allocated, CPUSet(), requested)
        return self._hints(self.get_available_cpus(state), self.cpus_to_reuse.get(pod.uid, CPUSet()), requested)

    def get_pod_topology_hints(self, state: State, pod: Pod) -> ProviderHints:
        """GetPodTopologyHints: the pod total; CPUs already held by its containers are re-used (and, when
        they make up the whole request, regenerated alone)."""
        requested = pod_guaranteed_cpus(pod, self.feature_gates)
        if requested == 0:
            return None
        if skips_pod_level(pod, self.feature_gates):
            return None
        if pod_level_managed(pod, self.feature_gates):
            try:
                self.validate_pod_scope_resources(pod)
            except CPUManagerError:
                return {CPU: []}
        assigned = CPUSet()
        for container in [*pod.init_containers, *pod.containers]:
            requested_by_container = guaranteed_cpus(pod, container, self.feature_gates)
            allocated = state.get_cpu_set(pod.uid, container.name)
            if allocated is not None:
                if allocated.size() != requested_by_container:
                    return {CPU: []}
                assigned = assigned.union(allocated)
        if assigned.size() == requested:
            return self._hints(assigned, CPUSet(), requested)
        reusable = self.cpus_to_reuse.get(pod.uid, CPUSet()).union(assigned)
        return self._hints(self.get_available_cpus(state), reusable, requested)

    # ----- pod-level resource managers (KEP-5526, gate PodLevelResourceManagers) --------------

    def validate_pod_scope_resources(self, pod: Pod) -> None:
        """validatePodScopeResources: refuse a pod-level budget that cannot run an exclusive init
        container or leaves the shared pool empty while some container needs it."""
        total = pod_guaranteed_cpus(pod, self.feature_gates)
        has_shared_long_running = False
        long_running_exclusive = 0
        for container in pod.init_containers:
            cpus = guaranteed_cpus(pod, container, self.feature_gates)
            if not is_restartable_init_container(container):
                if cpus > 0:
                    pool = total - long_running_exclusive
                    if cpus > pool:
                        raise CPUManagerError(f"pod rejected, largest exclusive init container requests {cpus} cpus, "
                                              f"but only {pool} available")
                elif long_running_exclusive >= total:
                    raise CPUManagerError("pod rejected, pod has shared init containers but no cpus available for them")
                continue
            if cpus == 0:
                has_shared_long_running = True
                continue
            long_running_exclusive += cpus
        for container in pod.containers:
            cpus = guaranteed_cpus(pod, container, self.feature_gates)
            if cpus == 0:
                has_shared_long_running = True
                continue
            long_running_exclusive += cpus
        if has_shared_long_running and long_running_exclusive >= total:
            raise CPUManagerError("pod rejected, sum of exclusive container cpu requests equals pod budget, leaving no "
                                  "cpus for shared containers")

    def allocate_pod(self, state: State, pod: Pod) -> None:
        """AllocatePod: one pod-level set on the first container's hint, then split: exclusive sets for
        equivalent-Guaranteed containers, the rest a shared pool for the others. Each container given
        exclusive CPUs of the set is a pinning request, where kubelet counts them."""
        total = pod_guaranteed_cpus(pod, self.feature_gates)
        if total == 0:
            self.observer.skipped(CPU_MANAGER, pod, None, SHARED_POOL)
            return
        try:
            self.validate_pod_scope_resources(pod)
        except CPUManagerError as err:
            raise EmptyPodSharedPoolError(str(err)) from None
        self.enforce_smt_alignment(state, total)
        first = [*pod.init_containers, *pod.containers][0].name
        hint = self.affinity.get_affinity(pod.uid, first) if self.affinity is not None else TopologyHint()
        allocation = self.allocate_cpus(state, total, hint.numa_node_affinity, CPUSet())
        pod_cpus = allocation.cpus
        state.set_pod_cpu_set(pod.uid, pod_cpus)
        exclusive: dict[str, CPUSet] = {}
        sidecar_cpus = CPUSet()
        for container in pod.init_containers:
            cpus = guaranteed_cpus(pod, container, self.feature_gates)
            if cpus > 0:
                cset = self._take_pinned(pod, container, pod_cpus.difference(sidecar_cpus), cpus)
                exclusive[container.name] = cset
                if is_restartable_init_container(container):
                    sidecar_cpus = sidecar_cpus.union(cset)
            elif not is_restartable_init_container(container):
                exclusive[container.name] = pod_cpus.difference(sidecar_cpus)
        shared = pod_cpus.difference(sidecar_cpus)
        for container in pod.containers:
            cpus = guaranteed_cpus(pod, container, self.feature_gates)
            if cpus > 0:
                cset = self._take_pinned(pod, container, shared, cpus)
                exclusive[container.name] = cset
                shared = shared.difference(cset)
        for container in [*pod.init_containers, *pod.containers]:
            state.set_cpu_set(pod.uid, container.name, exclusive.get(container.name, shared))


    def _take_pinned(self, pod: Pod, container: Container, available: CPUSet, num_cpus: int) -> CPUSet:
        """A container's exclusive CPUs out of its pod's set: a pinning request (an error when it fails)."""
        self.observer.pinning_requested(CPU_MANAGER, pod, container)
        try:
            return self.take_by_topology(available, num_cpus)
        except Exception as err:
            self.observer.pinning_failed(CPU_MANAGER, pod, container, err)
            raise


def pod_level_managed_gate(gates: FeatureGates) -> bool:
    """The PodLevelResourceManagers gate."""
    return gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE)


def _q(cpus: CPUSet) -> str:
    """A cpuset as Go's %q prints its String()."""
    return f'"{cpus}"'


def new_policy_static(topology: CPUTopology, num_reserved_cpus: int, reserved_cpus: CPUSet,
                      affinity: Optional[AffinityStore], policy_options: Optional[Mapping[str, str]] = None,
                      feature_gates: Optional[FeatureGates] = None, observer: Observer = NO_OBSERVER) -> StaticPolicy:
    """NewStaticPolicy: parse and validate the options, then pick the reserved CPUs (the given list,
    else takeByTopology over all CPUs) and their whole cores."""
    gates = feature_gates if feature_gates is not None else FeatureGates()
    opts = new_static_policy_options(policy_options, gates)
    validate_static_policy_options(opts, topology, affinity)
    policy = StaticPolicy(topology, affinity, opts, gates, observer)
    if reserved_cpus.size() > 0:
        reserved = reserved_cpus
    else:
        try:
            reserved = policy.take_by_topology(topology.details().cpus(), num_reserved_cpus)
        except CPUManagerError:
            reserved = CPUSet()  # kubelet ignores the error and compares sizes below
    if reserved.size() != num_reserved_cpus:
        raise CPUManagerError(f"[cpumanager] unable to reserve the required amount of CPUs (size of {reserved} did "
                              f"not equal {num_reserved_cpus})")
    physical = CPUSet()
    for cpu in reserved:
        try:
            core = topology.cpu_core_id(cpu)
        except CPUManagerError as err:
            raise CPUManagerError(f"[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
                                  f"{err}") from None
        physical = physical.union(topology.details().cpus_in_cores(core))
    policy.reserved_cpus = reserved
    policy.reserved_physical_cpus = physical
    return policy
