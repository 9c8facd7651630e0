"""The `Static` memory-manager policy: exclusive, NUMA-aligned memory for Guaranteed pods.

Follows kubelet's policy_static.go as released (v1.33+ code, PodLevelResources skip),
with the drift-tolerance option (KEP-6232) and the pod-level allocation path
(KEP-5526) behind their feature gates, both off by default. Every error carries
kubelet's exact text.
"""
from __future__ import annotations

from typing import Mapping, Optional

from kubeinputs.machine import MachineInfo
from kubeinputs.pod import Container, Pod
from state.state import State
from state.types import MEMORY, Block, NUMANodeMap
from topologymanager import bitmask
from kubeinputs.features import (MEMORY_MANAGER_DRIFT_TOLERANCE_GATE, POD_LEVEL_RESOURCE_MANAGERS_GATE,
                                 POD_LEVEL_RESOURCES_GATE, FeatureGates)
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import NO_OBSERVER, Observer

from memorymanager.hints import (
    calculate_hints,
    default_memory_hint,
    extension_hint,
    is_affinity_satisfy_request,
    is_affinity_violating_numa_allocations,
    numa_affinities_equal,
    regenerate_hints,
)
from memorymanager.machine_state import (
    are_machine_states_equal,
    get_default_machine_state,
    release_memory,
    replay_assignments,
    update_machine_state,
)
from memorymanager.memory_drift import PROC_IOMEM_PATH, is_tolerable_machine_state_drift, memory_drift_by_node
from memorymanager.observer import (ALREADY_PRESENT, EMPTY_SHARED_POOL, MEMORY_MANAGER, NOT_GUARANTEED,
                                    NOTHING_REQUESTED, POD_LEVEL_OFF, POD_LEVEL_RESOURCES, REQUEST_UNREADABLE)
from memorymanager.policy import POLICY_STATIC, AffinityStore, EmptyPodSharedPoolError, MemoryManagerError
from memorymanager.policy_options import PolicyOptions, new_policy_options
from kubeinputs.qos import GUARANTEED, get_pod_qos
from memorymanager.requests import (
    first_container_name,
    get_container_requested_resources,
    get_pod_requested_resources,
    is_pod_level_resources_set,
    is_restartable_init_container,
)
from memorymanager.reserved_memory import SystemReservedMemory, total_reserved_regular_memory
from memorymanager.reusable_memory import ReusableMemory

ERR_NO_SYSTEM_RESERVED = "[memorymanager] you should specify the system reserved memory"
ERR_DEFAULT_AFFINITY = (
    "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available"
)
ERR_DEFAULT_PREFERRED = "[memorymanager] failed to find the default preferred hint"
ERR_EXTEND = "[memorymanager] failed to find NUMA nodes to extend the current topology hint"
ERR_EXTENDED_PREFERRED = "[memorymanager] failed to find the extended preferred hint"
ERR_VIOLATES = "[memorymanager] preferred hint violates NUMA node allocation"
ERR_EMPTY_STATE = "[memorymanager] machine state can not be empty when it has memory assignments"
ERR_STATE_DIFFERS = "[memorymanager] the expected machine state is different from the real one"


class StaticPolicy:
    """kubelet's static policy. Build it with `new_policy_static`."""

    def __init__(
        self,
        machine_info: MachineInfo,
        system_reserved: SystemReservedMemory,
        affinity: AffinityStore,
        feature_gates: FeatureGates,
        options: PolicyOptions = PolicyOptions(),
        observer: Observer = NO_OBSERVER,
    ):
        self.machine_info = machine_info
        self.system_reserved = system_reserved
        self.affinity = affinity
        self.feature_gates = feature_gates
        self.observer = observer  # hears every early return and pinning (memorymanager.observer)
        self.max_memory_drift = options.max_memory_drift
        self.reusable = ReusableMemory()
        # The drift gauges kubelet exports (MemoryManagerDriftToleranceBytes, MemoryManagerMemoryDriftBytes{node}).
        self.drift_tolerance_bytes = 0
        self.memory_drift_bytes: dict[int, int] = {}

    # ----- gates and guards -------------------------------------------------------------------

    @property
    def _pod_level_resources(self) -> bool:
        """PodLevelResources gate."""
        return self.feature_gates.enabled(POD_LEVEL_RESOURCES_GATE)

    @property
    def pod_level_resource_managers(self) -> bool:
        """PodLevelResourceManagers gate."""
        return self.feature_gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE)

    def _skip_pod_level(self, pod: Pod) -> bool:
        """Pods with pod-level resources the policy does not handle: released code skips them when
        PodLevelResources is on; with PodLevelResourceManagers on they are handled instead."""
        if not is_pod_level_resources_set(pod):
            return False
        if self.pod_level_resource_managers:
            return not self._pod_level_resources
        return self._pod_level_resources

    def _is_guaranteed(self, pod: Pod) -> bool:
        """The pod's QoS class is Guaranteed (pod-level resources count when PodLevelResources is on)."""
        return get_pod_qos(pod, self._pod_level_resources) == GUARANTEED

    def skip_reason(self, pod: Pod) -> Optional[str]:
        """Why the policy leaves the whole pod alone (`memorymanager.observer.NOT_GUARANTEED` or
        `POD_LEVEL_RESOURCES`), None when it pins what the pod's containers ask for: Allocate's guards,
        in its order."""
        if not self._is_guaranteed(pod):
            return NOT_GUARANTEED
        if self._skip_pod_level(pod):
            return POD_LEVEL_RESOURCES
        return None

    def _skipped(self, pod: Pod, container: Optional[Container], why: str) -> None:
        """Report an early return (kubelet logs it)."""
        self.observer.skipped(MEMORY_MANAGER, pod, container, why)

    def name(self) -> str:
        """`Static`."""
        return POLICY_STATIC

    # ----- start / validateState --------------------------------------------------------------

    def get_default_machine_state(self) -> NUMANodeMap:
        """The machine state of this machine with nothing allocated."""
        return get_default_machine_state(self.machine_info, self.system_reserved)

    def start(self, state: State) -> None:
        """Validate the restored state (kubelet logs "Invalid state, please drain node and remove
        policy state file" and refuses to start on error)."""
        self.validate_state(state)

    def validate_state(self, state: State) -> None:
        """kubelet's validateState: an empty state is initialised; otherwise the stored state must
        equal the machine's default state plus every stored assignment (group sums for free and
        reserved), or, with a drift bound, differ only by a tolerable drift (then re-baselined).

        Go replays pods and containers in random map order; here in sorted order. Only the
        per-node split inside a group depends on it for states kubelet keeps consistent; when
        groups overlap (a one-node block inside a group, kubelet #113035) the verdict can too.
        """
        self.drift_tolerance_bytes = self.max_memory_drift
        machine_state = state.get_machine_state()
        assignments = state.get_memory_assignments()
        if len(machine_state) == 0:
            if len(assignments) != 0:
                raise MemoryManagerError(ERR_EMPTY_STATE)
            state.set_machine_state(self.get_default_machine_state())
            return

        strict_fit = self.feature_gates.enabled(MEMORY_MANAGER_DRIFT_TOLERANCE_GATE)
        expected = self.get_default_machine_state()
        replay_assignments(expected, assignments,
                           state.get_pod_memory_blocks if self.pod_level_resource_managers else None, strict_fit)

        if not are_machine_states_equal(machine_state, expected):
            if self.max_memory_drift == 0 or not is_tolerable_machine_state_drift(
                machine_state, expected, self.max_memory_drift
            ):
                raise MemoryManagerError(ERR_STATE_DIFFERS)
            # "Tolerating a small NUMA node memory drift and re-baselining the memory manager state"
            state.set_machine_state(expected)
        self.memory_drift_bytes = memory_drift_by_node(machine_state, expected)

    # ----- hints ------------------------------------------------------------------------------

    def get_topology_hints(self, state: State, pod: Pod, container: Container) -> ProviderHints:
        """Hints for one container: regenerated from its blocks if it has some, else calculated; an early
        return (no preference) is reported as `skipped`."""
        if not self._is_guaranteed(pod):
            self._skipped(pod, container, NOT_GUARANTEED)
            return None
        try:
            requested = get_container_requested_resources(pod, container, self.pod_level_resource_managers)
        except MemoryManagerError:
            self._skipped(pod, container, REQUEST_UNREADABLE)
            return None  # kubelet logs "Failed to get container requested resources"
        if self.pod_level_resource_managers and not requested:
            self._skipped(pod, container, NOTHING_REQUESTED)
            return None
        if self._skip_pod_level(pod):
            self._skipped(pod, container, POD_LEVEL_RESOURCES)
            return None
        blocks = state.get_memory_blocks(pod.uid, container.name)
        if blocks is not None:
            return regenerate_hints(blocks, requested)
        return calculate_hints(state.get_machine_state(), requested, self.reusable.lookup(pod.uid))

    def get_pod_topology_hints(self, state: State, pod: Pod) -> ProviderHints:
        """Hints for the whole pod (pod scope).

        If a container already holds memory, the hints are regenerated from its blocks
        against the pod total (released code: a multi-container pod restored after a
        restart then gets nil); with PodLevelResourceManagers on, the newer behaviour
        is used: pod-level blocks first, else the container's own request.
        """
        if not self._is_guaranteed(pod):
            self._skipped(pod, None, NOT_GUARANTEED)
            return None
        try:
            requested = get_pod_requested_resources(pod, self.pod_level_resource_managers)
        except MemoryManagerError:
            self._skipped(pod, None, REQUEST_UNREADABLE)
            return None  # kubelet logs "Failed to get pod requested resources"
        if self._skip_pod_level(pod):
            self._skipped(pod, None, POD_LEVEL_RESOURCES)
            return None
        pod_level = self.pod_level_resource_managers and is_pod_level_resources_set(pod)
        if pod_level:
            try:
                self.validate_pod_scope_resources(pod)
            except MemoryManagerError:
                self._skipped(pod, None, EMPTY_SHARED_POOL)
                return {resource: [] for resource in requested}
        if self.pod_level_resource_managers and not requested:
            self._skipped(pod, None, NOTHING_REQUESTED)
            return None
        if pod_level:
            pod_blocks = state.get_pod_memory_blocks(pod.uid)
            if pod_blocks is not None:
                return regenerate_hints(pod_blocks, requested)
        for container in [*pod.init_containers, *pod.containers]:
            blocks = state.get_memory_blocks(pod.uid, container.name)
            if blocks is None:
                continue
            if self.pod_level_resource_managers:
                try:
                    own = get_container_requested_resources(pod, container, True)
                except MemoryManagerError:
                    self._skipped(pod, None, REQUEST_UNREADABLE)
                    return None
                return regenerate_hints(blocks, own)
            return regenerate_hints(blocks, requested)
        return calculate_hints(state.get_machine_state(), requested, self.reusable.lookup(pod.uid))

    # ----- allocation -------------------------------------------------------------------------

    def _best_hint(
        self, machine_state: NUMANodeMap, pod: Pod, requested: dict[str, int], hint: TopologyHint
    ) -> TopologyHint:
        """The mask to allocate on: the stored hint, else the default hint; extended when too
        small; refused when it would mix single- and cross-NUMA allocations."""
        lookup = self.reusable.lookup(pod.uid)
        best = hint
        if hint.numa_node_affinity is None:
            hints = calculate_hints(machine_state, requested, lookup)
            if len(hints) < 1:
                raise MemoryManagerError(ERR_DEFAULT_AFFINITY)
            default = default_memory_hint(hints)
            if not default.preferred and best.preferred:
                raise MemoryManagerError(ERR_DEFAULT_PREFERRED)
            best = default
        if best.numa_node_affinity is None:
            # kubelet dereferences a nil mask here (only reachable without a `memory` request).
            raise MemoryManagerError(ERR_DEFAULT_AFFINITY)

        if not is_affinity_satisfy_request(machine_state, best.numa_node_affinity, requested):
            current = bitmask.get_bits(best.numa_node_affinity)
            hints = calculate_hints(machine_state, requested, lookup)
            extended = extension_hint(hints, current)
            if extended is None:
                raise MemoryManagerError(ERR_EXTEND)
            if not extended.preferred and best.preferred:
                raise MemoryManagerError(ERR_EXTENDED_PREFERRED)
            best = extended

        if is_affinity_violating_numa_allocations(machine_state, best.numa_node_affinity):
            raise MemoryManagerError(ERR_VIOLATES)
        return best

    def allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Reserve exclusive memory for one container of a Guaranteed pod (idempotent).

        Each requested resource gets one block with the full request on the chosen
        mask; the bytes actually reserved are reduced by the pod's re-usable
        init-container memory on that mask, and earlier init containers' blocks are
        shrunk by what this container took over. Past the pod's guards (`skip_reason`) the
        call counts as a pinning request, and as a pinning error when it raises.
        """
        why = self.skip_reason(pod)
        if why is not None:
            self._skipped(pod, container, why)
            return
        self.observer.pinning_requested(MEMORY_MANAGER, pod, container)
        try:
            self._allocate(state, pod, container)
        except Exception as err:
            self.observer.pinning_failed(MEMORY_MANAGER, pod, container, err)
            raise

    def _allocate(self, state: State, pod: Pod, container: Container) -> None:
        """Allocate past the pod's guards."""
        blocks = state.get_memory_blocks(pod.uid, container.name)
        if blocks is not None:
            self.reusable.update(pod, container, blocks)
            self._skipped(pod, container, ALREADY_PRESENT)
            return

        hint = self.affinity.get_affinity(pod.uid, container.name)
        requested = get_container_requested_resources(pod, container, self.pod_level_resource_managers)
        if not requested:
            self._skipped(pod, container, NOTHING_REQUESTED)
            return

        machine_state = state.get_machine_state()
        best = self._best_hint(machine_state, pod, requested, hint)
        bits = bitmask.get_bits(best.numa_node_affinity)
        container_blocks: list[Block] = []
        for resource, size in requested.items():
            container_blocks.append(Block(numa_affinity=list(bits), type=resource, size=size))
            reusable = self.reusable.get(pod.uid, best.numa_node_affinity, resource)
            to_reserve = 0 if reusable >= size else size - reusable
            update_machine_state(machine_state, bits, resource, to_reserve)

        self.reusable.update(pod, container, container_blocks)
        state.adopt_machine_state(machine_state)
        state.set_memory_blocks(pod.uid, container.name, container_blocks)
        self._update_init_containers_memory_blocks(state, pod, container, container_blocks)

    def _update_init_containers_memory_blocks(
        self, state: State, pod: Pod, container: Container, container_blocks: list[Block]
    ) -> None:
        """Shrink earlier regular init containers' blocks by the memory this container re-used, so
        that the pod's block sizes add up to what is really reserved.

        kubelet's walk visits every earlier init container (a pod of n init containers: O(n^2)
        visits, each a copy and a store of its blocks); a container none of whose blocks this one
        can take from is only looked at (`peek_memory_blocks`), since storing its blocks unchanged
        changes nothing.
        """
        for container_block in container_blocks:
            remaining = container_block.size
            wanted_type, wanted_mask = container_block.type, _mask_of(container_block.numa_affinity)
            for init_container in pod.init_containers:
                if init_container.name == container.name:
                    break
                if remaining == 0:
                    break
                if is_restartable_init_container(init_container):
                    continue
                seen = state.peek_memory_blocks(pod.uid, init_container.name)
                if not seen or not any(b.size and b.type == wanted_type and _mask_of(b.numa_affinity) == wanted_mask
                                       for b in seen):
                    continue  # nothing to take from here: kubelet would store the same blocks again
                init_blocks = state.get_memory_blocks(pod.uid, init_container.name)
                if not init_blocks:
                    continue
                for init_block in init_blocks:
                    if init_block.size == 0:
                        continue
                    if init_block.type != container_block.type:
                        continue
                    if not numa_affinities_equal(init_block.numa_affinity, container_block.numa_affinity):
                        continue
                    if init_block.size > remaining:
                        init_block.size -= remaining
                        remaining = 0
                    else:
                        remaining -= init_block.size
                        init_block.size = 0
                state.set_memory_blocks(pod.uid, init_container.name, init_blocks)

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Release a container's memory (idempotent). With pod-level blocks (KEP-5526), the pod's
        memory is released only when its last container goes."""
        if self.pod_level_resource_managers:
            pod_blocks = state.get_pod_memory_blocks(pod_uid)
            if pod_blocks is not None:
                state.delete(pod_uid, container_name)
                if len(state.get_memory_assignments().get(pod_uid) or {}) == 0:
                    self._release(state, pod_blocks)
                    state.delete_pod(pod_uid)  # "Released pod-level memory"
                return
        blocks = state.get_memory_blocks(pod_uid, container_name)
        if blocks is None:
            return
        state.delete(pod_uid, container_name)
        self._release(state, blocks)  # "Released container-level memory"

    @staticmethod
    def _release(state: State, blocks: list[Block]) -> None:
        """Give blocks back to the machine state and save it."""
        machine_state = state.get_machine_state()
        release_memory(machine_state, blocks)
        state.adopt_machine_state(machine_state)

    def get_allocatable_memory(self, state: State) -> list[Block]:
        """One block per (node, resource) with non-zero allocatable memory (Go map order is
        unspecified; here nodes ascending, `memory` first, then hugepages sorted)."""
        result: list[Block] = []
        machine_state = state.get_machine_state()
        for node_id in sorted(machine_state):
            node = machine_state[node_id]
            if node is None:
                continue
            tables = node.memory_map or {}
            for resource in sorted(tables, key=lambda name: (name != MEMORY, name)):
                table = tables[resource]
                if table is None or table.allocatable == 0:
                    continue
                result.append(Block(numa_affinity=[node_id], type=resource, size=table.allocatable))
        return result

    # ----- pod-level resource managers (KEP-5526, gate PodLevelResourceManagers) --------------

    def validate_pod_scope_resources(self, pod: Pod) -> None:
        """Refuse a pod-level budget that leaves the shared pool empty while some container needs it."""
        pod_total = get_pod_requested_resources(pod, True)
        has_shared_long_running = False
        exclusive_long_running: dict[str, int] = {}
        for container in pod.init_containers:
            requests = get_container_requested_resources(pod, container, True)
            if not is_restartable_init_container(container):
                if not requests:
                    for resource, pool in pod_total.items():
                        if exclusive_long_running.get(resource, 0) >= pool:
                            raise MemoryManagerError(
                                f"pod rejected, pod has shared init containers but no {resource} available for them"
                            )
            elif not requests:
                has_shared_long_running = True
            else:
                for resource, size in requests.items():
                    exclusive_long_running[resource] = exclusive_long_running.get(resource, 0) + size
        for container in pod.containers:
            requests = get_container_requested_resources(pod, container, True)
            if not requests:
                has_shared_long_running = True
            else:
                for resource, size in requests.items():
                    exclusive_long_running[resource] = exclusive_long_running.get(resource, 0) + size
        if has_shared_long_running:
            for resource, total in pod_total.items():
                if exclusive_long_running.get(resource, 0) >= total:
                    raise MemoryManagerError(
                        f"pod rejected, sum of exclusive container {resource} requests equals pod budget, "
                        "leaving no memory for shared containers"
                    )

    def allocate_pod(self, state: State, pod: Pod) -> None:
        """Allocate one NUMA-aligned budget for a pod with pod-level resources (KEP-5526).

        Exclusive blocks go to equivalent-Guaranteed containers; the rest of the budget
        is a shared pool given to the other containers; the pod-level blocks carry the
        total and the machine state is charged once per resource. A no-op unless both
        PodLevelResources and PodLevelResourceManagers are on. A Guaranteed pod's call counts
        as a pinning request, and as a pinning error when it raises.
        """
        if not self._is_guaranteed(pod):
            self._skipped(pod, None, NOT_GUARANTEED)
            return
        self.observer.pinning_requested(MEMORY_MANAGER, pod, None)
        try:
            self._allocate_pod(state, pod)
        except Exception as err:
            self.observer.pinning_failed(MEMORY_MANAGER, pod, None, err)
            raise

    def _allocate_pod(self, state: State, pod: Pod) -> None:
        """AllocatePod of a Guaranteed pod."""
        pod_total = self._pod_budget_to_allocate(state, pod)
        if pod_total is None:
            return
        machine_state = state.get_machine_state()
        bits = self._pod_numa_nodes(machine_state, pod, pod_total)
        exclusive, shared_pool = _pod_container_blocks(pod, pod_total, bits)
        state.set_pod_memory_blocks(
            pod.uid, [Block(numa_affinity=list(bits), type=r, size=s) for r, s in pod_total.items()]
        )
        for resource, size in pod_total.items():
            update_machine_state(machine_state, bits, resource, size)
        for container in [*pod.init_containers, *pod.containers]:
            blocks = exclusive.get(container.name)
            if blocks is None:
                blocks = [Block(numa_affinity=list(b.numa_affinity), type=b.type, size=b.size) for b in shared_pool]
            state.set_memory_blocks(pod.uid, container.name, blocks)
        state.adopt_machine_state(machine_state)

    def _pod_budget_to_allocate(self, state: State, pod: Pod) -> Optional[dict[str, int]]:
        """The pod-level request of a Guaranteed pod to allocate, None when the pod is skipped (reported);
        raises for an empty shared pool."""
        if not (self.pod_level_resource_managers and self._pod_level_resources):
            self._skipped(pod, None, POD_LEVEL_OFF)
            return None
        if state.get_pod_memory_blocks(pod.uid) is not None:
            self._skipped(pod, None, ALREADY_PRESENT)
            return None
        try:
            pod_total = get_pod_requested_resources(pod, True)
        except MemoryManagerError:
            self._skipped(pod, None, REQUEST_UNREADABLE)
            return None  # kubelet logs "Failed to get pod requested resources" and admits
        try:
            self.validate_pod_scope_resources(pod)
        except MemoryManagerError as err:
            raise EmptyPodSharedPoolError(str(err)) from None
        return pod_total

    def _pod_numa_nodes(self, machine_state: NUMANodeMap, pod: Pod, pod_total: dict[str, int]) -> list[int]:
        """The pod budget's NUMA nodes: its first container's stored hint, checked and extended by _best_hint."""
        first = first_container_name(pod)
        hint = self.affinity.get_affinity(pod.uid, first) if first is not None else TopologyHint()
        best = self._best_hint(machine_state, pod, pod_total, hint)
        return bitmask.get_bits(best.numa_node_affinity)


def _blocks_on(bits: list[int], sizes: Mapping[str, int]) -> list[Block]:
    """One block per positive size on these NUMA nodes."""
    return [Block(numa_affinity=list(bits), type=r, size=s) for r, s in sizes.items() if s > 0]


def _pod_container_blocks(
    pod: Pod, pod_total: dict[str, int], bits: list[int]
) -> tuple[dict[str, list[Block]], list[Block]]:
    """Exclusive blocks by container name, and the shared pool (the budget left) for the other containers."""
    exclusive, sidecar_memory = _init_container_blocks(pod, pod_total, bits)
    app_pool = {r: total - sidecar_memory.get(r, 0) for r, total in pod_total.items()}
    for container in pod.containers:
        requests = get_container_requested_resources(pod, container, True)
        if not requests:
            continue
        exclusive[container.name] = _blocks_on(bits, requests)
        for resource, size in requests.items():
            if size > 0:
                app_pool[resource] = app_pool.get(resource, 0) - size
    return exclusive, _blocks_on(bits, app_pool)


def _init_container_blocks(
    pod: Pod, pod_total: dict[str, int], bits: list[int]
) -> tuple[dict[str, list[Block]], dict[str, int]]:
    """Init containers' exclusive blocks (budget minus earlier sidecars if no request) and the sidecars' memory."""
    exclusive: dict[str, list[Block]] = {}
    sidecar_memory: dict[str, int] = {}
    for container in pod.init_containers:
        requests = get_container_requested_resources(pod, container, True)
        runnable_pool = {r: total - sidecar_memory.get(r, 0) for r, total in pod_total.items()}
        if not requests:
            if is_restartable_init_container(container):
                continue
            exclusive[container.name] = _blocks_on(bits, runnable_pool)
            continue
        exclusive[container.name] = _blocks_on(bits, requests)
        if is_restartable_init_container(container):
            for resource, size in requests.items():
                sidecar_memory[resource] = sidecar_memory.get(resource, 0) + size
    return exclusive, sidecar_memory


def new_policy_static(
    machine_info: MachineInfo,
    system_reserved: SystemReservedMemory,
    affinity: AffinityStore,
    feature_gates: Optional[FeatureGates] = None,
    policy_options: Optional[Mapping[str, str]] = None,
    iomem_path: str = PROC_IOMEM_PATH,
    observer: Observer = NO_OBSERVER,
) -> StaticPolicy:
    """kubelet's NewPolicyStatic: some NUMA node must reserve regular memory for the system;
    then the policy options are parsed (drift tolerance)."""
    gates = feature_gates if feature_gates is not None else FeatureGates.from_config({})
    if total_reserved_regular_memory(system_reserved) <= 0:
        raise MemoryManagerError(ERR_NO_SYSTEM_RESERVED)
    options = new_policy_options(policy_options, gates, iomem_path)
    return StaticPolicy(machine_info, system_reserved, affinity, gates, options, observer)


def _mask_of(affinity: Optional[list[int]]) -> Optional[int]:
    """A NUMA affinity as kubelet's bitmask (order and duplicates ignored; None when it cannot be one),
    the comparison `numa_affinities_equal` makes."""
    try:
        return bitmask.new_bitmask(*(affinity or []))
    except bitmask.BitMaskError:
        return None
