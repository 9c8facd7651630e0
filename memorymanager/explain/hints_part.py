"""Part 2 of an explanation: how the memory manager produced its hints, with the numbers every
candidate mask was judged on (`reference_hints.check_mask`, the body of calculateHints' loop)."""
from __future__ import annotations

from itertools import islice
from typing import Any, Optional

from kubeinputs.pod import Pod
from memorymanager.node.render import hint_to_obj
from memorymanager.explain.model import HintsPart, MaskRow
from memorymanager.explain.recorder import HintCall
from memorymanager.explain.units import fmt_bytes, fmt_nodes, fmt_sizes
from memorymanager.reference_hints import (
    GROUP_JOINS_SINGLE,
    GROUP_NOT_EQUAL,
    GROUP_OK,
    GROUP_SINGLE_IN_GROUP,
    MaskCheck,
    check_mask,
    preferred_width,
)
from memorymanager.hint_family import family_hints
from memorymanager.hints import regenerate_hints
from memorymanager.node.simulated_node import SimulatedNode
from memorymanager.observer import EMPTY_SHARED_POOL, NOT_GUARANTEED, NOTHING_REQUESTED, POD_LEVEL_RESOURCES
from memorymanager.policy import MemoryManagerError
from memorymanager.policy_static import StaticPolicy
from memorymanager.requests import (
    get_container_requested_resources,
    get_pod_requested_resources,
    is_pod_level_resources_set,
)
from state.types import NUMANodeMap, clone_machine_state
from topologymanager import bitmask
from topologymanager.hint_family import HintFamily

FULL_TABLE_NODES = 4
MAX_PREFERRED_ROWS = 32
MAX_NON_PREFERRED_ROWS = 8
MAX_FAILING_ROWS = 16


def _hints_obj(hints: Any) -> Optional[dict]:
    """A provider's hint map as JSON-ready dicts (None stays None: no preference)."""
    if hints is None:
        return None
    return {r: (None if l is None else [hint_to_obj(h) for h in (islice(l, FAMILY_HINTS_SHOWN)
                                                                 if isinstance(l, HintFamily) else l)])
            for r, l in hints.items()}


# Machines with more NUMA nodes than this get no mask table (too many masks to list).
MAX_LISTED_NODES = 16
FAMILY_HINTS_SHOWN = 12


def _requested_for(policy: StaticPolicy, pod: Pod, call: HintCall) -> dict[str, int]:
    """What the hint call asked for: the container's request, or the pod total in pod scope."""
    if call.container is None:
        return get_pod_requested_resources(pod, policy.pod_level_resource_managers)
    return get_container_requested_resources(pod, call.container, policy.pod_level_resource_managers)


def _held_blocks(policy: StaticPolicy, pod: Pod, call: HintCall) -> tuple[Optional[list], str, dict]:
    """The blocks the policy regenerates hints from (None: it calculates), a label, and the request."""
    containers = call.assignments.get(pod.uid) or {}
    requested = _requested_for(policy, pod, call)
    if call.container is not None:
        if call.container.name in containers:
            return containers[call.container.name] or [], f"container {call.container.name!r} already holds memory", requested
        return None, "", requested
    if policy.pod_level_resource_managers and is_pod_level_resources_set(pod):
        entry = call.pod_assignments.get(pod.uid)
        if entry is not None:
            return list(entry.memory_blocks or []), "the pod already holds pod-level memory", requested
    for container in pod.all_containers():
        if container.name in containers:
            if policy.pod_level_resource_managers:
                requested = get_container_requested_resources(pod, container, True)
            return containers[container.name] or [], f"container {container.name!r} already holds memory", requested
    return None, "", requested


def build_hints_part(node: SimulatedNode, pod: Pod, call: HintCall) -> HintsPart:
    """Part 2 for one hint call: the path the policy took, and per mask the numbers it judged on."""
    policy = node.memory_manager.policy
    part = HintsPart(call.target, "none", "", {}, _hints_obj(call.result))
    if not isinstance(policy, StaticPolicy):
        part.note = "memory manager policy None gives no hints (no preference)"
        return part
    why = call.skipped  # the policy's own reason for answering without looking
    if why == NOT_GUARANTEED:
        part.note = "the pod is not Guaranteed: no hints (no preference)"
        return part
    try:
        held, label, requested = _held_blocks(policy, pod, call)
    except MemoryManagerError as exc:
        part.note = f"the request cannot be read ({exc}): no hints (no preference)"
        return part
    part.requested = requested
    if why == POD_LEVEL_RESOURCES:
        part.note = "pod-level resources are skipped by this kubelet: no hints (no preference)"
        return part
    if why == EMPTY_SHARED_POOL:
        try:
            policy.validate_pod_scope_resources(pod)
        except MemoryManagerError as exc:  # the policy's words for it
            part.note = f"{exc}: an empty hint list per resource (no NUMA placement possible)"
        part.consistent = part.hints == {resource: [] for resource in requested}
        return part
    if why == NOTHING_REQUESTED:
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
    """`memory 1Gi on 0; hugepages-2Mi 2Mi on 0`."""
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


def _mask_table(part: HintsPart, call: HintCall, requested: dict[str, int]) -> None:
    """Fill the mask rows of a calculated hint list (all masks on small machines, else those that matter)."""
    machine_state = clone_machine_state(call.machine_state)
    lookup = call.reusable.lookup(call.pod_uid)
    nodes = sorted(machine_state)
    if len(nodes) > MAX_LISTED_NODES:
        _family_note(part, call, machine_state, requested, lookup, len(nodes))
        return
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


def _family_note(part: HintsPart, call: HintCall, machine_state: NUMANodeMap, requested: dict[str, int],
                 lookup: Any, n: int) -> None:
    """A large machine: too many masks to list; the family recomputed and compared with the result."""
    part.total_masks = (1 << n) - 1
    try:
        again = family_hints(machine_state, requested, lookup)
    except Exception as exc:  # calculateHints itself failed the same way
        part.note = f"the hints cannot be calculated: {exc}"
        return
    family = next(iter(again.values()), None)
    returned = next(iter((call.result or {}).values()), None)
    part.preferred_width = family.preferred_width if family is not None else None
    same = (family is None and returned is None) or (
        isinstance(returned, HintFamily) and family is not None
        and (family.explicit, family.universe, family.capacity, family.preferred_width)
        == (returned.explicit, returned.universe, returned.capacity, returned.preferred_width))
    part.consistent = same
    if family is None:
        part.note = "no mask can hold the request: an empty hint map (kubelet's merge reads it as no preference)"
        return
    best = family.best_hint()
    part.note = (f"too many masks to list ({n} NUMA nodes, 2^{n} - 1 masks): the hints are a family; preferred "
                 f"are those of {family.preferred_width} node(s); the best is {fmt_nodes(bitmask.get_bits(best.numa_node_affinity))}"
                 f"; the first {FAMILY_HINTS_SHOWN} in kubelet's order are shown")


def _rows_that_matter(checks: list[MaskCheck], width: int, n: int) -> set[int]:
    """All masks on small machines; else the preferred hints, the first non-preferred ones, and
    the failing masks no wider than the preferred width (why a narrower one was not taken)."""
    if n <= FULL_TABLE_NODES:
        return {c.mask for c in checks}
    preferred = [c.mask for c in checks if c.passes and bitmask.count(c.mask) == width][:MAX_PREFERRED_ROWS]
    others = [c.mask for c in checks if c.passes and bitmask.count(c.mask) != width][:MAX_NON_PREFERRED_ROWS]
    failing = [c.mask for c in checks if not c.passes and bitmask.count(c.mask) <= max(width, 1)][:MAX_FAILING_ROWS]
    return set(preferred) | set(others) | set(failing)
