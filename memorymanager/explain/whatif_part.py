"""Part 6 of an explanation (`--what-if`): what would make a refused pod fit, or an admitted pod's
headroom. The answers come from `memorymanager.node.whatif`, each checked by admitting the pod on a
copy of the node; the free memory each candidate mask lacks is read from the mask table of part 2
(calculateHints' own sums) and the machine state the refused hint call saw."""
from __future__ import annotations

from typing import Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.pod import Pod
from memorymanager.explain.cpu_part import cpu_node_rows
from memorymanager.explain.device_part import device_inventory
from memorymanager.explain.model import (CPUHintsPart, CPUShortfall, DeviceHintsPart, DeviceShortfall, Explanation,
                                         HintsPart, MaskShortfall, ProviderFit, WhatIf)
from memorymanager.explain.recorder import HintCall
from memorymanager.explain.units import fmt_nodes, fmt_sizes
from memorymanager.node import whatif
from memorymanager.node.simulated_node import POD_SCOPE
from memorymanager.node.whatif_cpu import cpu_config_changes, largest_cpu_request
from memorymanager.node.whatif_devices import largest_device_request
from memorymanager.node.simulated_node import SimulatedNode

MAX_SHORTFALLS = 8


def refused_target(explanation: Explanation) -> Optional[str]:
    """The container (or `pod`) whose admission failed: the merge the policy refused, else the Allocate that
    refused, else the last merge."""
    refused = next((m for m in explanation.merges if not m.admit), None)
    if refused is not None:
        return refused.target
    failed = next((c for c in (explanation.allocation.containers if explanation.allocation else []) if c.error), None)
    if failed is not None:
        return failed.name
    return explanation.merges[-1].target if explanation.merges else None


def shortfalls(part: HintsPart, call: HintCall) -> list[MaskShortfall]:
    """Per candidate mask with the allocatable memory (a narrower one never holds the request), the free
    memory it lacks per resource and each node's free memory; masks of the preferred width first, then
    those lacking least."""
    rows = []
    for row in part.masks:
        if not row.allocatable_ok:
            continue
        lacking = {r: max(0, size - row.free.get(r, 0) - row.reusable.get(r, 0)) for r, size in part.requested.items()}
        free_by_node = {}
        for node_id in row.nodes:
            tables = (call.machine_state[node_id].memory_map or {}) if node_id in call.machine_state else {}
            free_by_node[str(node_id)] = {r: tables[r].free for r in part.requested if tables.get(r) is not None}
        blocked = row.verdict if row.group_rule else ""
        rows.append(MaskShortfall(part.target, row.nodes, len(row.nodes) == part.preferred_width, lacking,
                                  free_by_node, blocked))
    rows.sort(key=lambda r: (not r.preferred_width, bool(r.blocked_by), sum(r.lacking.values()), len(r.nodes)))
    return rows[:MAX_SHORTFALLS]


def build_what_if(node: SimulatedNode, trial: SimulatedNode, pod: Pod, extra: whatif.Extra, explanation: Explanation,
                  hint_calls: list[HintCall]) -> WhatIf:
    """Part 6: for an admitted pod the headroom on the copy that admitted it; for a refused pod the mask
    shortfalls, the removals, the other settings and the largest request, checked on copies of `node`."""
    decision = explanation.decision
    if decision is None:
        return WhatIf(admitted=False)
    if decision.admitted:
        return WhatIf(True, headroom=list(whatif.headroom(trial).values()), cpu_headroom=cpu_node_rows(trial),
                      device_headroom=device_inventory(trial))
    result = WhatIf(False)
    target = refused_target(explanation)
    part = next((h for h in reversed(explanation.hints) if h.target == target and h.path == "calculated"), None)
    call = next((c for c in reversed(hint_calls) if c.target == target), None)
    if part is not None and call is not None:
        result.shortfalls = shortfalls(part, call)
        if not result.shortfalls and part.masks:
            widest = max(part.masks, key=lambda r: (sum(r.allocatable.values()), -len(r.nodes)))
            result.shortfall_note = (f"no mask has the allocatable memory for {target}'s {fmt_sizes(part.requested)}: "
                                     f"the most is {fmt_sizes(widest.allocatable)} on {fmt_nodes(widest.nodes)} "
                                     "(whatever is removed)")
    search = whatif.removals_that_admit(node, pod, extra)
    result.removals, result.removal_note, result.checks = list(search.fixes), search.note, search.checks
    result.settings = whatif.other_settings(node, pod, extra)
    result.checks += len(result.settings)
    reason = whatif.unpinned_reason(node, pod)
    if reason:
        result.largest_note = f"{reason}: its size does not decide admission"
    else:
        result.largest, checks = whatif.largest_admissible(node, pod, extra)
        result.checks += checks
        if result.largest is None:
            result.largest_note = f"none is admitted now ({checks} size{'s' if checks != 1 else ''} checked)"
    limited_by = _cpu_and_devices(node, pod, extra, explanation, target, result)
    if explanation.cpu_policy != "none" or explanation.devices:  # memory-only nodes keep part 6 as it was
        result.limited_by = limited_by
        refused = next((m for m in explanation.merges if not m.admit), None)
        result.provider_fits = [ProviderFit(pl.provider, pl.resource, _preferred_masks(pl.filtered))
                                for pl in (refused.lists if refused is not None else [])]
    return result


def _preferred_masks(hints: Optional[list[dict]]) -> Optional[list[list[int]]]:
    """The masks of a list's preferred hints (None: no preference, or a preferred hint for any node)."""
    preferred = [h.get("numaAffinity") for h in hints or [] if h.get("preferred")]
    if hints is None or any(mask is None for mask in preferred):  # no preference, or a preferred any-node hint
        return None
    return [list(mask) for mask in preferred]


def _no_preferred_fit(hints: Optional[list[dict]], fails: bool) -> bool:
    """A provider's list refuses placement: a calculation with no preferred hint (or none at all)."""
    return fails or not any(h.get("preferred") for h in hints or [])


def cpu_shortfalls(part: CPUHintsPart) -> list[CPUShortfall]:
    """Per NUMA mask whose CPUs could hold the request, the free CPUs it lacks; the narrowest first."""
    rows = [CPUShortfall(part.target, r.nodes, len(r.nodes) == part.min_affinity_size, r.cpus, r.free,
                         max(0, part.requested - r.free - (CPUSet.parse(part.reusable).size() if part.reusable else 0)))
            for r in part.masks if r.cpus >= part.requested]
    rows.sort(key=lambda r: (not r.preferred_width, r.lacking, len(r.nodes)))
    return rows[:MAX_SHORTFALLS]


def device_shortfalls(part: DeviceHintsPart) -> list[DeviceShortfall]:
    """Per NUMA mask whose registered devices could hold the request, the free devices it lacks."""
    rows = [DeviceShortfall(part.target, part.resource, r.nodes, len(r.nodes) == part.min_affinity_size, r.devices,
                            r.free, max(0, part.requested - r.free)) for r in part.masks if r.devices >= part.requested]
    if not part.masks:  # too few devices at all: the whole node
        free = sum(1 for d in part.devices if d.state in ("free", "re-usable", "held"))
        rows = [DeviceShortfall(part.target, part.resource, part.device_nodes, True, len(part.devices), free,
                                max(0, part.requested - free))]
    rows.sort(key=lambda r: (not r.preferred_width, r.lacking, len(r.nodes)))
    return rows[:MAX_SHORTFALLS]


def _cpu_and_devices(node: SimulatedNode, pod: Pod, extra: whatif.Extra, explanation: Explanation,
                     target: Optional[str], result: WhatIf) -> list[str]:
    """The CPU and device side of part 6, when CPUs or devices refused the pod: each mask's shortfall, the
    largest CPU request admitted now, the CPU manager settings that admit it (each checked on a copy); returns
    the resources (`cpu`, device resources) that refused it."""
    limited_by: list[str] = []
    cpu_part = next((h for h in reversed(explanation.cpu_hints) if h.target == target and h.path == "calculated"), None)
    smt = next((a for a in explanation.cpu_allocation if a.error), None)
    cpu_refused = smt is not None or (cpu_part is not None and cpu_part.requested > 0 and cpu_part.masks
                                      and _no_preferred_fit(cpu_part.hints, False))
    if cpu_part is not None and cpu_refused:
        result.cpu_shortfalls = cpu_shortfalls(cpu_part)
        if not result.cpu_shortfalls:
            most = max(r.cpus for r in cpu_part.masks)
            result.cpu_note = f"no NUMA mask has {cpu_part.requested} CPUs: the machine has {most} (whatever is removed)"
    if smt is not None:
        result.cpu_note = f"the CPU manager's Allocate refused {smt.target}: {smt.note or smt.error}"
    if cpu_refused:
        limited_by.append("cpu")
        result.smaller_cpus, checks, result.smaller_cpus_note = largest_cpu_request(
            node, pod, cpu_part.target if cpu_part is not None else (smt.target if smt else target), extra)
        result.cpu_settings = cpu_config_changes(node, pod, smt.reason if smt is not None else "", extra)
        result.checks += checks + len(result.cpu_settings)
    for alloc in explanation.device_allocation:
        if alloc.error and alloc.resource not in limited_by:
            limited_by.append(alloc.resource)
    for part in explanation.device_hints:
        if part.target == target and (part.path == "too-few" or (
                part.path == "calculated" and _no_preferred_fit(part.hints, False))):
            result.device_shortfalls.extend(device_shortfalls(part))
            if part.resource not in limited_by:
                limited_by.append(part.resource)
            if part.target != POD_SCOPE and part.requested > 1:
                fit, checks = largest_device_request(node, pod, part.target, part.resource, extra)
                result.checks += checks
                if fit is not None:
                    result.smaller_devices.append(fit)
    return limited_by
