"""Part 6 of an explanation (`--what-if`) as terminal text: what would make a refused pod fit, each
answer checked on a copy of the node, or the headroom an admitted pod leaves."""
from __future__ import annotations

from typing import Mapping, Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.reader import dump_yaml
from memorymanager.explain.model import MaskShortfall, ProviderFit, WhatIf
from memorymanager.explain.units import fmt_bytes, fmt_nodes, fmt_sizes
from memorymanager.explain.wrap import clip
from memorymanager.node.answers import Admission, Placement
from memorymanager.node.whatif import NodeHeadroom, RemovalFix


def placed(admission: Optional[Admission]) -> str:
    """`app on node 0; init on nodes 0-1 (not preferred)` for an admission, or its refusal."""
    if admission is None:
        return "kubelet does not start"
    if not admission.admitted:
        return f"refused ({admission.reason})"
    parts = []
    for name, p in admission.placements.items():
        if not p.memory and not p.cpus and not p.devices:
            continue
        split = _split_placement(name, p)
        if split:
            parts.append(split + ("" if p.preferred or not p.numa_nodes else " (not preferred)"))
            continue
        if p.memory:
            text = f"{name} on node{'s' if ('-' in p.cpuset_mems or ',' in p.cpuset_mems) else ''} {p.cpuset_mems}"
        elif p.numa_nodes:
            text = f"{name} on node{'s' if len(p.numa_nodes) > 1 else ''} {fmt_nodes(list(p.numa_nodes))}"
        else:
            text = name
        if p.cpus:
            text += f", CPUs {p.cpuset_cpus}"
        text += "".join(f", {r} {', '.join(ids)}" for r, ids in p.devices.items() if ids)
        parts.append(text + ("" if p.preferred or not p.numa_nodes else " (not preferred)"))
    return "admitted" + (": " + "; ".join(parts) if parts else "")


def _on(nodes: list[int]) -> str:
    """`on node 0`, `on nodes 0-1`."""
    return f"on node{'s' if len(nodes) > 1 else ''} {fmt_nodes(nodes)}"


def _split_placement(name: str, p: Placement) -> str:
    """`app: memory on node 1, CPUs 2-3 on node 0` when the container's memory (else its hint), CPUs and devices
    are not all on the same NUMA nodes; "" when they are (the placement then reads `app on node 0, CPUs ...`)."""
    base = CPUSet.parse(p.cpuset_mems).list() if p.memory and p.cpuset_mems else list(p.numa_nodes)
    where = {"memory": base} if p.memory else {}
    if p.cpus and p.cpu_numa_nodes is not None:
        where["cpu"] = list(p.cpu_numa_nodes)
    for resource, nodes in (p.device_numa_nodes or {}).items():
        if nodes and p.devices.get(resource):
            where[resource] = list(nodes)
    if all(nodes == base for nodes in where.values()):
        return ""
    text = []
    for resource, nodes in where.items():
        if resource == "memory":
            text.append(f"memory {_on(nodes)}")
        elif resource == "cpu":
            text.append(f"CPUs {p.cpuset_cpus} {_on(nodes)}")
        else:
            text.append(f"{resource} {', '.join(p.devices[resource])} {_on(nodes)}")
    return f"{name}'s " + ", ".join(text)


def _by_node(sizes: Mapping[int, Mapping[str, int]]) -> str:
    """`memory 2Gi on node 0, memory 1Gi on node 1`."""
    return ", ".join(f"{fmt_sizes(dict(per))} on node {node}" for node, per in sorted(sizes.items())) or "nothing"


def _freed(fix: RemovalFix) -> str:
    """What a removal frees: memory per node, then the CPUs and devices it returns (`nothing`)."""
    parts = [_by_node(fix.freed)] if fix.freed else []
    if fix.freed_cpus:
        parts.append(f"CPUs {fix.freed_cpus}")
    parts.extend(f"{r} {', '.join(ids)}" for r, ids in fix.freed_devices.items())
    return "; ".join(parts) or "nothing"


def _shortfall_line(row: MaskShortfall) -> str:
    """`0     lacks memory 1124Mi (free: node 0 memory 1948Mi)`."""
    free = "; ".join(f"node {n} {fmt_sizes(per)}" for n, per in row.free_by_node.items())
    lacking = {r: size for r, size in row.lacking.items() if size}
    what = f"lacks {fmt_sizes(lacking)}" if lacking else "has the free memory"
    tail = f", but {row.blocked_by}" if row.blocked_by else ""
    if not row.preferred_width and not tail:
        tail = ", but it is wider than the preferred width"
    return f"{fmt_nodes(row.nodes) + ':':<7}{what} (free: {free}){tail}"


def _shortfalls_that_matter(rows: list[MaskShortfall]) -> list[MaskShortfall]:
    """The masks that lack memory or break the group rule, and, when no mask of the preferred width fits, the
    wider ones that fit (restricted and single-numa-node refuse those); nothing when memory fits as preferred."""
    def fits(row: MaskShortfall) -> bool:
        return not row.blocked_by and not any(row.lacking.values())

    if any(fits(r) and r.preferred_width for r in rows):
        return []
    return rows


def _requests(requests: Mapping[str, Mapping[str, int]]) -> str:
    """`app memory 1948Mi; init memory 1Gi`."""
    return "; ".join(f"{owner} {fmt_sizes(dict(sizes))}" for owner, sizes in requests.items())


def _headroom_items(rows: list[NodeHeadroom]) -> list[tuple[int, str]]:
    """Per node the free memory left; groups once, with what they may serve."""
    items = []
    groups = set()
    for room in rows:
        free = ", ".join(f"{r} {fmt_bytes(f)} free of {fmt_bytes(room.allocatable.get(r, 0))}"
                         for r, f in room.free.items())
        tail = "" if room.usable_alone else f" (in the group {fmt_nodes(room.cells)}: not usable alone)"
        items.append((5, f"node {room.node}: {free}{tail}"))
        if not room.usable_alone and room.cells not in groups:
            groups.add(room.cells)
            items.append((5, f"group {fmt_nodes(room.cells)}: {fmt_sizes(dict(room.group_free))} free, for a mask "
                             "equal to the group only"))
    return items


def _cpu_headroom_items(w: WhatIf) -> list[tuple[int, str]]:
    """Per NUMA node the CPUs exclusive requests can still take; per device resource the free devices."""
    items = []
    for row in w.cpu_headroom:
        unusable = CPUSet.parse(row.free).difference(CPUSet.parse(row.takeable)) if row.free else CPUSet()
        tail = (f", {unusable.size()} free but not in a whole free core ({unusable}: full-pcpus-only)"
                if unusable.size() else "")
        items.append((5, f"node {row.node}: {_count(row.takeable)} CPU(s) free for exclusive requests "
                         f"({row.takeable or '-'}); {_count(row.exclusive)} held exclusively, {_count(row.reserved)} "
                         f"reserved{tail}"))
    for inv in w.device_headroom:
        free = [d for d in inv.devices if d.state == "free"]
        where = ", ".join(f"{d.id}" + (f" on node {fmt_nodes(d.numa_nodes)}" if d.numa_nodes else "") for d in free)
        items.append((5, f"{inv.resource}: {len(free)} of {len(inv.devices)} device(s) free" + (f" ({where})" if where
                                                                                                else "")))
    return items


def _count(cpus: str) -> int:
    """The number of CPUs of a cpuset string."""
    return CPUSet.parse(cpus).size() if cpus else 0


def _cpu_items(w: WhatIf) -> list[tuple[int, str]]:
    """The CPU and device side of a refusal: masks' shortfalls, the largest CPU request, CPU manager settings."""
    items: list[tuple[int, str]] = []
    if w.cpu_shortfalls:
        items.append((3, f"free CPUs each mask lacks for {w.cpu_shortfalls[0].target}:"))
        for row in w.cpu_shortfalls:
            what = f"lacks {row.lacking} CPU(s)" if row.lacking else "has the free CPUs"
            tail = "" if row.preferred_width else ", but it is wider than the narrowest width"
            items.append((5, f"{fmt_nodes(row.nodes) + ':':<7}{what} ({row.free} free of {row.cpus}){tail}"))
    if w.cpu_note:
        items.append((3, w.cpu_note))
    if w.device_shortfalls:
        items.append((3, f"free devices each mask lacks for {w.device_shortfalls[0].target}:"))
        for row in w.device_shortfalls:
            what = f"lacks {row.lacking} device(s)" if row.lacking else "has the free devices"
            tail = "" if row.preferred_width else ", but it is wider than the narrowest width"
            items.append((5, f"{row.resource} on {fmt_nodes(row.nodes)}: {what} ({row.free} free of {row.devices})"
                             f"{tail}"))
    return items


def _cpu_fix_items(w: WhatIf) -> list[tuple[int, str]]:
    """The checked CPU answers: the CPU manager settings that admit it, the largest CPU request admitted now."""
    items: list[tuple[int, str]] = []
    for t in w.cpu_settings:
        if t.admission is not None and t.admission.admitted:
            items.append((3, f"{t.change} ({dump_yaml(dict(t.fields)).strip()}): {placed(t.admission)}"))
        else:
            outcome = f"kubelet does not start: {t.error}" if t.admission is None else placed(t.admission)
            items.append((3, f"{t.change}: does not help ({outcome})"))
    fit = w.smaller_cpus
    if fit is not None:
        unit = f" (whole cores of {fit.step} CPUs: full-pcpus-only)" if fit.step > 1 else ""
        items.append((3, f"the largest CPU request of {fit.container} admitted now: {fit.cpus} CPU(s){unit}, asked "
                         f"{fit.requested}: {placed(fit.admission)}; {fit.refused_above} is refused"))
    elif w.smaller_cpus_note:
        items.append((3, f"a smaller CPU request: {w.smaller_cpus_note}"))
    for d in w.smaller_devices:
        items.append((3, f"the largest {d.resource} request of {d.container} admitted now: {d.devices} device(s), "
                         f"asked {d.requested}: {placed(d.admission)}; {d.refused_above} is refused"))
    return items


def what_if_items(w: WhatIf) -> list[tuple[int, str]]:
    """Part 6 as (indent, one unwrapped line): the heading at 0."""
    if w.admitted:
        return [(0, "6. Headroom after the admission")] + _headroom_items(w.headroom) + _cpu_headroom_items(w)
    items = [(0, f"6. What would make it fit (each answer checked by admitting on a copy of the node; "
                 f"{w.checks} admissions)")]
    items.extend(_cpu_items(w))
    shown = _shortfalls_that_matter(w.shortfalls)
    if shown:
        items.append((3, f"free memory each mask lacks for {shown[0].target}:"))
        items.extend((5, _shortfall_line(row)) for row in shown)
    elif w.shortfalls:
        fits = ", ".join(fmt_nodes(r.nodes) for r in w.shortfalls if r.preferred_width and not r.blocked_by
                         and not any(r.lacking.values()))
        if w.provider_fits and len(w.provider_fits) > 1:
            items.append((3, _mismatch(w.shortfalls[0].target, w.provider_fits)))
        else:
            items.append((3, f"memory fits {w.shortfalls[0].target} on {fits} (the preferred width): memory is not "
                             "what keeps it out"))
    if w.shortfall_note:
        items.append((3, w.shortfall_note))
    for i, fix in enumerate(w.removals):
        lead = "removing " if i == 0 else "or removing "
        items.append((3, f"{lead}{', '.join(fix.pods)} (frees {_freed(fix)}): {placed(fix.admission)}"))
    if w.removal_note:
        items.append((3, ("removing pods: " if not w.removals else "") + w.removal_note))
    admitted = [t for t in w.settings if t.admission is not None and t.admission.admitted]
    for t in admitted:
        items.append((3, f"topology manager policy {t.policy}, scope {t.scope}: {placed(t.admission)}"))
    if w.settings and not admitted:
        tried = ", ".join(f"{t.policy}/{t.scope}" for t in w.settings)
        items.append((3, f"no other topology manager policy or scope admits it (tried {tried})"))
    items.extend(_cpu_fix_items(w))
    items.extend(_largest_items(w))
    return items


def _largest_items(w: WhatIf) -> list[tuple[int, str]]:
    """The largest memory request of the same shape admitted now; on a node that models CPUs or devices it says
    it is memory that was scaled, and when the CPUs or devices refused the pod, that memory does not limit it."""
    if w.limited_by is None:  # a memory-only node: as it always read
        if w.largest is not None:
            text = (f"the largest request of this shape admitted now: {_requests(w.largest.requests)}: "
                    f"{placed(w.largest.admission)}")
            if w.largest.refused_above is not None:
                text += f"; {_requests(w.largest.refused_above)} is refused"
            return [(3, text)]
        return [(3, f"the largest request of this shape: {w.largest_note}")] if w.largest_note else []
    if w.largest is not None:
        text = (f"the largest memory request admitted now (CPUs and devices as asked): "
                f"{_requests(w.largest.requests)}: {placed(w.largest.admission)}")
        if w.largest.refused_above is not None:
            text += f"; {_requests(w.largest.refused_above)} is refused"
        return [(3, text)]
    if w.limited_by:
        return [(3, f"a smaller memory request does not help: {w.largest_note}; memory is not the limiting resource, "
                    f"{_limiters(w.limited_by)} refused it (see the answers above)")]
    memory_fits = bool(w.shortfalls) and not _shortfalls_that_matter(w.shortfalls)
    if memory_fits and w.provider_fits and len(w.provider_fits) > 1:
        return [(3, f"a smaller memory request does not help: {w.largest_note}; memory is not the limiting resource, "
                    "the other providers' preferred masks do not meet (above)")]
    return [(3, f"the largest memory request of this shape: {w.largest_note}")] if w.largest_note else []


def _limiters(resources: list[str]) -> str:
    """`the CPUs`, `nvidia.com/gpu`, `the CPUs and nvidia.com/gpu`."""
    names = ["the CPUs" if r == "cpu" else r for r in resources]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def _where(masks: Optional[list[list[int]]]) -> str:
    """`on node 0`, `on nodes 0 or 1`, `anywhere` (no preference), `nowhere`."""
    if masks is None:
        return "anywhere"
    if not masks:
        return "nowhere as preferred"
    if len(masks) == 1 and len(masks[0]) == 1:
        return f"only on node {masks[0][0]}"
    return "on " + " or ".join(("node " if len(m) == 1 else "nodes ") + fmt_nodes(m) for m in masks)


def _mismatch(target: str, fits: list[ProviderFit]) -> str:
    """`CPUs fit app only on node 0, memory only on node 1: no mask suits every provider`."""
    parts = []
    for i, fit in enumerate(fits):
        name = "CPUs" if fit.resource == "cpu" else fit.resource
        parts.append(f"{name} fit{'' if name == 'CPUs' else 's'} {target} {_where(fit.masks)}" if i == 0
                     else f"{name} {_where(fit.masks)}")
    return ", ".join(parts) + ": no mask suits every provider as preferred"


def what_if_lines(w: WhatIf) -> list[str]:
    """Part 6 for a terminal: each line wrapped at 100 columns."""
    return [line for indent, text in what_if_items(w) for line in clip(text, indent)]
