"""Computing the explanation of one pod on a node, from the code that decides.

The admission (or the hint query) runs on an in-memory fork of the node
(`memorymanager.node.api.fork_in_memory`), so the node itself is untouched. Two taps on
the fork record what the deciding code saw and answered: the memory manager tap (state
and re-usable memory at each hint call, machine state around each Allocate) and the
policy tap (every provider's hints at each merge, and the merge's result). The parts
are then filled in by calling the same pure functions the managers decide with:

* QoS: `kubeinputs.qos.get_pod_qos_explained`; requests: `memorymanager.requests`;
* hints: `hints.check_mask` / `hints.preferred_width` (the body of calculateHints'
  loop), `hints.regenerate_hints`;
* merge: `filter_providers_hints`, `filter_single_numa_hints`, and the fast merge's
  building blocks (`preferred_candidates`, `produced_masks`,
  `max_of_min_affinity_counts`, `fitter_key_for`, `non_preferred_rank`);
* decision: the policy's `can_admit_pod_result` and the admission result itself;
* allocation: machine-state differences around the real Allocate calls.

Each recomputed result is compared with the one the managers produced (`consistent`).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from kubeinputs.features import FeatureGates
from kubeinputs.pod import Pod
from kubeinputs.qos import GUARANTEED, get_pod_qos_explained
from memorymanager.explain.model import (
    AllocationPart,
    Asked,
    ContainerAllocation,
    ContainerAsk,
    Decision,
    Explanation,
    HintsPart,
    MaskRow,
    MergePart,
    PodPart,
    ProviderList,
    Rival,
    Take,
)
from memorymanager.explain.units import fmt_bytes, fmt_nodes, fmt_sizes
from memorymanager.hints import (
    GROUP_JOINS_SINGLE,
    GROUP_NOT_EQUAL,
    GROUP_OK,
    GROUP_SINGLE_IN_GROUP,
    MaskCheck,
    check_mask,
    preferred_width,
    regenerate_hints,
)
from memorymanager.node.api import fork_in_memory
from memorymanager.node.simulated_node import POD_SCOPE, SimulatedNode
from memorymanager.policy import MemoryManagerError
from memorymanager.policy_static import StaticPolicy
from memorymanager.requests import (
    get_container_requested_resources,
    get_pod_requested_resources,
    is_container_equivalent_guaranteed,
    is_pod_level_resources_set,
    is_restartable_init_container,
    pod_request_parts,
)
from memorymanager.reusable_memory import ReusableMemory
from state.checkpoint import assignments_to_obj, blocks_to_obj, machine_state_to_obj
from state.types import NUMANodeMap, clone_machine_state
from topologymanager import bitmask
from topologymanager.fast_merge import (
    fitter_key_for,
    non_preferred_rank,
    preferred_candidates,
    produced_masks,
)
from topologymanager.hint import TopologyHint
from topologymanager.merge import filter_providers_hints, max_of_min_affinity_counts
from topologymanager.policy import POLICY_NONE, POLICY_SINGLE_NUMA_NODE
from topologymanager.policy_single_numa_node import filter_single_numa_hints

# Masks listed in full up to this many NUMA nodes (15 masks); beyond, only those that matter.
FULL_TABLE_NODES = 4
MAX_PREFERRED_ROWS = 32
MAX_NON_PREFERRED_ROWS = 8
MAX_FAILING_ROWS = 16
MAX_RIVALS = 3

MEMORY_MANAGER = "memory manager"
INJECTED = "injected hints (other providers)"


# ----- taps ---------------------------------------------------------------------------------------


@dataclass
class _HintCall:
    """One hint call of the memory manager, with what it saw."""

    target: str
    pod_uid: str
    container: Any
    machine_state: NUMANodeMap
    assignments: dict
    pod_assignments: dict
    reusable: ReusableMemory
    result: Any


@dataclass
class _AllocateCall:
    """One Allocate (or AllocatePod) of the memory manager, with the state around it."""

    target: str
    container: Any
    before: NUMANodeMap
    after: Optional[NUMANodeMap] = None
    reusable_before: Optional[ReusableMemory] = None
    error: str = ""
    blocks: Optional[list] = None  # the container's (or pod's) blocks right after the call


@dataclass
class _MergeCall:
    """One topology manager merge: every provider's hints and the result."""

    providers_hints: list
    best: TopologyHint
    admit: bool


class _ManagerTap:
    """Stands for the memory manager; passes every call through and records what it saw."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.hint_calls: list[_HintCall] = []
        self.allocate_calls: list[_AllocateCall] = []

    def _reusable_copy(self) -> ReusableMemory:
        """The Static policy's re-usable memory as it is now (empty for other policies)."""
        reusable = getattr(self.inner.policy, "reusable", None)
        return ReusableMemory(copy.deepcopy(reusable.by_pod) if reusable is not None else {})

    def _record_hints(self, pod: Any, target: str, container: Any, call) -> Any:
        self.inner.remove_stale_state()  # what the call does first; doing it twice changes nothing
        state = self.inner.state()
        seen = _HintCall(target, pod.uid, container, state.get_machine_state(), state.get_memory_assignments(),
                         state.get_pod_memory_assignments(), self._reusable_copy(), None)
        seen.result = call()
        self.hint_calls.append(seen)
        return seen.result

    def get_topology_hints(self, pod: Any, container: Any) -> Any:
        """The manager's container hints (recorded)."""
        return self._record_hints(pod, container.name, container, lambda: self.inner.get_topology_hints(pod, container))

    def get_pod_topology_hints(self, pod: Any) -> Any:
        """The manager's pod hints (recorded)."""
        return self._record_hints(pod, POD_SCOPE, None, lambda: self.inner.get_pod_topology_hints(pod))

    def _record_allocate(self, pod: Any, target: str, container: Any, call) -> None:
        self.inner.remove_stale_state()
        seen = _AllocateCall(target, container, self.inner.state().get_machine_state(),
                             reusable_before=self._reusable_copy())
        self.allocate_calls.append(seen)
        try:
            call()
        except Exception as exc:
            seen.error = str(exc)
            raise
        finally:
            state = self.inner.state()
            seen.after = state.get_machine_state()
            seen.blocks = (state.get_memory_blocks(pod.uid, container.name) if container is not None
                           else state.get_pod_memory_blocks(pod.uid))

    def allocate(self, pod: Any, container: Any) -> None:
        """The manager's Allocate (recorded)."""
        self._record_allocate(pod, container.name, container, lambda: self.inner.allocate(pod, container))

    def allocate_pod(self, pod: Any) -> None:
        """The manager's AllocatePod (recorded)."""
        self._record_allocate(pod, POD_SCOPE, None, lambda: self.inner.allocate_pod(pod))

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class _PolicyTap:
    """Stands for the topology manager policy; records every merge."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[_MergeCall] = []

    @property
    def name(self) -> str:
        """The policy's name."""
        return self.inner.name

    def merge(self, providers_hints: Sequence[Any]) -> tuple[TopologyHint, bool]:
        """The policy's merge (recorded, with a copy of the hints it was given)."""
        given = [None if h is None else {r: (None if l is None else list(l)) for r, l in h.items()}
                 for h in providers_hints]
        best, admit = self.inner.merge(providers_hints)
        self.calls.append(_MergeCall(given, best, admit))
        return best, admit

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


# ----- entry point ----------------------------------------------------------------------------------


def explain_pod(node: SimulatedNode, pod: Pod, extra: Optional[Any] = None, op: str = "admit",
                keep: Optional[dict] = None) -> Explanation:
    """The explanation of admitting `pod` (op `admit`) or of its hints (op `hints`) on `node`.

    `extra` is the other providers' hint provider for the admission (as `SimulatedNode.admit`
    takes it). The node is not changed. `keep`, when given, receives the copy's machine state
    and assignments after the admission (`machine_state`, `entries`, checkpoint shapes), for
    drawing it.
    """
    if not node.running:
        why = f" (start failed: {node.start_error})" if node.start_error else ""
        return Explanation(op=op, error=f"the node is not running{why}")
    trial = fork_in_memory(node)
    tap = _ManagerTap(trial.memory_manager)
    scope = trial.topology_manager.scope
    policy_tap = _PolicyTap(scope.policy)
    before = trial.memory_manager.state().get_machine_state()
    explanation = Explanation(op=op, asked=build_asked(trial, pod))
    if op == "hints":
        trial.memory_manager = tap
        trial.topology_hints(pod)
    else:
        trial._recorder.inner = tap
        scope.policy = policy_tap
        outcome = trial.admit(pod, extra)
        trial.memory_manager = tap.inner
        scope.policy = policy_tap.inner
    explanation.hints = [build_hints_part(trial, pod, call) for call in tap.hint_calls]
    if op == "hints":
        return explanation
    targets = [POD_SCOPE] if scope.name == POD_SCOPE else [c.name for c in pod.all_containers()]
    explanation.merges = [
        build_merge_part(policy_tap.inner, target, call) for target, call in zip(targets, policy_tap.calls)
    ]
    explanation.decision = build_decision(trial, pod, explanation, outcome)
    explanation.allocation = build_allocation(trial, pod, tap.allocate_calls, before)
    if keep is not None:
        reader = trial.memory_manager.state()
        keep["machine_state"] = machine_state_to_obj(reader.get_machine_state())
        keep["entries"] = assignments_to_obj(reader.get_memory_assignments())
    return explanation


# ----- part 1: what is asked --------------------------------------------------------------------------


def _kind(pod: Pod, container: Any) -> str:
    if container in pod.init_containers:
        return "sidecar" if is_restartable_init_container(container) else "init"
    return "app"


def _gates(node: SimulatedNode) -> FeatureGates:
    policy = node.memory_manager.policy
    gates = getattr(policy, "feature_gates", None)
    return gates if gates is not None else FeatureGates.from_config(node.config.feature_gates)


def build_asked(node: SimulatedNode, pod: Pod) -> Asked:
    """Part 1: QoS class and the rule behind it; each container's request and why it asks nothing."""
    policy = node.memory_manager.policy
    gates = _gates(node)
    qos, qos_reason = get_pod_qos_explained(pod, gates.enabled("PodLevelResources"))
    scope = node.topology_manager.scope.name
    asked = Asked(pod.name, pod.uid, qos, qos_reason, node.memory_manager.policy_name(),
                  node.topology_manager.get_policy().name, scope)
    static = isinstance(policy, StaticPolicy)
    for container in pod.all_containers():
        ask = ContainerAsk(container.name, _kind(pod, container), {})
        if not static:
            ask.note = "memory manager policy None: no exclusive memory and no hints"
        else:
            try:
                ask.requested = get_container_requested_resources(pod, container, policy._plrm)
            except MemoryManagerError as exc:
                ask.note = f"the request cannot be read: {exc}"
            if ask.note:
                pass  # the request itself is the problem
            elif qos != GUARANTEED:
                ask.note = f"the pod is {qos}: the Static policy serves only Guaranteed pods"
            elif policy._skip_pod_level(pod):
                ask.note = "the pod sets pod-level resources, which this kubelet's Static policy skips"
            elif (policy._plrm and is_pod_level_resources_set(pod)
                  and not is_container_equivalent_guaranteed(container)):
                ask.note = "not equivalent-Guaranteed: it uses the pod's shared memory pool"
            elif not ask.requested:
                ask.note = "requests no memory and no hugepages"
            elif _non_integral_cpu(container):
                ask.note = "its CPU request is not an integer; that matters to the CPU manager, not to memory"
        asked.containers.append(ask)
    if static and scope == POD_SCOPE and qos == GUARANTEED:
        try:
            total = get_pod_requested_resources(pod, policy._plrm)
        except MemoryManagerError as exc:
            asked.containers.append(ContainerAsk(POD_SCOPE, "pod", {}, f"the request cannot be read: {exc}"))
            return asked
        if policy._plrm and is_pod_level_resources_set(pod):
            note = "pod-level resources: the pod's own spec.resources requests"
        else:
            parts = pod_request_parts(pod, policy._plrm)
            asked.pod_parts = [PodPart(r, p.app, p.sidecars, p.init_peak, p.peak_container, p.total)
                               for r, p in parts.items()]
            note = "per resource: max(app containers + sidecars, the largest init container with the sidecars before it)"
        asked.containers.append(ContainerAsk(POD_SCOPE, "pod", total, note))
    return asked


def _non_integral_cpu(container: Any) -> bool:
    cpu = (container.resources.requests or {}).get("cpu")
    return cpu is not None and cpu.value.denominator != 1


# ----- part 2: the memory manager's hints ----------------------------------------------------------------


def _hints_obj(hints: Any) -> Optional[dict]:
    if hints is None:
        return None
    return {r: (None if l is None else [h.to_dict() for h in l]) for r, l in hints.items()}


def _requested_for(policy: StaticPolicy, pod: Pod, call: _HintCall) -> dict[str, int]:
    if call.container is None:
        return get_pod_requested_resources(pod, policy._plrm)
    return get_container_requested_resources(pod, call.container, policy._plrm)


def _held_blocks(policy: StaticPolicy, pod: Pod, call: _HintCall) -> tuple[Optional[list], str, dict]:
    """The blocks the policy regenerates hints from (None: it calculates), a label, and the request."""
    containers = call.assignments.get(pod.uid) or {}
    requested = _requested_for(policy, pod, call)
    if call.container is not None:
        if call.container.name in containers:
            return containers[call.container.name] or [], f"container {call.container.name!r} already holds memory", requested
        return None, "", requested
    if policy._plrm and is_pod_level_resources_set(pod):
        entry = call.pod_assignments.get(pod.uid)
        if entry is not None:
            return list(entry.memory_blocks or []), "the pod already holds pod-level memory", requested
    for container in pod.all_containers():
        if container.name in containers:
            if policy._plrm:
                requested = get_container_requested_resources(pod, container, True)
            return containers[container.name] or [], f"container {container.name!r} already holds memory", requested
    return None, "", requested


def build_hints_part(node: SimulatedNode, pod: Pod, call: _HintCall) -> HintsPart:
    """Part 2 for one hint call: the path the policy took, and per mask the numbers it judged on."""
    policy = node.memory_manager.policy
    part = HintsPart(call.target, "none", "", {}, _hints_obj(call.result))
    if not isinstance(policy, StaticPolicy):
        part.note = "memory manager policy None gives no hints (no preference)"
        return part
    if not policy._is_guaranteed(pod):
        part.note = "the pod is not Guaranteed: no hints (no preference)"
        return part
    try:
        held, label, requested = _held_blocks(policy, pod, call)
    except MemoryManagerError as exc:
        part.note = f"the request cannot be read ({exc}): no hints (no preference)"
        return part
    part.requested = requested
    if policy._skip_pod_level(pod):
        part.note = "pod-level resources are skipped by this kubelet: no hints (no preference)"
        return part
    if policy._plrm and not requested:
        part.note = "nothing requested on this path: no hints (no preference)"
        return part
    if held is not None:
        part.path = "regenerated"
        again = regenerate_hints(held, requested)
        part.consistent = _hints_obj(again) == part.hints
        if again is None:
            part.note = (f"{label}; its blocks ({_blocks_text(held)}) do not match the request "
                         f"({fmt_sizes(requested)}): no hints (no preference), so Allocate keeps the old blocks")
        else:
            part.note = f"{label}: the hints pin it to its blocks ({_blocks_text(held)}), all preferred"
        return part
    part.path = "calculated"
    _mask_table(part, call, requested)
    return part


def _blocks_text(blocks: list) -> str:
    return "; ".join(f"{b.type} {fmt_bytes(b.size)} on {fmt_nodes(b.numa_affinity or [])}" for b in blocks) or "none"


def _verdict(check: MaskCheck, requested: dict[str, int], width: int, machine_state: NUMANodeMap) -> tuple[str, str]:
    """(kind, sentence) for one mask."""
    if not check.allocatable_ok:
        resource = next(r for r, s in requested.items() if check.allocatable.get(r, 0) < s)
        return "allocatable", (f"allocatable {resource} {fmt_bytes(check.allocatable.get(resource, 0))}"
                               f" < {fmt_bytes(requested[resource])}")
    if check.group_rule != GROUP_OK:
        node = check.group_node
        cells = fmt_nodes((machine_state[node].cells or []) if node in machine_state else [])
        text = {
            GROUP_SINGLE_IN_GROUP: f"node {node} belongs to the multi-NUMA group {cells}: not usable alone",
            GROUP_JOINS_SINGLE: f"node {node} already holds single-NUMA memory: no group may include it",
            GROUP_NOT_EQUAL: f"node {node} is in the group {cells}; a mask touching a group must equal it",
        }[check.group_rule]
        return "group", text
    if not check.fits:
        resource = next(r for r, s in requested.items() if check.free.get(r, 0) + check.reusable.get(r, 0) < s)
        reuse = check.reusable.get(resource, 0)
        extra = f" + re-usable {fmt_bytes(reuse)}" if reuse else ""
        return "free", f"free {resource} {fmt_bytes(check.free.get(resource, 0))}{extra} < {fmt_bytes(requested[resource])}"
    if bitmask.count(check.mask) == width:
        return "hint", "hint, preferred"
    return "hint", f"hint, not preferred (wider than {width})"


def _mask_table(part: HintsPart, call: _HintCall, requested: dict[str, int]) -> None:
    """Fill the mask rows of a calculated hint list (all masks on small machines, else those that matter)."""
    machine_state = clone_machine_state(call.machine_state)
    lookup = call.reusable.lookup(call.pod_uid)
    nodes = sorted(machine_state)
    try:
        checks = [check_mask(machine_state, m, requested, lookup) for m in bitmask.iterate_bit_masks(nodes)]
    except Exception as exc:  # calculateHints itself failed the same way
        part.note = f"the hints cannot be calculated: {exc}"
        return
    width = preferred_width(checks, len(nodes))
    part.preferred_width = width
    part.total_masks = len(checks)
    passing = [c for c in checks if c.passes]
    recomputed = [{"numaAffinity": bitmask.get_bits(c.mask), "preferred": bitmask.count(c.mask) == width}
                  for c in passing]
    returned = (part.hints or {}).get(next(iter(requested), ""), []) if part.hints else []
    part.consistent = recomputed == (returned or [])
    if not passing:
        part.note = "no mask can hold the request: an empty hint map (kubelet's merge reads it as no preference)"
    else:
        part.note = (f"{len(passing)} of {len(checks)} masks can hold {fmt_sizes(requested)}; preferred are those "
                     f"of {width} node(s), the narrowest width with enough allocatable memory")
    chosen = _rows_that_matter(checks, width, len(nodes))
    for check in checks:
        kind, text = _verdict(check, requested, width, machine_state)
        if check.mask in chosen:
            part.masks.append(MaskRow(
                bitmask.get_bits(check.mask), check.free, check.allocatable, check.allocatable_ok,
                check.group_rule, check.group_node, check.reusable, check.fits,
                check.passes, check.passes and bitmask.count(check.mask) == width, text))
        else:
            part.omitted[kind] = part.omitted.get(kind, 0) + 1


def _rows_that_matter(checks: list[MaskCheck], width: int, n: int) -> set[int]:
    """All masks on small machines; else the preferred hints, the first non-preferred ones, and
    the failing masks no wider than the preferred width (why a narrower one was not taken)."""
    if n <= FULL_TABLE_NODES:
        return {c.mask for c in checks}
    preferred = [c.mask for c in checks if c.passes and bitmask.count(c.mask) == width][:MAX_PREFERRED_ROWS]
    others = [c.mask for c in checks if c.passes and bitmask.count(c.mask) != width][:MAX_NON_PREFERRED_ROWS]
    failing = [c.mask for c in checks if not c.passes and bitmask.count(c.mask) <= max(width, 1)][:MAX_FAILING_ROWS]
    return set(preferred) | set(others) | set(failing)


# ----- part 3: the merge ----------------------------------------------------------------------------------


def _list_labels(providers_hints: list) -> list[tuple[str, str]]:
    """(provider, resource) of each list `filter_providers_hints` makes, in its order."""
    labels = []
    for index, hints in enumerate(providers_hints):
        provider = MEMORY_MANAGER if index == 0 else INJECTED
        if not hints:
            labels.append((provider, "(no preference)"))
        else:
            labels.extend((provider, resource) for resource in hints)
    return labels


def _hint_dicts(hints: Sequence[TopologyHint]) -> list[dict]:
    return [h.to_dict() for h in hints]


def _key_rule(winner: tuple, rival: tuple, uses_distance: bool) -> str:
    if winner[0] != rival[0]:
        return f"narrower: {winner[0]} node(s) against {rival[0]}"
    if uses_distance and winner[1] != rival[1]:
        return f"closer (prefer-closest-numa-nodes): average distance {winner[1]:.2f} against {rival[1]:.2f}"
    return "same width" + (" and distance" if uses_distance else "") + ": the lower mask wins"


def _rank_rule(winner: int, rival: int, best: int, key, uses_distance: bool) -> str:
    """The rule by which a non-preferred merged mask beat another (the fast merge's order)."""
    rw, rr = non_preferred_rank(winner, best), non_preferred_rank(rival, best)
    cw, cr = winner.bit_count(), rival.bit_count()
    if rw == rr:
        return _key_rule(key(winner), key(rival), uses_distance)
    if rw[0] == 0:
        return f"exactly BestNonPreferredAffinityCount = {best} node(s) beats {cr}"
    if rw[0] == 1 and rr[0] == 1:
        return f"below BestNonPreferredAffinityCount = {best}, more nodes win: {cw} against {cr}"
    return f"below BestNonPreferredAffinityCount = {best} ({cw} node(s)) beats above it ({cr})"


def build_merge_part(policy: Any, target: str, call: _MergeCall) -> MergePart:
    """Part 3 for one merge, recomputed with the fast merge's building blocks."""
    labels = _list_labels(call.providers_hints)
    if policy.name == POLICY_NONE:
        return MergePart(target, policy.name, False, [], 0, "policy-none", None, 0, 0, call.best.to_dict(),
                         "topology manager policy none: nothing is merged; every pod gets the empty hint",
                         admit=call.admit, admit_rule="none admits every pod")
    numa_info = policy.numa_info
    prefer_closest = bool(policy.opts.prefer_closest_numa)
    lists = filter_providers_hints(call.providers_hints)
    single = policy.name == POLICY_SINGLE_NUMA_NODE
    filtered = filter_single_numa_hints(lists) if single else lists
    provider_lists = [ProviderList(p, r, _hint_dicts(raw), _hint_dicts(kept))
                      for (p, r), raw, kept in zip(labels, lists, filtered)]
    combinations = math.prod(len(hints) for hints in filtered)
    default = numa_info.default_affinity_mask()
    key = fitter_key_for(numa_info, policy.name, prefer_closest)
    uses_distance = prefer_closest and not single
    part = MergePart(target, policy.name, prefer_closest, provider_lists, combinations, "", None, 0, 0, {}, "")
    if single:
        dropped = sum(len(a) - len(b) for a, b in zip(lists, filtered))
        part.single_numa_note = ("single-numa-node keeps only preferred hints on one node (or any node)"
                                 + (f": {dropped} hint(s) dropped" if dropped else ""))
    if any(len(hints) == 0 for hints in filtered):
        empty = [f"{pl.provider} {pl.resource}" for pl, hints in zip(provider_lists, filtered) if not hints]
        result = TopologyHint(default, False)
        part.path = "empty-list"
        part.rule = (f"no combination exists: the list of {', '.join(empty)} is empty"
                     + (" after the filter" if single else "") + "; the result is all nodes, not preferred")
    else:
        preferred = preferred_candidates(default, filtered)
        produced = produced_masks(numa_info.nodes, default, filtered)
        part.preferred_candidates, part.produced_masks = len(preferred), len(produced)
        best_count = max_of_min_affinity_counts(filtered)
        if preferred:
            ranked = sorted(preferred, key=key)
            result = TopologyHint(ranked[0], True)
            part.path = "preferred"
            part.rule = (f"{len(preferred)} preferred merged mask(s) (every list offers the mask, or any node, "
                         f"as preferred); "
                         f"the fittest wins: fewest nodes" + (", then lowest average distance" if uses_distance else "")
                         + ", then the lowest mask")
            part.rivals = [Rival(bitmask.get_bits(m), True, _key_rule(key(ranked[0]), key(m), uses_distance))
                           for m in ranked[1:1 + MAX_RIVALS]]
            # masks only non-preferred combinations produce (a mask also produced preferred is that one)
            non_preferred = sorted(produced - preferred, key=key)
            if non_preferred:
                part.rivals.append(Rival(bitmask.get_bits(non_preferred[0]), False, "preferred beats non-preferred"))
        elif not produced:
            result = TopologyHint(default, False)
            part.path = "nothing-produced"
            part.rule = "every combination's masks have no node in common; the result is all nodes, not preferred"
        else:
            part.best_non_preferred_count = best_count

            def rank(m: int) -> tuple:
                return (non_preferred_rank(m, best_count), key(m))

            ranked = sorted(produced, key=rank)
            result = TopologyHint(ranked[0], False)
            part.path = "non-preferred"
            part.rule = (f"no mask is preferred by every list; {len(produced)} merged mask(s) come out, none "
                         f"preferred; BestNonPreferredAffinityCount (the widest of the lists' narrowest hints) "
                         f"is {best_count}: exactly {best_count} node(s) if possible, else the most nodes below, "
                         f"else the fewest above")
            part.rivals = [Rival(bitmask.get_bits(m), False, _rank_rule(ranked[0], m, best_count, key, uses_distance))
                           for m in ranked[1:1 + MAX_RIVALS]]
    if single and result.numa_node_affinity == default:
        result = TopologyHint(None, result.preferred)
        part.single_numa_note += "; a result on every node is reported as any node"
    part.winner = result.to_dict()
    part.consistent = result == call.best
    part.admit = call.admit
    admit = policy.can_admit_pod_result(call.best)
    part.admit_rule = (f"{policy.name} admits "
                       + ("any hint" if policy.name not in ("restricted", POLICY_SINGLE_NUMA_NODE) else "only a preferred hint")
                       + f": {'admit' if admit else 'reject'}")
    return part


# ----- part 4: the decision -------------------------------------------------------------------------------


def _mm_part(explanation: Explanation, target: str) -> Optional[HintsPart]:
    return next((h for h in explanation.hints if h.target == target), None)


def build_decision(node: SimulatedNode, pod: Pod, explanation: Explanation, outcome: Any) -> Decision:
    """Part 4: kubelet's answer, and one sentence of why."""
    decision = Decision(outcome.admit, outcome.reason, outcome.message, "")
    refused = next((m for m in explanation.merges if not m.admit), None)
    if refused is not None:
        decision.why = _refusal_sentence(explanation, refused)
    elif not outcome.admit:
        merged = explanation.merges[-1] if explanation.merges else None
        hints = _mm_part(explanation, merged.target) if merged else None
        where = f" ({_where(merged.winner['numaAffinity'])})" if merged else ""
        decision.why = f"the topology manager accepted the merged hint{where}, but the memory manager's Allocate refused"
        if hints is not None and hints.path == "calculated" and not hints.hints:
            decision.why = (f"no NUMA mask can hold {fmt_sizes(hints.requested)} for {hints.target}: the memory "
                            f"manager gave no hints, which the merge reads as no preference, and then Allocate "
                            f"found no NUMA nodes with enough memory")
    else:
        placed = []
        for merge in explanation.merges:
            nodes = merge.winner["numaAffinity"]
            pref = "preferred" if merge.winner["preferred"] else "not preferred"
            placed.append(f"{merge.target} on {_where(nodes)} ({pref})")
        if placed:
            decision.why = "admitted: " + "; ".join(placed)
        else:
            decision.why = ("admitted: topology manager policy none admits every pod and stores no hint, so "
                            "Allocate places each container on the memory manager's default hint "
                            "(its narrowest preferred one)")
        if any(m.winner["preferred"] is False and m.path != "policy-none" for m in explanation.merges):
            decision.why += "; best-effort admits a hint that is not preferred"
    return decision


def _where(nodes: Optional[list[int]]) -> str:
    return "any node" if nodes is None else f"node{'s' if len(nodes) > 1 else ''} {fmt_nodes(nodes)}"


def _refusal_sentence(explanation: Explanation, merge: MergePart) -> str:
    hints = _mm_part(explanation, merge.target)
    asked = fmt_sizes(hints.requested) if hints and hints.requested else "its request"
    preferred_masks = [r.nodes for r in (hints.masks if hints else []) if r.preferred]
    if merge.policy == POLICY_SINGLE_NUMA_NODE and hints and hints.preferred_width and hints.preferred_width > 1:
        fits = next((r.nodes for r in hints.masks if r.preferred), None)
        tail = f"; the narrowest fit is nodes {fmt_nodes(fits)}, which single-numa-node refuses" if fits else ""
        return f"no single NUMA node can hold {asked} for {merge.target}{tail}"
    if hints and hints.path == "calculated" and hints.masks and not any(r.hint for r in hints.masks) and \
            not hints.omitted.get("hint"):
        return f"no NUMA mask has {asked} free for {merge.target}"
    narrow_failed = [r for r in (hints.masks if hints else [])
                     if hints.preferred_width and len(r.nodes) == hints.preferred_width and not r.hint]
    if hints and hints.path == "calculated" and not preferred_masks and narrow_failed:
        reasons = "; ".join(f"{fmt_nodes(r.nodes)}: {r.verdict}" for r in narrow_failed[:3])
        return (f"no mask of {hints.preferred_width} node(s) can take {asked} for {merge.target} ({reasons}); "
                f"the merged hint {fmt_nodes(merge.winner['numaAffinity'])} is wider, so not preferred, and "
                f"{merge.policy} admits only a preferred hint")
    others = [pl for pl in merge.lists if pl.provider == INJECTED and pl.resource != "(no preference)"]
    if others and preferred_masks:
        other_text = "; ".join(
            f"{pl.resource} prefers {', '.join(fmt_nodes(h['numaAffinity']) for h in pl.filtered if h['preferred']) or 'nothing'}"
            for pl in others)
        mem = ", ".join(fmt_nodes(m) for m in preferred_masks)
        return (f"memory fits {merge.target} on node(s) {mem}, but {other_text}: no mask is preferred by every "
                f"provider, and {merge.policy} admits only a preferred hint")
    return (f"the best merged hint for {merge.target}, {fmt_nodes(merge.winner['numaAffinity'])}, is not preferred, "
            f"and {merge.policy} admits only a preferred hint")


# ----- part 5: the allocation -----------------------------------------------------------------------------


def build_allocation(node: SimulatedNode, pod: Pod, calls: list[_AllocateCall], before: NUMANodeMap) -> AllocationPart:
    """Part 5: per Allocate call the nodes, the bytes taken per node (lowest first), the re-used init memory."""
    mm = node.memory_manager
    containers: list[ContainerAllocation] = []
    for call in calls:
        blocks = call.blocks
        taken: list[Take] = []
        for node_id in sorted(call.before):
            old = call.before[node_id]
            new = (call.after or {}).get(node_id)
            if old is None or new is None:
                continue
            for resource, table in (old.memory_map or {}).items():
                after = (new.memory_map or {}).get(resource)
                if table is not None and after is not None and after.reserved > table.reserved:
                    taken.append(Take(node_id, resource, after.reserved - table.reserved))
        nodes = sorted({n for b in blocks or [] for n in (b.numa_affinity or [])})
        reused: dict[str, int] = {}
        if nodes and call.reusable_before is not None and call.container is not None:
            mask = bitmask.new_bitmask(*nodes)
            for block in blocks or []:
                amount = call.reusable_before.get(pod.uid, mask, block.type)
                if amount:
                    reused[block.type] = min(amount, block.size)
        # cpuset.mems: GetMemoryNUMANodes when the container is created, right after its Allocate.
        containers.append(ContainerAllocation(call.target, nodes, blocks_to_obj(list(blocks or [])) or [],
                                              taken, reused, fmt_nodes(nodes) if nodes else "", call.error))
    blocks_after = {c.name: blocks_to_obj(list(mm.get_memory(pod.uid, c.name))) if mm.get_memory(pod.uid, c.name)
                    is not None else None for c in pod.all_containers()}
    return AllocationPart(containers, blocks_after, machine_state_to_obj(before),
                          machine_state_to_obj(mm.state().get_machine_state()))
