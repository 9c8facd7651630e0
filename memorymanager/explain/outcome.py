"""Parts 4 and 5 of an explanation: the decision (with one sentence of why) and the allocation
(bytes taken per node around each real Allocate, re-used init-container memory, machine states)."""
from __future__ import annotations

from typing import Optional

from kubeinputs.pod import Pod
from kubeinputs.qos import GUARANTEED
from memorymanager.explain.merge_part import CPU_MANAGER, MEMORY_MANAGER, NO_PREFERENCE
from memorymanager.explain.model import (
    AllocationPart,
    ContainerAllocation,
    Decision,
    Explanation,
    HintsPart,
    MergePart,
    Take,
)
from memorymanager.explain.recorder import AllocateCall
from memorymanager.explain.units import fmt_nodes, fmt_sizes
from memorymanager.node.simulated_node import AdmitOutcome, SimulatedNode
from memorymanager.node.render import blocks_to_obj, machine_state_to_obj
from state.types import NUMANodeMap
from topologymanager import bitmask
from topologymanager.policy import POLICY_SINGLE_NUMA_NODE

def _mm_part(explanation: Explanation, target: str) -> Optional[HintsPart]:
    """The memory manager's hints part for a container (or the pod)."""
    return next((h for h in explanation.hints if h.target == target), None)


def _pinned_elsewhere(explanation: Explanation) -> bool:
    """Whether the CPU or device manager pinned something for the pod."""
    return any(a.cpus and not a.error for a in explanation.cpu_allocation) or \
        any(a.picks for a in explanation.device_allocation)


def _allocate_refusal(explanation: Explanation) -> Optional[str]:
    """The CPU or device manager's refusing Allocate, in one sentence, or None."""
    cpu = next((a for a in explanation.cpu_allocation if a.error), None)
    if cpu is not None:
        return f"the CPU manager's Allocate refused {cpu.target}: {cpu.note or cpu.error}"
    device = next((a for a in explanation.device_allocation if a.error), None)
    if device is not None:
        return f"the device manager's Allocate refused {device.resource} for {device.target}: {device.error}"
    return None


def build_decision(node: SimulatedNode, pod: Pod, explanation: Explanation, outcome: AdmitOutcome) -> Decision:
    """Part 4: kubelet's answer, and one sentence of why."""
    decision = Decision(outcome.admit, outcome.reason, outcome.message, "")
    refused = next((m for m in explanation.merges if not m.admit), None)
    if refused is not None:
        decision.why = _refusal_sentence(explanation, refused)
    elif not outcome.admit:
        merged = explanation.merges[-1] if explanation.merges else None
        hints = _mm_part(explanation, merged.target) if merged else None
        where = f" ({_where(merged.winner['numaAffinity'])})" if merged else ""
        other = _allocate_refusal(explanation)
        decision.why = f"the topology manager accepted the merged hint{where}, but the memory manager's Allocate refused"
        if other is not None:
            decision.why = f"the topology manager accepted the merged hint{where}, but {other}"
        elif hints is not None and hints.path == "calculated" and not hints.hints:
            decision.why = (f"no NUMA mask can hold {fmt_sizes(hints.requested)} for {hints.target}: the memory "
                            f"manager gave no hints, which the merge reads as no preference, and then Allocate "
                            f"found no NUMA nodes with enough memory")
    elif explanation.asked is not None and explanation.asked.qos != GUARANTEED:
        decision.why = (f"admitted: the pod is {explanation.asked.qos}, so it is not pinned (only Guaranteed pods "
                        "get exclusive NUMA memory)")
    elif explanation.asked is not None and explanation.asked.memory_policy != "Static" and \
            not _pinned_elsewhere(explanation):
        decision.why = "admitted: not pinned (memory manager policy None gives no pod exclusive NUMA memory)"
    else:
        placed = []
        for merge in explanation.merges:
            nodes = merge.winner["numaAffinity"]
            pref = "preferred" if merge.winner["preferred"] else "not preferred"
            placed.append(f"{merge.target} aligned on {_where(nodes)} ({pref})")
        pinned = any(ask.requested and not ask.note for ask in explanation.asked.containers)
        if placed:
            decision.why = "admitted: " + "; ".join(placed)
        elif pinned:
            decision.why = ("admitted: topology manager policy none admits every pod and stores no hint, so "
                            "Allocate places each container on the memory manager's default hint "
                            "(its best hint)")
        elif _pinned_elsewhere(explanation):
            decision.why = ("admitted: topology manager policy none admits every pod and stores no hint; the CPU and "
                            "device managers pick from any NUMA node")
        else:
            decision.why = "admitted: topology manager policy none admits every pod; no memory is pinned for it"
        if any(m.winner["preferred"] is False and m.path != "policy-none" for m in explanation.merges):
            decision.why += "; best-effort admits a hint that is not preferred"
    return decision


def _where(nodes: Optional[list[int]]) -> str:
    """`any node`, `node 1`, `nodes 0-1`."""
    return "any node" if nodes is None else f"node{'s' if len(nodes) > 1 else ''} {fmt_nodes(nodes)}"


def _refusal_sentence(explanation: Explanation, merge: MergePart) -> str:
    """One sentence on why the topology manager refused the merged hint, from the parts already built."""
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
    others = [pl for pl in merge.lists if pl.provider != MEMORY_MANAGER and pl.resource != NO_PREFERENCE
              and not (pl.filtered and all(h["numaAffinity"] is None for h in pl.filtered))]  # any node: no say
    if others and preferred_masks:
        other_text = "; ".join(f"{pl.provider} {pl.resource} prefers {_preferred_text(pl.filtered)}" for pl in others)
        mem = ", ".join(fmt_nodes(m) for m in preferred_masks)
        return (f"memory fits {merge.target} on node(s) {mem}, but {other_text}: no mask is preferred by every "
                f"provider, and {merge.policy} admits only a preferred hint")
    if others:
        return _providers_sentence(explanation, merge, others)
    return (f"the best merged hint for {merge.target}, {fmt_nodes(merge.winner['numaAffinity'])}, is not preferred, "
            f"and {merge.policy} admits only a preferred hint")


def _preferred_text(hints: list[dict]) -> str:
    """The preferred masks of a hint list, `0, 1`, or `nothing`."""
    return ", ".join(fmt_nodes(h["numaAffinity"]) for h in hints if h["preferred"]) or "nothing"


def _providers_sentence(explanation: Explanation, merge: MergePart, others: list) -> str:
    """Why the merge found no preferred hint, from the CPU and device managers' lists (and their parts)."""
    reasons = []
    for pl in others:
        if any(h["preferred"] for h in pl.filtered):
            reasons.append(f"{pl.provider} {pl.resource} prefers {_preferred_text(pl.filtered)}")
            continue
        why = "offers no preferred hint" + (" on one NUMA node" if merge.policy == POLICY_SINGLE_NUMA_NODE else "")
        cpu = next((c for c in explanation.cpu_hints if c.target == merge.target), None)
        dev = next((d for d in explanation.device_hints if d.target == merge.target and d.resource == pl.resource), None)
        if pl.provider == CPU_MANAGER and cpu is not None and cpu.masks and not any(r.hint for r in cpu.masks):
            why += f" (no NUMA mask has {cpu.requested} free CPUs)"
        elif pl.provider == CPU_MANAGER and cpu is not None and cpu.path == "regenerated" and not cpu.masks:
            why += f" ({cpu.note})"
        elif dev is not None and dev.path in ("too-few", "regenerated") and not dev.masks:
            why += f" ({dev.note})"
        elif pl.provider == CPU_MANAGER and cpu is not None and cpu.min_affinity_size and cpu.min_affinity_size > 1:
            why += f" ({cpu.requested} CPUs need at least {cpu.min_affinity_size} NUMA nodes' CPUs)"
        elif pl.provider == CPU_MANAGER and cpu is not None and cpu.masks:
            narrow = [r for r in cpu.masks if len(r.nodes) == cpu.min_affinity_size]
            if narrow and not any(r.hint for r in narrow):
                why += (f" (no {cpu.min_affinity_size}-node mask has {cpu.requested} free CPUs: "
                        + ", ".join(f"{fmt_nodes(r.nodes)} has {r.free}" for r in narrow[:4]) + ")")
        elif dev is not None and dev.min_affinity_size and dev.masks:
            narrow = [r for r in dev.masks if len(r.nodes) == dev.min_affinity_size]
            if narrow and not any(r.hint for r in narrow):
                why += (f" (no {dev.min_affinity_size}-node mask has {dev.requested} free device(s): "
                        + ", ".join(f"{fmt_nodes(r.nodes)} has {r.free}" for r in narrow[:4]) + ")")
        reasons.append(f"{pl.provider} {pl.resource} {why}")
    return (f"for {merge.target}: " + "; ".join(reasons) + f"; the merged hint ({_where(merge.winner['numaAffinity'])}) "
            f"is not preferred, and {merge.policy} admits only a preferred hint")


def _mask_note(stored: Optional[dict], nodes: list[int]) -> str:
    """How Allocate's mask relates to the stored hint: kept, the default hint, or extended."""
    if not nodes:
        return ""
    if stored is None:
        return f"no stored hint: Allocate takes the memory manager's default hint, {fmt_nodes(nodes)}"
    wanted = stored["numaAffinity"]
    if wanted is None:
        return (f"the stored hint names any node: Allocate takes the memory manager's default hint (its best "
                f"hint), {fmt_nodes(nodes)}")
    if wanted != nodes:
        return (f"the stored hint {fmt_nodes(wanted)} has too little free memory: Allocate extends it to "
                f"{fmt_nodes(nodes)}, the best memory hint that contains it")
    return ""


def build_allocation(node: SimulatedNode, pod: Pod, calls: list[AllocateCall], before: NUMANodeMap,
                     merges: Optional[list[MergePart]] = None) -> AllocationPart:
    """Part 5: per Allocate call the nodes, the bytes taken per node (lowest first), the re-used init memory."""
    mm = node.memory_manager
    stored = {m.target: m.winner for m in merges or []}
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
        hint = stored.get(call.target, stored.get("pod"))
        note = _mask_note(hint, nodes) if taken or reused else ""
        containers.append(ContainerAllocation(call.target, nodes, blocks_to_obj(list(blocks or [])) or [],
                                              taken, reused, fmt_nodes(nodes) if nodes else "", call.error, note))
    blocks_after = {c.name: blocks_to_obj(list(mm.get_memory(pod.uid, c.name))) if mm.get_memory(pod.uid, c.name)
                    is not None else None for c in pod.all_containers()}
    return AllocationPart(containers, blocks_after, machine_state_to_obj(before),
                          machine_state_to_obj(mm.state().get_machine_state()))
