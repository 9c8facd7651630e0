"""`explain --start` as terminal text: kubelet's start error first, then the arithmetic behind it
(reservedMemory against Node Allocatable, the checkpoint against this machine, how allocatable comes
about) and the fixes, each checked by starting a simulated kubelet with it."""
from __future__ import annotations

from kubeinputs.reader import dump_yaml
from memorymanager.explain.units import DERIVATION_HEAD, derivation_lines, fmt_bytes, fmt_nodes
from memorymanager.explain.wrap import clip
from memorymanager.node.cpu_start import (FIX_CPU_DELETE, FIX_CPU_OPTION_GATE, FIX_CPU_OPTIONS, FIX_CPU_POLICY,
                                          FIX_CPU_RESERVATION, FIX_RESERVED_CPUS, CPUStart, DeviceCheckpointFacts)
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
    FIX_CPU_POLICY: "the CPU manager policy cpu_manager_state was written with",
    FIX_CPU_OPTION_GATE: "turn on the feature gate the CPU manager policy option needs",
    FIX_CPU_OPTIONS: "cpuManagerPolicyOptions without the option kubelet refuses",
    FIX_RESERVED_CPUS: "reservedSystemCPUs limited to CPUs this machine has (and no container holds)",
    FIX_CPU_RESERVATION: "reserve a CPU for the system (the static policy needs at least one)",
    FIX_CPU_DELETE: "drain the node, then delete cpu_manager_state",
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


def fix_lines(letter: str, fix: StartFix, checkpoint: str, cpu_checkpoint: str = "") -> list[str]:
    """One fix: what to change, and the checked outcome."""
    title = FIX_TITLES.get(fix.kind, fix.kind)
    checked = "kubelet starts" if fix.starts else f"kubelet still does not start: {fix.error}"
    lines = clip(f"{letter}. {title} (checked: {checked})", 0)
    if fix.delete_cpu_checkpoint:
        lines.append(f"   rm {cpu_checkpoint}")
        lost = [f"- pod {uid}, container {name}: CPUs {cpus}" for uid, per in fix.lost_cpus.items()
                for name, cpus in per.items()]
        if lost:
            lines.extend(clip("lost: the exclusive CPUs kubelet recorded for running containers (they keep running "
                              "on them, but kubelet may give the same CPUs to new pods: drain first):", 3) + [
                f"   {line}" for line in lost])
        else:
            lines.append("   lost: no exclusive CPU (the checkpoint records no assignment)")
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
    number = 4
    if d.cpu is not None:
        lines.extend(cpu_start_lines(d.cpu, number))
        number += 1
    if d.device_checkpoint is not None or d.warnings:
        lines.extend(device_start_lines(d.device_checkpoint, d.warnings, number))
        number += 1
    if not d.starts:
        lines.append(f"{number}. Fixes, each checked by starting a simulated kubelet with it")
        if not d.fixes:
            lines.append("   none found: change what kubelet's error names")
        cpu_checkpoint = d.cpu.checkpoint if d.cpu is not None else ""
        for i, fix in enumerate(d.fixes):
            lines.extend(f"   {line}" if line else line
                         for line in fix_lines("abcdefgh"[i], fix, d.checkpoint, cpu_checkpoint))
    return lines


def cpu_start_lines(c: CPUStart, number: int) -> list[str]:
    """The CPU manager at start: its policy and options, the reserved CPUs and how they come about, and
    cpu_manager_state against this machine."""
    options = ", ".join(f"{k}={v}" for k, v in c.options.items())
    lines = [f"{number}. The CPU manager (policy {c.policy}" + (f", options {options}" if options else "") + ")"]
    lines.append(f"   this machine's CPUs: {c.machine_cpus or 'none found'}")
    if c.reserved_system_cpus:
        lines.extend(clip(f"reservedSystemCPUs {c.reserved_system_cpus}: kept for the system as listed (they must "
                          f"be CPUs of this machine, {c.machine_cpus}), and the Node Allocatable cpu reservation "
                          f"becomes their count, {c.reservation or 0}", 3))
    elif c.policy == "static":
        if c.reserved_count is None:
            lines.extend(clip("reserved CPUs: systemReserved cpu + kubeReserved cpu = 0 (neither is set, or both are "
                              "0): the static policy needs at least one reserved CPU", 3))
        else:
            lines.extend(clip(f"reserved CPUs: systemReserved cpu + kubeReserved cpu = {c.reservation}, rounded up: "
                              f"{c.reserved_count} CPU(s), taken as the static policy takes them (whole cores, "
                              "lowest first)", 3))
    if c.reserved:
        lines.append(f"   reserved: {c.reserved}")
    elif c.reserved_error and c.policy == "static":
        lines.extend(clip(f"the reserved CPUs cannot be made: {c.reserved_error}", 3))
    if not c.checkpoint:
        lines.append("   no cpu_manager_state: the CPU manager starts from an empty state and writes one")
        return lines
    if c.checkpoint_error:
        lines.extend(clip(f"{c.checkpoint}: kubelet cannot restore it: {c.checkpoint_error}", 3))
        return lines
    lines.append(f"   {c.checkpoint}: written with CPU manager policy {c.checkpoint_policy}"
                 + ("" if c.checkpoint_policy == c.policy else f", configured now: {c.policy}"))
    if c.checkpoint_policy == "static":
        lines.extend(clip(f"its shared pool: {c.checkpoint_default or '(empty)'}; every CPU it names (pool and "
                          f"assignments): {c.checkpoint_cpus or '(none)'}; this machine's: {c.machine_cpus}", 3))
        if c.lacking:
            lines.extend(clip(f"it names CPUs {c.lacking} this machine lacks", 3))
        if c.unnamed:
            lines.extend(clip(f"it does not name this machine's CPUs {c.unnamed}", 3))
        if c.overlaps:
            lines.extend(clip(f"it names CPUs {c.overlaps} twice (in the shared pool and an assignment, or in two "
                              "assignments): a CPU is either shared or held by one container", 3))
    lines.extend(line for uid, per in c.entries.items() for name, cpus in per.items()
                 for line in clip(f"pod {uid}, container {name}: CPUs {cpus}", 3))
    return lines


def device_start_lines(facts: DeviceCheckpointFacts | None, warnings: list[str], number: int) -> list[str]:
    """The device checkpoint at start: kubelet never stops on it, but starts without what it cannot read."""
    lines = [f"{number}. The device checkpoint (kubelet starts whatever it holds)"]
    if facts is not None and facts.error:
        lines.extend(clip(f"{facts.checkpoint}: kubelet cannot read it and starts with no device allocation (the "
                          f"devices running containers hold may be given again): {facts.error}", 3))
    elif facts is not None:
        held = [f"pod {uid}, container {name}: {r} {', '.join(ids)}" for uid, per in facts.entries.items()
                for name, res in per.items() for r, ids in res.items()]
        lines.append(f"   {facts.checkpoint}: {len(held)} allocation(s) restored" + (":" if held else ""))
        lines.extend(line for text in held for line in clip(text, 5))
    lines.extend(line for text in warnings for line in clip(text, 3))
    return lines


def start_text(d: StartDiagnosis) -> str:
    """The account as one string."""
    return "\n".join(start_lines(d)) + "\n"
