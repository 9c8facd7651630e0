"""What-ifs on copies of a node: what would make a refused pod fit, and how much room is left.

Every answer is checked by admitting the pod on a copy of the node with the change made, never
derived by reasoning alone:

* `removals_that_admit`: which admitted pods' removal lets the pod in, fewest pods first. Each
  candidate set is removed from an in-memory fork (`SimulatedNode.fork`) and the pod admitted there.
  Removing every pod that holds memory frees the most (hints only grow as memory is freed), so
  when even that is refused, no removal helps and nothing else is tried. A set is only tried when
  the first memory request of the pod finds a mask on the memory freed (calculateHints' own mask
  check on the released machine state): without one kubelet refuses for certain.
* `other_settings`: whether another topology manager policy or scope admits it. Each setting is
  a kubelet restart with that configuration on a copy of the node's state (its checkpoint written
  into a temporary folder; the node's own file is never touched), as an operator would restart it.
* `largest_admissible`: the largest request of the same shape (every memory and hugepages request
  of the pod scaled by one factor, each rounded down to whole MiB or pages) admitted now. Admission
  is not monotone in the size (a larger request can make a wider mask preferred), so the sizes at
  which some mask's free or allocatable memory is exactly used up are tried from the largest down,
  each on a fork; then the gap to the next larger size tried is bisected, and the answer comes with
  the next larger size, also checked (refused).
* `headroom`: per NUMA node, the free memory left and whether a single-NUMA request can use it
  (a node inside a multi-NUMA group serves only masks equal to the group).

Cost: each check is one fork and one admission (a few milliseconds on small machines, O(state)
to copy); the searches stop after `MAX_CHECKS` checks and say so. `headroom` is O(nodes).
"""
from __future__ import annotations

import itertools
import os
import tempfile
from dataclasses import dataclass, field, replace
from typing import Mapping, Optional

from cpumanager.policy import POLICY_NONE as CPU_POLICY_NONE
from cpumanager.state import CHECKPOINT_FILE_NAME as CPU_CHECKPOINT_FILE_NAME
from devicemanager.constants import CHECKPOINT_DIR as DEVICE_CHECKPOINT_DIR
from devicemanager.constants import CHECKPOINT_FILE_NAME as DEVICE_CHECKPOINT_FILE_NAME
from kubeinputs.features import POD_LEVEL_RESOURCES_GATE, FeatureGates
from kubeinputs.kubelet_config import parse_kubelet_config
from kubeinputs.pod import Container, Pod, ResourceRequirements, is_hugepage_resource
from kubeinputs.qos import GUARANTEED, get_pod_qos
from kubeinputs.quantity import BINARY_SI, Quantity, parse_quantity
from memorymanager.machine_state import release_memory
from memorymanager.node.answers import Admission, admission_of
from memorymanager.node.simulated_node import POD_SCOPE, FixedHintProvider, KubeletStartError, SimulatedNode
from memorymanager.policy_static import StaticPolicy
from memorymanager.reference_hints import check_mask
from memorymanager.requests import get_container_requested_resources, get_pod_requested_resources
from memorymanager.reusable_memory import no_reuse
from state import CHECKPOINT_FILE_NAME
from state.checkpoint_manager import NoSyncFileOps
from state.checkpoint_writer import encode_checkpoint
from state.types import NUMANodeMap, is_memory_resource
from topologymanager import bitmask
from topologymanager.policy import POLICY_NONE

Extra = Optional[FixedHintProvider]  # other providers' hints for the admission, as SimulatedNode.admit takes them

MAX_CHECKS = 48  # admissions on forks per search
MAX_REMOVED = 3  # the largest set of pods a removal search tries (then: every pod)
MAX_REMOVAL_FIXES = 3  # sets of the smallest size reported
MAX_MASK_NODES = 8  # up to this many NUMA nodes every mask is a breakpoint candidate and a prefilter mask
TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES = ("container", "pod")
MI = 1 << 20


@dataclass(frozen=True)
class NodeHeadroom:
    """One NUMA node's room left: `free` and `allocatable` bytes per resource, the group it belongs to
    (`cells`, itself when alone) and the free bytes of that group; `usable_alone`: a single-NUMA request
    can be placed here (the node is in no multi-NUMA group)."""

    node: int
    cells: tuple[int, ...]
    free: Mapping[str, int]
    allocatable: Mapping[str, int]
    group_free: Mapping[str, int]
    usable_alone: bool


@dataclass(frozen=True)
class RemovalFix:
    """Pods whose removal lets the pod in (checked): their names and UIDs, the bytes their removal frees
    per NUMA node and resource, and the pod's admission on the node without them."""

    pods: tuple[str, ...]
    uids: tuple[str, ...]
    freed: Mapping[int, Mapping[str, int]]
    admission: Admission
    freed_cpus: str = ""  # the exclusive CPUs their removal returns to the shared pool (a cpuset)
    freed_devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # resource -> device IDs freed


@dataclass(frozen=True)
class RemovalSearch:
    """The removal search: the sets found (fewest pods first), how many admissions it checked, whether it
    stopped at its budget, and a sentence when nothing (or only removing every pod) helps."""

    fixes: tuple[RemovalFix, ...]
    checks: int
    exhausted: bool
    note: str = ""


@dataclass(frozen=True)
class SettingTry:
    """The pod admitted after a kubelet restart with another topology manager policy and scope (checked);
    `error` when kubelet does not start with that setting."""

    policy: str
    scope: str
    admission: Optional[Admission]
    error: str = ""


@dataclass(frozen=True)
class LargestFit:
    """The largest request of the pod's shape admitted now (checked): per container (`pod` for pod-level
    resources) the bytes per resource, the admission, and the next larger request of the shape, checked and
    refused (None when the search stopped at its budget before it could tell)."""

    requests: Mapping[str, Mapping[str, int]]
    admission: Admission
    refused_above: Optional[Mapping[str, Mapping[str, int]]]
    checks: int = 0


# ----- headroom ---------------------------------------------------------------------------------


def headroom(node: SimulatedNode) -> dict[int, NodeHeadroom]:
    """Per NUMA node, the room left (see NodeHeadroom). Cost: O(nodes x resources)."""
    machine_state = node.state().get_machine_state()
    result: dict[int, NodeHeadroom] = {}
    for node_id, state in sorted(machine_state.items()):
        tables = {r: t for r, t in (state.memory_map or {}).items() if t is not None}
        cells = tuple(sorted(state.cells or [node_id]))
        group_free = {r: sum(((machine_state[c].memory_map or {}).get(r).free
                              if c in machine_state and (machine_state[c].memory_map or {}).get(r) is not None else 0)
                             for c in cells) for r in tables}
        result[node_id] = NodeHeadroom(node_id, cells, {r: t.free for r, t in tables.items()},
                                       {r: t.allocatable for r, t in tables.items()}, group_free, len(cells) <= 1)
    return result


# ----- removals ---------------------------------------------------------------------------------


def _held_bytes(node: SimulatedNode, uid: str) -> int:
    """Every byte a pod's blocks hold (container and pod-level)."""
    state = node.state()
    blocks = [b for bs in (state.get_memory_assignments().get(uid) or {}).values() for b in bs or []]
    blocks += state.get_pod_memory_blocks(uid) or []
    return sum(b.size for b in blocks)


def _first_request(node: SimulatedNode, pod: Pod) -> Optional[dict[str, int]]:
    """What the pod's first hint calculation asks for (the first container asking memory, or the pod total
    in pod scope); None when the Static policy pins nothing of it."""
    policy = node.memory_manager.policy
    if not isinstance(policy, StaticPolicy):
        return None
    try:
        if node.topology_manager.scope.name == POD_SCOPE:
            return get_pod_requested_resources(pod, policy.pod_level_resource_managers) or None
        for container in pod.all_containers():
            requested = get_container_requested_resources(pod, container, policy.pod_level_resource_managers)
            if requested:
                return requested
    except Exception:  # a request kubelet cannot read: no prefilter, the admission says
        return None
    return None


def _some_mask_fits(machine_state: NUMANodeMap, requested: dict[str, int]) -> bool:
    """Whether calculateHints finds any mask for `requested` (its allocatable, group and free checks)."""
    nodes = sorted(machine_state)
    try:
        return any(check_mask(machine_state, m, requested, no_reuse).passes for m in bitmask.iterate_bit_masks(nodes))
    except Exception:  # a table kubelet would crash on: let the admission tell
        return True


def _released(node: SimulatedNode, pods: tuple[Pod, ...]) -> NUMANodeMap:
    """The machine state once `pods` are removed (their blocks released in the order removal releases them)."""
    state = node.state()
    machine_state = state.get_machine_state()
    for pod in pods:
        for container in pod.all_containers():
            release_memory(machine_state, state.get_memory_blocks(pod.uid, container.name) or [])
        release_memory(machine_state, state.get_pod_memory_blocks(pod.uid) or [])
    return machine_state


def _without(node: SimulatedNode, pods: tuple[Pod, ...], pod: Pod, extra: Extra) -> RemovalFix | None:
    """The pod's admission on a fork without `pods`: a RemovalFix when admitted, else None."""
    trial = node.fork()
    for gone in pods:
        trial.remove(gone)
    freed = _freed(node.state().get_machine_state(), trial.state().get_machine_state())
    freed_cpus, freed_devices = _freed_cpus(node, trial), _freed_devices(node, pods)
    outcome = trial.admit(pod, extra)
    if not outcome.admit:
        return None
    return RemovalFix(tuple(p.name for p in pods), tuple(p.uid for p in pods), freed, admission_of(trial, pod, outcome),
                      freed_cpus, freed_devices)


def _freed_cpus(before: SimulatedNode, after: SimulatedNode) -> str:
    """The CPUs that joined the shared pool from one node to the other ("" none)."""
    if before.cpu_manager is None or after.cpu_manager is None:
        return ""
    grown = after.cpu_manager.get_default_cpu_set().difference(before.cpu_manager.get_default_cpu_set())
    return "" if grown.is_empty() else str(grown)


def _freed_devices(node: SimulatedNode, pods: tuple[Pod, ...]) -> dict[str, tuple[str, ...]]:
    """Per device resource, the devices the pods hold (kubelet frees them at its next allocation)."""
    if node.device_manager is None:
        return {}
    pod_devices = node.device_manager.state().pod_devices
    freed = {r: tuple(sorted(set().union(*(pod_devices.pod_devices(p.uid, r) for p in pods))))
             for r in sorted(node.device_manager.allocated_devices())}
    return {r: ids for r, ids in freed.items() if ids}


def _cpus_held(node: SimulatedNode, uid: str) -> int:
    """The exclusive CPUs a pod holds (0 under the none policy)."""
    if node.cpu_manager is None:
        return 0
    reader = node.cpu_manager.state()
    held = [c for c in (reader.get_cpu_assignments().get(uid) or {}).values()]
    pod_set = reader.get_pod_cpu_set(uid)
    return sum(c.size() for c in held) + (pod_set.size() if pod_set is not None else 0)


def _devices_held(node: SimulatedNode, uid: str) -> int:
    """The devices a pod holds (every resource)."""
    if node.device_manager is None:
        return 0
    pod_devices = node.device_manager.state().pod_devices
    return sum(len(pod_devices.pod_devices(uid, r)) for r in node.device_manager.allocated_devices())


def _freed(before: NUMANodeMap, after: NUMANodeMap) -> dict[int, dict[str, int]]:
    """Bytes freed per node and resource from one machine state to another."""
    freed: dict[int, dict[str, int]] = {}
    for node_id, state in sorted(before.items()):
        for resource, table in (state.memory_map or {}).items():
            new = (after[node_id].memory_map or {}).get(resource)
            if table is not None and new is not None and new.free > table.free:
                freed.setdefault(node_id, {})[resource] = new.free - table.free
    return freed


def removals_that_admit(node: SimulatedNode, pod: Pod, extra: Extra = None, max_pods: int = MAX_REMOVED,
                        max_checks: int = MAX_CHECKS) -> RemovalSearch:
    """Which admitted pods' removal lets `pod` in, fewest pods first (at most MAX_REMOVAL_FIXES sets of the
    smallest size found, each checked); see the module's docstring."""
    assigned = node.state().get_memory_assignments()
    memory_holders = {p.uid for p in node.active_pods() if assigned.get(p.uid) or node.state().get_pod_memory_blocks(p.uid)}
    cpus = {p.uid: _cpus_held(node, p.uid) for p in node.active_pods()}
    devices = {p.uid: _devices_held(node, p.uid) for p in node.active_pods()}
    holders = [p for p in node.active_pods() if p.uid != pod.uid
               and (p.uid in memory_holders or cpus[p.uid] or devices[p.uid])]
    pins_more = (node.cpu_manager is not None and node.cpu_manager.policy_name() != CPU_POLICY_NONE) or (
        node.device_manager is not None and node.device_manager.can_have_opinion())
    what = "memory, exclusive CPUs or devices" if pins_more else "memory"
    if not holders:
        return RemovalSearch((), 0, False, f"no admitted pod holds {what}: removing pods changes nothing")
    every_fix = _without(node, tuple(holders), pod, extra)
    checks = 1
    if every_fix is None:
        return RemovalSearch((), checks, False, f"even with all {len(holders)} pod(s) holding {what} removed it is "
                                                 "refused: removing pods does not help")
    requested = _first_request(node, pod)
    prefilter = requested is not None and len(node.state().get_machine_state()) <= MAX_MASK_NODES
    size = {p.uid: (_held_bytes(node, p.uid), cpus[p.uid], devices[p.uid]) for p in holders}
    exhausted = False
    for count in range(1, min(max_pods, len(holders) - 1) + 1):
        found: list[RemovalFix] = []
        for combo in sorted(itertools.combinations(holders, count), key=lambda c: tuple(map(sum, zip(*(size[p.uid] for p in c))))):
            if prefilter and not _some_mask_fits(_released(node, combo), requested):
                continue
            if checks >= max_checks:
                exhausted = True
                break
            fix = _without(node, combo, pod, extra)
            checks += 1
            if fix is not None:
                found.append(fix)
                if len(found) >= MAX_REMOVAL_FIXES:
                    break
        if found:
            return RemovalSearch(tuple(found), checks, exhausted)
        if exhausted:
            break
    limit = min(max_pods, len(holders) - 1)
    note = (f"no set of up to {limit} pod(s) lets it in" + (" within the search budget" if exhausted else "")
            + f"; removing all {len(holders)} pod(s) holding {what} does") if limit else ""
    return RemovalSearch((every_fix,), checks, exhausted, note)


# ----- other settings ---------------------------------------------------------------------------


def restarted_with(node: SimulatedNode, fields: Mapping[str, object], folder: str) -> SimulatedNode:
    """A new node restarted from a copy of `node`'s state with changed KubeletConfiguration fields, its
    checkpoints (memory, CPU and device managers') in `folder` (as kubelet restarts with a new configuration;
    `node` is not touched). Raises KubeletStartError when kubelet would not start so."""
    config = parse_kubelet_config(dict(fields), "what-if", base=node.config, limits=node.limits)
    state = node.state()
    blob = encode_checkpoint(node.memory_manager.policy_name(), state.get_machine_state(),
                             state.get_memory_assignments(), state.get_pod_memory_assignments())
    with open(os.path.join(folder, CHECKPOINT_FILE_NAME), "wb") as fh:
        fh.write(blob)
    with open(os.path.join(folder, CPU_CHECKPOINT_FILE_NAME), "wb") as fh:
        fh.write(node.cpu_manager.checkpoint_bytes())
    os.makedirs(os.path.join(folder, DEVICE_CHECKPOINT_DIR), exist_ok=True)
    with open(os.path.join(folder, DEVICE_CHECKPOINT_DIR, DEVICE_CHECKPOINT_FILE_NAME), "wb") as fh:
        fh.write(node.device_manager.checkpoint_bytes())
    restarted = SimulatedNode(node.machine, config, folder, node.merge_fn, limits=node.limits, devices=node.devices)
    restarted.file_ops = NoSyncFileOps(node.limits)  # a throwaway folder
    restarted.assume_running(node.active_pods())
    restarted.start()
    return restarted


def _settings(node: SimulatedNode, extra: Extra) -> list[tuple[str, str]]:
    """Every (policy, scope) but the node's own; injected hints given for one scope are tried in that scope only."""
    scopes = SCOPES
    if extra is not None:
        scopes = (POD_SCOPE,) if extra.pod_scoped else ("container",)
    current = (node.config.topology_manager_policy, node.config.topology_manager_scope)
    out = []
    for policy in TOPOLOGY_POLICIES:
        for scope in ((scopes[0],) if policy == POLICY_NONE else scopes):
            if (policy, scope) != current and not (policy == POLICY_NONE and current[0] == POLICY_NONE):
                out.append((policy, scope))
    return out


def other_settings(node: SimulatedNode, pod: Pod, extra: Extra = None) -> list[SettingTry]:
    """The pod's admission under every other topology manager policy and scope (one restart each)."""
    tries: list[SettingTry] = []
    for policy, scope in _settings(node, extra):
        with tempfile.TemporaryDirectory(prefix="memorymanager-whatif-") as folder:
            try:
                restarted = restarted_with(node, {"topologyManagerPolicy": policy, "topologyManagerScope": scope},
                                           folder)
            except KubeletStartError as exc:
                tries.append(SettingTry(policy, scope, None, str(exc)))
                continue
            tries.append(SettingTry(policy, scope, admission_of(restarted, pod, restarted.admit(pod, extra))))
    return tries


# ----- the largest request of the same shape ----------------------------------------------------


def _unit(resource: str) -> int:
    """The rounding unit of a resource: its page size for hugepages, 1Mi for memory."""
    if is_hugepage_resource(resource):
        try:
            return parse_quantity(resource.split("-", 1)[1]).value_bytes()
        except Exception:
            return MI
    return MI


def _memory_quantities(pod: Pod) -> dict[tuple[str, str], int]:
    """(container or `pod`, resource) -> bytes of every memory and hugepages request the pod makes."""
    out: dict[tuple[str, str], int] = {}
    for container in pod.all_containers():
        for name, quantity in (container.resources.requests or {}).items():
            if is_memory_resource(name):
                out[(container.name, name)] = quantity.value_bytes()
    if pod.resources is not None:
        for name, quantity in (pod.resources.requests or {}).items():
            if is_memory_resource(name):
                out[(POD_SCOPE, name)] = quantity.value_bytes()
    return {k: v for k, v in out.items() if v > 0}


class _Shape:
    """The pod scaled by k units of its largest memory request, every request rounded down to its unit."""

    def __init__(self, pod: Pod, uid: str) -> None:
        """The pod's requests, the primary one (the largest) and its unit."""
        self.pod, self.uid = pod, uid
        self.sizes = _memory_quantities(pod)
        self.primary = max(self.sizes, key=lambda k: (self.sizes[k], k)) if self.sizes else None
        self.unit = _unit(self.primary[1]) if self.primary else MI

    def requests(self, k: int) -> dict[tuple[str, str], int]:
        """Each request at k units of the primary one."""
        base = self.sizes[self.primary]
        return {key: (size * k * self.unit // base) // _unit(key[1]) * _unit(key[1]) for key, size in self.sizes.items()}

    def smallest_k(self) -> int:
        """The fewest units at which no request rounds down to zero (the pod keeps its shape and QoS)."""
        base = self.sizes[self.primary]
        return max(1, max(-(-_unit(key[1]) * base // (size * self.unit)) for key, size in self.sizes.items()))

    def k_of(self, size: int, request: int) -> int:
        """The units at which a request of `request` bytes becomes `size` bytes."""
        return size * self.sizes[self.primary] // (request * self.unit)

    def pod_at(self, k: int) -> Pod:
        """The pod with every memory and hugepages request (and limit) at k units."""
        sizes = self.requests(k)

        def scaled(owner: str, res: ResourceRequirements) -> ResourceRequirements:
            """One container's (or the pod's) resources, scaled."""
            def one(values: dict[str, Quantity]) -> dict[str, Quantity]:
                return {name: (Quantity.from_int(sizes[(owner, name)], BINARY_SI) if (owner, name) in sizes else q)
                        for name, q in values.items()}
            return ResourceRequirements(one(res.requests or {}), one(res.limits or {}))

        def container(c: Container) -> Container:
            return replace(c, resources=scaled(c.name, c.resources))

        return replace(self.pod, uid=self.uid, init_containers=[container(c) for c in self.pod.init_containers],
                       containers=[container(c) for c in self.pod.containers],
                       resources=None if self.pod.resources is None else scaled(POD_SCOPE, self.pod.resources))

    def shown(self, k: int) -> dict[str, dict[str, int]]:
        """The requests at k units, container -> resource -> bytes."""
        out: dict[str, dict[str, int]] = {}
        for (owner, name), size in self.requests(k).items():
            out.setdefault(owner, {})[name] = size
        return out


def _breakpoints(node: SimulatedNode, shape: _Shape) -> set[int]:
    """The units at which some request (or a sum of the pod's requests of one resource) exactly uses up
    some mask's free or allocatable memory: where admission can change from yes to no."""
    machine_state = node.state().get_machine_state()
    nodes = sorted(machine_state)
    masks = (list(bitmask.iterate_bit_masks(nodes)) if len(nodes) <= MAX_MASK_NODES
             else [bitmask.new_bitmask(n) for n in nodes] + [bitmask.new_bitmask(*nodes)]
             + [bitmask.new_bitmask(*(s.cells or [])) for s in machine_state.values() if len(s.cells or []) > 1])
    by_resource: dict[str, list[int]] = {}
    for (_, name), size in shape.sizes.items():
        by_resource.setdefault(name, []).append(size)
    points: set[int] = set()
    for name, sizes in by_resource.items():
        sums = set(sizes) | {sum(sizes)} | set(itertools.accumulate(sizes))
        for mask in masks:
            free = allocatable = 0
            for node_id in bitmask.get_bits(mask):
                table = (machine_state[node_id].memory_map or {}).get(name)
                if table is not None:
                    free, allocatable = free + table.free, allocatable + table.allocatable
            for total in sums:
                points.add(shape.k_of(free, total))
                points.add(shape.k_of(allocatable, total))
    return points


def unpinned_reason(node: SimulatedNode, pod: Pod) -> str:
    """Why the memory manager pins none of the pod's memory (so its size never decides admission), or ""."""
    if not isinstance(node.memory_manager.policy, StaticPolicy):
        return "memory manager policy None pins no memory"
    gates = FeatureGates.from_config(node.config.feature_gates)
    qos = get_pod_qos(pod, gates.enabled(POD_LEVEL_RESOURCES_GATE))
    if qos != GUARANTEED:
        return f"the pod is {qos}: only Guaranteed pods get exclusive NUMA memory"
    if not _memory_quantities(pod):
        return "the pod requests no memory and no hugepages"
    return ""


def largest_admissible(node: SimulatedNode, pod: Pod, extra: Extra = None,
                       max_checks: int = MAX_CHECKS) -> tuple[Optional[LargestFit], int]:
    """The largest request of the pod's shape admitted now (see the module's docstring), None when no size
    is admitted, and the number of admissions checked. The pod must ask for memory or hugepages."""
    active = {p.uid for p in node.active_pods()}
    shape = _Shape(pod, pod.uid if pod.uid not in active else pod.uid + "-what-if")
    if shape.primary is None:
        return None, 0
    low = shape.smallest_k()
    machine_state = node.state().get_machine_state()
    capacity = sum(((s.memory_map or {}).get(shape.primary[1]).allocatable
                    if (s.memory_map or {}).get(shape.primary[1]) is not None else 0) for s in machine_state.values())
    high = max(low, shape.k_of(capacity, shape.sizes[shape.primary]))  # the primary request alone fills the node
    candidates = sorted({k for k in _breakpoints(node, shape) | {high} if low <= k <= high}, reverse=True)
    checks = 0
    verdicts: dict[int, tuple[bool, Admission]] = {}

    def admitted(k: int) -> bool:
        """Admit the pod at k units on a fork (remembered)."""
        nonlocal checks
        if k not in verdicts:
            trial = node.fork()
            scaled = shape.pod_at(k)
            outcome = trial.admit(scaled, extra)
            checks += 1
            verdicts[k] = (outcome.admit, admission_of(trial, scaled, outcome))
        return verdicts[k][0]

    best, above = None, high + 1
    for k in candidates:
        if checks >= max_checks:
            break
        if admitted(k):
            best = k
            break
        above = k
    if best is None:
        return None, checks
    while above - best > 1 and checks < max_checks:  # the gap up to the next size tried, assumed one step down
        middle = (best + above) // 2
        if admitted(middle):
            best = middle
        else:
            above = middle
    if above == high + 1 and checks < max_checks:
        admitted(above)  # beyond the node's allocatable: refused for certain, checked all the same
    refused = above if above in verdicts and not verdicts[above][0] and above - best == 1 else None
    return LargestFit(shape.shown(best), verdicts[best][1], None if refused is None else shape.shown(refused),
                      checks), checks
