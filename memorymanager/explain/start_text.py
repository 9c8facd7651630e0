"""`explain --start` as terminal text: kubelet's start error first, then the arithmetic behind it
(reservedMemory against Node Allocatable, the checkpoint against this machine, how allocatable comes
about) and the fixes, each checked by starting a simulated kubelet with it."""
from __future__ import annotations

from kubeinputs.reader import dump_yaml
from memorymanager.explain.units import DERIVATION_HEAD, derivation_lines, fmt_bytes, fmt_nodes
from memorymanager.explain.wrap import clip
from memorymanager.node.reservation import EVICTION_HARD, KUBE_RESERVED, SYSTEM_RESERVED, ReservationSum
from memorymanager.node.start_diagnosis import (ASSIGNMENTS, CELLS, FIX_AS_WRITTEN, FIX_DELETE, FIX_DRIFT_TOLERANCE,
                                                FIX_POLICY, FIX_RESERVED_MEMORY, NODE, RESOURCE, StartDiagnosis,
                                                StartFix, StateDrift)

FIX_TITLES = {
    FIX_RESERVED_MEMORY: "reservedMemory that adds up to the Node Allocatable reservation",
    FIX_POLICY: "the memory manager policy the checkpoint was written with",
    FIX_AS_WRITTEN: "reservedMemory as it was when the checkpoint was written",
    FIX_DRIFT_TOLERANCE: "tolerate the drift (KEP-6232, alpha: gate MemoryManagerDriftTolerance)",
    FIX_DELETE: "drain the node, then delete the checkpoint",
}


def reservation_line(row: ReservationSum) -> str:
    """`memory: reservedMemory 1Gi (node 0: 1Gi) != systemReserved 1Gi + ... = 1636Mi: 612Mi short`."""
    per_node = ", ".join(f"node {n}: {fmt_bytes(size)}" for n, size in row.reserved_by_node.items()) or "no entry"
    terms = [f"{SYSTEM_RESERVED} {fmt_bytes(row.system_reserved)}", f"{KUBE_RESERVED} {fmt_bytes(row.kube_reserved)}"]
    if row.resource == "memory":
        terms.append(f"{EVICTION_HARD} memory.available {fmt_bytes(row.eviction_hard)}"
                     + (f" ({row.eviction_note})" if row.eviction_note else ""))
    verdict = "adds up"
    if not row.equal:
        gap = row.allocatable - row.reserved
        verdict = f"{fmt_bytes(abs(gap))} {'short' if gap > 0 else 'too much'}"
    return (f"{row.resource}: reservedMemory {fmt_bytes(row.reserved)} ({per_node}) {'=' if row.equal else '!='} "
            f"{' + '.join(terms)} = {fmt_bytes(row.allocatable)}: {verdict}")


def _moved(stored: int, expected: int) -> str:
    """`4Mi less`, `1Gi more`."""
    return f"{fmt_bytes(abs(expected - stored))} {'less' if expected < stored else 'more'}"


def drift_line(d: StateDrift) -> str:
    """One difference between the checkpoint and this machine, in words."""
    where = f"node{'s' if len(d.nodes) > 1 else ''} {fmt_nodes(d.nodes)}" + (f" {d.resource}" if d.resource else "")
    if d.field == NODE:
        return f"{where}: {'in the checkpoint only' if d.stored else 'on this machine only'}"
    if d.field == RESOURCE:
        return f"{where}: {'in the checkpoint only' if d.stored else 'on this machine only'}"
    if d.field == ASSIGNMENTS:
        return f"{where}: {d.stored} assignment(s) in the checkpoint, {d.expected} from its entries"
    if d.field == CELLS:
        return f"{where}: group {fmt_nodes(d.stored)} in the checkpoint, {fmt_nodes(d.expected)} from its entries"
    then, now = fmt_bytes(d.stored), fmt_bytes(d.expected)
    if d.field == "total":
        what = "MemTotal" if d.resource == "memory" else "pool"
        return f"{where}: {what} {then} when the checkpoint was written, {now} now: {_moved(d.stored, d.expected)}"
    if d.field == "systemReserved":
        return f"{where}: reservedMemory {then} when the checkpoint was written, {now} now"
    if d.field == "allocatable":
        terms = "MemTotal - hugepages - reservedMemory" if d.resource == "memory" else "pool - reservedMemory"
        return f"{where}: allocatable {then} then, {now} now: {_moved(d.stored, d.expected)} ({terms})"
    return (f"{where}: {d.field} {then} in the checkpoint, {now} once its assignments are placed on this "
            "machine" + (" (summed over the group)" if len(d.nodes) > 1 else ""))


def _blocks(blocks: object) -> str:
    """`memory 1Gi on node 1; hugepages-2Mi 64Mi on nodes 0-1`."""
    return "; ".join(f"{b['type']} {fmt_bytes(b['size'])} on node{'s' if len(b['numaAffinity'] or []) > 1 else ''} "
                     f"{fmt_nodes(b['numaAffinity'])}" for b in blocks or []) or "no blocks"


def _lost_lines(fix: StartFix) -> list[str]:
    """What deleting the checkpoint forgets: every assignment it records."""
    lost = [f"pod {uid}, container {name}: {_blocks(blocks)}"
            for uid, containers in fix.lost.items() for name, blocks in (containers or {}).items()]
    lost += [f"pod {uid} (pod level): {_blocks((entry or {}).get('memoryBlocks'))}" for uid, entry in fix.lost_pods.items()]
    if not lost:
        return ["lost: nothing (the checkpoint records no assignment)"]
    return (["lost: the exclusive memory kubelet recorded for running containers (they keep running on it, but "
             "kubelet no longer counts it, so new pods may be given the same memory: drain first):"]
            + [f"- {line}" for line in lost])


def fix_lines(letter: str, fix: StartFix, checkpoint: str) -> list[str]:
    """One fix: what to change, and the checked outcome."""
    title = FIX_TITLES.get(fix.kind, fix.kind)
    checked = "kubelet starts" if fix.starts else f"kubelet still does not start: {fix.error}"
    lines = clip(f"{letter}. {title} (checked: {checked})", 0)
    if fix.delete_checkpoint:
        lines.append(f"   rm {checkpoint}" + ("   (and set the fields below)" if fix.config else ""))
    if fix.config:
        lines.extend(f"   {line}" for line in dump_yaml(fix.config).splitlines())
    if fix.delete_checkpoint:
        lines.extend(line for text in _lost_lines(fix) for line in clip(text, 3))
    return lines


def start_lines(d: StartDiagnosis) -> list[str]:
    """The whole account, kubelet's verdict first."""
    lines = ["kubelet starts" if d.starts else "kubelet does not start:"]
    if not d.starts:
        lines.extend(clip(d.error, 3))
    lines.append("1. reservedMemory against the Node Allocatable reservation (checked at start by the Static policy)")
    if d.reservation_error:
        lines.extend(clip(f"cannot be added up: {d.reservation_error}", 3))
    elif not d.reservations:
        lines.append("   not checked: the memory manager policy is not Static")
    for row in d.reservations:
        lines.extend(clip(reservation_line(row), 3))
    lines.append("2. The checkpoint against this machine")
    if not d.checkpoint:
        lines.append("   no checkpoint: kubelet starts from an empty state and writes one")
    elif d.checkpoint_error:
        lines.extend(clip(f"{d.checkpoint}: kubelet cannot read it: {d.checkpoint_error}", 3))
    else:
        lines.append(f"   {d.checkpoint}: written with memory manager policy {d.checkpoint_policy}")
        if d.drift:
            lines.extend(line for x in d.drift for line in clip(drift_line(x), 3))
        elif d.machine_state is not None:
            lines.append("   its machine state is what this machine and configuration give")
    lines.append("3. How allocatable comes about on this machine")
    if d.allocatable:
        lines.append(f"   {DERIVATION_HEAD}:")
        lines.extend(line for text in derivation_lines(d.allocatable) for line in clip(text, 5))
    else:
        lines.append("   the memory manager keeps no machine state (policy None, or the reservations cannot be read)")
    if not d.starts:
        lines.append("4. Fixes, each checked by starting a simulated kubelet with it")
        if not d.fixes:
            lines.append("   none found: change what kubelet's error names")
        for i, fix in enumerate(d.fixes):
            lines.extend(f"   {line}" if line else line for line in fix_lines("abcdefgh"[i], fix, d.checkpoint))
    return lines


def start_text(d: StartDiagnosis) -> str:
    """The account as one string."""
    return "\n".join(start_lines(d)) + "\n"
