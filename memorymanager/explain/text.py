"""The explanation as terminal text: five numbered parts, readable at 100 columns.

Colour (bold headings, green/red verdicts) only when asked for (`color=True`, which the
command sets when standard output is a TTY). Byte counts are exact (`3996Mi`, never
rounded); masks are written like cpusets (`0-1`), preferred hints with a `*`.
"""
from __future__ import annotations

from typing import Optional

from memorymanager.explain.model import ContainerAsk, Explanation, HintsPart, MergePart, ScenarioView, StepView
from memorymanager.explain.units import DERIVATION_HEAD, derivation_lines, fmt_bytes, fmt_nodes, fmt_sizes
from memorymanager.explain.whatif_text import what_if_lines
from memorymanager.explain.wrap import WIDTH, clip

class _Style:
    """ANSI styles, or nothing."""

    def __init__(self, color: bool) -> None:
        """Colour on or off."""
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        """Text in an ANSI style, when colour is on."""
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def head(self, text: str) -> str:
        """Bold."""
        return self._wrap("1", text)

    def good(self, text: str) -> str:
        """Green."""
        return self._wrap("32", text)

    def bad(self, text: str) -> str:
        """Red."""
        return self._wrap("31", text)


MAX_HINTS_SHOWN = 12


def _hint_list(hints: Optional[list[dict]]) -> str:
    """`0* 1* 0-1` (`*` = preferred); long lists show their first hints and a count."""
    if hints is None:
        return "no preference"
    if not hints:
        return "[] (no placement possible)"
    words = [fmt_nodes(h["numaAffinity"]) + ("*" if h["preferred"] else "") for h in hints]
    if len(words) <= MAX_HINTS_SHOWN:
        return " ".join(words)
    preferred = sum(1 for h in hints if h["preferred"])
    return (" ".join(words[:MAX_HINTS_SHOWN]) + f" ... ({len(words)} hints, {preferred} preferred)")


def _hints_lines(part: HintsPart, s: _Style) -> list[str]:
    """Part 2 for one hint call: path, mask table, the hints returned."""
    lines = clip(f"{part.target}: {part.path} - {part.note}", 3)
    resources = list(part.requested)
    if part.masks:
        header = f"     {'nodes':<8}" + "".join(f"{r + ' free/alloc':<26}" for r in resources) + "verdict"
        lines.append(header)
        for row in part.masks:
            cells = "".join(
                f"{fmt_bytes(row.free.get(r, 0)) + ' / ' + fmt_bytes(row.allocatable.get(r, 0)):<26}" for r in resources
            )
            verdict = s.good(row.verdict) if row.hint else row.verdict
            line = f"     {fmt_nodes(row.nodes):<8}{cells}"
            if len(line) + len(row.verdict) > WIDTH:
                lines.append(line.rstrip())
                line = " " * 13
            lines.append(f"{line}{verdict}")
        if part.omitted:
            rest = ", ".join(f"{count} failing the {kind} check" if kind != "hint" else f"{count} further hints"
                             for kind, count in part.omitted.items())
            lines.append(f"     ... not listed: {rest}")
    if part.hints is not None:
        for resource, hints in part.hints.items():
            lines.append(f"     hints {resource}: {_hint_list(hints)}")
    elif part.path != "none" or part.note:
        lines.append("     hints: none (no preference)")
    if not part.consistent:
        lines.append(s.bad("     warning: the recomputed hints differ from the manager's (please report)"))
    return lines


def _omitted_text(omitted: dict[str, int]) -> str:
    """`... not listed: 3 further hints, 7 failing masks`."""
    return ", ".join(f"{n} further hint(s)" if kind == "hint" else f"{n} failing mask(s)" for kind, n in omitted.items())


def _cpu_policy(e: Explanation) -> str:
    """`static (full-pcpus-only=true)`: the CPU manager's policy and its options."""
    options = ", ".join(f"{k}={v}" for k, v in sorted(e.cpu_options.items()))
    return e.cpu_policy + (f" ({options})" if options else "")


def _cpu_and_devices_asked(ask: ContainerAsk) -> str:
    """`; cpu 4 (4 exclusive CPUs: ...); nvidia.com/gpu 1` when the node models CPUs or devices, else nothing."""
    if ask.cpu is None:
        return ""
    if ask.exclusive_cpus:
        cpu = f"; cpu {ask.cpu or ask.exclusive_cpus}, exclusive ({ask.cpu_note})"
    else:
        cpu = f"; cpu {ask.cpu or 'none'}, shared pool ({ask.cpu_note})"
    return cpu + "".join(f"; {resource} {count}" for resource, count in (ask.devices or {}).items())


def _cpu_lines(e: Explanation, s: _Style) -> list[str]:
    """Part 2b: the CPUs per NUMA node, then per hint call the masks and their verdicts."""
    lines = [s.head("2b. The CPU manager's hints"), f"   CPU manager policy {_cpu_policy(e)}"]
    for row in e.cpu_nodes:
        lines.extend(clip(f"node {row.node}: CPUs {row.cpus}; free {row.free or '-'}, reserved {row.reserved or '-'}, "
                          f"exclusive {row.exclusive or '-'}", 5))
    for part in e.cpu_hints:
        lines.extend(clip(f"{part.target}: {part.path} - asks {part.requested} CPU(s); {part.note}", 3))
        if part.masks:
            width = f", narrowest width {part.min_affinity_size}" if part.min_affinity_size is not None else ""
            lines.append(f"     {'nodes':<10}{'CPUs':>6}{'free':>6}   verdict{width}")
            for row in part.masks:
                verdict = s.good(row.verdict) if row.hint else row.verdict
                lines.append(f"     {fmt_nodes(row.nodes):<10}{row.cpus:>6}{row.free:>6}   {verdict}")
            if part.omitted:
                lines.append(f"     ... not listed: {_omitted_text(part.omitted)}")
        if part.path != "none" or part.hints is not None:
            lines.append(f"     hints cpu: {_hint_list(part.hints)}")
        if not part.consistent:
            lines.append(s.bad("     warning: the recomputed CPU hints differ from the manager's (please report)"))
    if not e.cpu_hints:
        lines.append("   not asked: the topology manager " + (
            "policy none asks no hint provider" if e.asked.topology_policy == "none" else "asked no hints"))
    return lines


def _device_hint_lines(e: Explanation, s: _Style) -> list[str]:
    """Part 2c: the node's devices, then per resource asked the masks and their verdicts."""
    lines = [s.head("2c. The device manager's hints")]
    for inv in e.devices:
        devices = ", ".join(f"{d.id}@{fmt_nodes(d.numa_nodes) if d.numa_nodes else 'no NUMA'} {d.state}"
                            for d in inv.devices) or "none"
        lines.extend(clip(f"{inv.resource}{'' if inv.registered else ' (no plugin: from the checkpoint)'}: {devices}", 3))
    for part in e.device_hints:
        lines.extend(clip(f"{part.target} {part.resource}: {part.path} - asks {part.requested}; {part.note}", 3))
        if part.masks:
            lines.append(f"     {'nodes':<10}{'devices':>8}{'free':>6}   verdict, narrowest width {part.min_affinity_size}")
            for row in part.masks:
                verdict = s.good(row.verdict) if row.hint else row.verdict
                lines.append(f"     {fmt_nodes(row.nodes):<10}{row.devices:>8}{row.free:>6}   {verdict}")
            if part.omitted:
                lines.append(f"     ... not listed: {_omitted_text(part.omitted)}")
        lines.append(f"     hints {part.resource}: {_hint_list(part.hints)}")
        if not part.consistent:
            lines.append(s.bad("     warning: the recomputed device hints differ from the manager's (please report)"))
    return lines


def _cpu_allocation_lines(e: Explanation, s: _Style) -> list[str]:
    """Part 5's CPUs: per Allocate, the CPUs taken and the stage that took each."""
    lines = ["   CPUs:"]
    for a in e.cpu_allocation:
        if a.error:
            lines.extend(s.bad(x) for x in clip(f"{a.target}: refused: {a.reason}: {a.error}", 5))
            if a.note:
                lines.extend(clip(a.note, 7))
            continue
        if not a.cpus:
            lines.extend(clip(f"{a.target}: {a.note or 'shared pool'}", 5))
            continue
        lines.extend(clip(f"{a.target}: CPUs {a.cpus} ({a.requested} asked); {a.note}", 5))
        for step in a.steps:
            where = "from the hint's CPUs" if step.phase == "aligned" else "from any free CPU"
            numa = f" (NUMA node {step.numa_node})" if step.numa_node is not None else ""
            lines.append(f"       {step.stage}{numa} {where}: {step.cpus}")
        if not a.consistent:
            lines.append(s.bad("       warning: the re-derived CPUs differ from Allocate's (please report)"))
    return lines


def _device_allocation_lines(e: Explanation, s: _Style) -> list[str]:
    """Part 5's devices: per container and resource, the devices picked and why."""
    lines = ["   devices:"]
    for a in e.device_allocation:
        picks = "; ".join(f"{p.id} ({fmt_nodes(p.numa_nodes) if p.numa_nodes else 'no NUMA'}): {p.why}"
                          for p in a.picks) or "none"
        err = f"; refused: {a.error}" if a.error else ""
        lines.extend(clip(f"{a.target} {a.resource} x{a.requested}: {picks}{err}", 5))
    return lines


def _merge_lines(part: MergePart, s: _Style) -> list[str]:
    """Part 3 for one merge: the lists, the result and its rule, the rivals, the admit rule."""
    if part.path == "policy-none":
        return clip(f"{part.target}: {part.rule}", 3)
    walk = (f"{part.combinations:,} combination(s)" if part.combinations >= 0
            else "too many combinations to count (hint families)")
    lines = [f"   {part.target}: {len(part.lists)} list(s), {walk} kubelet would walk"
             + (", prefer-closest-numa-nodes" if part.prefer_closest else "")]
    for pl in part.lists:
        shown = _hint_list(pl.filtered)
        dropped = "" if pl.filtered == pl.hints else f"   (before the filter: {_hint_list(pl.hints)})"
        lines.extend(clip(f"{pl.provider} {pl.resource}: {shown}{dropped}", 5))
    if part.single_numa_note:
        lines.extend(clip(part.single_numa_note, 5))
    winner = fmt_nodes(part.winner["numaAffinity"]) + (" preferred" if part.winner["preferred"] else " not preferred")
    lines.extend(clip(f"merged: {s.head(winner)} - {part.rule}", 5))
    for rival in part.rivals:
        lines.extend(clip(f"beats {fmt_nodes(rival.nodes)}{'*' if rival.preferred else ''}: {rival.rule}", 7))
    verdict = s.good(part.admit_rule) if part.admit else s.bad(part.admit_rule)
    lines.append(f"     {verdict}")
    if not part.consistent:
        lines.append(s.bad("     warning: the recomputed merge differs from the policy's (please report)"))
    return lines


def _state_lines(before: Optional[dict], after: Optional[dict]) -> list[str]:
    """Free bytes per node and resource before and after, with allocatable, cells and assignments."""
    lines = [f"     {'node':<5}{'resource':<16}{'free before':>14}{'free after':>14}{'allocatable':>14}   cells, assignments"]
    for node_id, node in sorted((after or {}).items(), key=lambda kv: int(kv[0])):
        old = (before or {}).get(node_id) or {}
        for resource, table in (node.get("memoryMap") or {}).items():
            was = ((old.get("memoryMap") or {}).get(resource) or {}).get("free")
            lines.append(
                f"     {node_id:<5}{resource:<16}{fmt_bytes(was) if was is not None else '-':>14}"
                f"{fmt_bytes(table['free']):>14}{fmt_bytes(table['allocatable']):>14}"
                f"   {fmt_nodes(node.get('cells') or [])}, {node.get('numberOfAssignments', 0)}"
            )
    return lines


def explanation_lines(e: Explanation, color: bool = False, what_if: bool = True) -> list[str]:
    """The five parts of one explanation, and part 6 when it was asked for (and `what_if`)."""
    s = _Style(color)
    if e.error:
        return [s.bad(e.error)]
    a = e.asked
    lines = [s.head("1. What is asked")]
    lines.extend(clip(f"pod {a.pod}: QoS {a.qos} ({a.qos_reason})", 3))
    managers = f"memory manager {a.memory_policy}, topology manager {a.topology_policy}, scope {a.scope}"
    models = any(ask.cpu is not None for ask in a.containers)  # the node has a CPU manager or devices
    if models:
        lines.extend(clip(f"{managers}; CPU manager {_cpu_policy(e)}", 3))
    else:
        lines.append("   " + managers)
    for ask in a.containers:
        note = f" - {ask.note}" if ask.note else ""
        memory = fmt_sizes(ask.requested) if ask.requested or ask.cpu is None else "no memory"
        lines.extend(clip(f"{ask.name} ({ask.kind}): {memory}{_cpu_and_devices_asked(ask)}{note}", 3))
    for part in a.pod_parts:
        peak = f" ({part.peak_container})" if part.peak_container else ""
        lines.append(f"     {part.resource}: max(app {fmt_bytes(part.app)} + sidecars {fmt_bytes(part.sidecars)}, "
                     f"init peak {fmt_bytes(part.init_peak)}{peak}) = {fmt_bytes(part.total)}")
    lines.append(s.head("2. The memory manager's hints"))
    if e.allocatable:
        lines.append(f"   {DERIVATION_HEAD}:")
        lines.extend(line for text in derivation_lines(e.allocatable) for line in clip(text, 5))
    for part in e.hints:
        lines.extend(_hints_lines(part, s))
    if not e.hints:
        lines.append("   not asked: the topology manager " + (
            "policy none asks no hint provider" if e.asked.topology_policy == "none" else "asked no hints"))
    if e.cpu_policy != "none" or e.cpu_hints:
        lines.extend(_cpu_lines(e, s))
    if e.devices or e.device_hints:
        lines.extend(_device_hint_lines(e, s))
    if e.op == "hints":
        lines.append("   (a hints step: nothing is merged, decided or allocated)")
        return lines
    lines.append(s.head("3. The merge"))
    for part in e.merges:
        lines.extend(_merge_lines(part, s))
    if not e.merges:
        lines.append("   no merge: topology manager policy none admits every pod without hints")
    d = e.decision
    lines.append(s.head("4. The decision"))
    if d.admitted:
        lines.append("   " + s.good("admitted"))
    else:
        lines.extend(s.bad(line) for line in clip(f"rejected: {d.reason}: {d.message}", 3))
    lines.extend(clip(d.why, 3))
    lines.append(s.head("5. The allocation"))
    alloc = e.allocation
    if e.cpu_allocation:
        lines.extend(_cpu_allocation_lines(e, s))
    if e.device_allocation:
        lines.extend(_device_allocation_lines(e, s))
    nested = bool(e.cpu_allocation or e.device_allocation)  # memory is then one of three: under a `memory:` head
    pad = 5 if nested else 3
    memory_lines: list[str] = []
    if e.asked.memory_policy != "Static":
        memory_lines.append(f"{' ' * pad}memory manager policy {e.asked.memory_policy}: no memory is assigned and no "
                            "machine state kept")
        lines.extend(["   memory:"] + memory_lines if nested else memory_lines)
        if e.what_if is not None and what_if and (e.cpu_nodes or e.devices):  # the CPUs or devices may decide
            lines.extend(what_if_lines(e.what_if))
        return lines
    for c in alloc.containers:
        if not c.blocks and not c.error and not c.taken:
            memory_lines.append(f"{' ' * pad}{c.name}: nothing to allocate")
            continue
        takes = ", ".join(f"{fmt_bytes(t.size)} {t.resource} from node {t.node}" for t in c.taken) or "nothing new"
        reuse = f"; re-uses init-container memory: {fmt_sizes(c.reused)}" if c.reused else ""
        err = f"; refused: {c.error}" if c.error else ""
        err += f"; {c.note}" if c.note else ""
        nodes = fmt_nodes(c.nodes) if c.nodes else "-"
        mems = c.cpuset_mems or "-"
        memory_lines.extend(clip(f"{c.name}: nodes {nodes}, cpuset.mems {mems}; took {takes}{reuse}{err}", pad))
    if nested:
        lines.append("   memory:" + ("" if alloc.containers else
                                     " nothing allocated" + ("" if d.admitted else " (the pod was refused)")))
    elif not alloc.containers:
        memory_lines.append("   nothing allocated")
    lines.extend(memory_lines)
    held = []
    kinds = {ask.name: ask.kind for ask in e.asked.containers}
    for name, blocks in alloc.blocks_after.items():
        text = "; ".join(f"{b['type']} {fmt_bytes(b['size'])} on {fmt_nodes(b['numaAffinity'])}" for b in blocks or [])
        if not text and kinds.get(name) == "init" and alloc.containers:
            text = "nothing (a finished init container is released when a later container is created)"
        held.append(f"{name}: {text or 'nothing'}")
    if alloc.containers and d.admitted:
        lines.extend(clip("after the containers are created, they hold: " + ", ".join(held), pad))
    lines.append(f"{' ' * pad}machine state:")
    lines.extend("  " + line if nested else line for line in _state_lines(alloc.before, alloc.after))
    if e.what_if is not None and what_if:
        lines.extend(what_if_lines(e.what_if))
    return lines


def step_lines(view: StepView, color: bool = False) -> list[str]:
    """One step's heading and explanation."""
    s = _Style(color)
    status = "" if view.status == "passed" else "  " + s.bad("[expectation failed]")
    lines = [s.head(f"== step {view.index}: {view.title}") + status]
    for failure in view.failures:
        lines.append(s.bad(f"   expected {failure['path']} = {failure['expected']!r}, got {failure['actual']!r}"))
    if view.explanation is not None:
        lines.extend(explanation_lines(view.explanation, color))
    return lines


def scenario_text(view: ScenarioView, color: bool = False) -> str:
    """Every explained step of a scenario."""
    lines = [view.file, view.name]
    for step in view.steps:
        if step.explanation is not None:
            lines.append("")
            lines.extend(step_lines(step, color))
    return "\n".join(lines) + "\n"
