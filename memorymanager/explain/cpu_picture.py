"""The SVG picture of a node's CPUs and devices per NUMA node, drawn under the memory picture of explain's HTML pages.

Per NUMA node one group (`<g class="cpu-node" data-node=...>`), with one bar of CPUs (`<g class="cpu-bar"
data-cpus=... data-reserved=... data-exclusive=... data-free=... data-pod=...>`: counts) made of one square per
CPU (`<rect class="cpu reserved|held|free|pod" data-cpu=N>`): reserved for the system, held exclusively by
other containers, free in the shared pool, or taken by the explained pod (its colour), as the static policy saw
them before the pod and as Allocate gave them. Under it, per device resource with a device on the node, one bar
(`<g class="device-bar" data-resource=... data-devices=... data-held=... data-free=... data-picked=...>`) of
one square per device (`<rect class="device free|held|picked|unhealthy" data-device=ID>`); devices without
topology stand in a column of their own (`data-node=""`). A refused pod's exclusive CPU request is written over
each node's bar (`asks N CPUs`, red where the node has fewer free CPUs).

Drawn only when the explanation has the static CPU policy's rows or device resources: a node pinning memory
alone gets the memory picture alone.
"""
from __future__ import annotations

import html
from typing import Optional

from kubeinputs.cpuset import CPUSet, CPUSetError
from memorymanager.explain.model import Explanation
from memorymanager.explain.picture import BAR_GAP, BAR_WIDTH, LEFT, Palette

CELL = 9  # a CPU's or device's square, in pixels
STEP = CELL + 2
PER_ROW = BAR_WIDTH // STEP  # squares per row of a bar
HEAD = 16  # above a bar: its request label
UNDER = 30  # under a bar: its numbers

CSS = """
svg .cpu.reserved,svg .device.unhealthy{fill:#9e9e9e}svg .cpu.held,svg .device.held{fill:#ffb74d}
svg .cpu.free,svg .device.free{fill:#f1f8e9;stroke:#8bc34a}svg .cpu.pod,svg .device.picked{stroke:#0d47a1;stroke-width:1.5}
svg text.short{fill:#b71c1c;font-weight:bold}
"""


def _e(text: object) -> str:
    """HTML-escaped text (attributes too)."""
    return html.escape(str(text), quote=True)


def _cpus(text: str) -> CPUSet:
    """A cpuset string as a set (empty when it cannot be read)."""
    try:
        return CPUSet.parse(text) if text else CPUSet()
    except CPUSetError:
        return CPUSet()


def _squares(x: int, top: float, items: list[tuple[str, str, str, str]]) -> tuple[list[str], float]:
    """(one square per (class, data attribute, value, title), wrapped PER_ROW to a row; the bottom reached)."""
    parts = []
    for i, (cls, attr, value, title) in enumerate(items):
        cx, cy = x + (i % PER_ROW) * STEP, top + (i // PER_ROW) * STEP
        parts.append(f'<rect class="{cls}" {attr}="{_e(value)}" x="{cx}" y="{cy:.0f}" width="{CELL}" height="{CELL}">'
                     f"<title>{_e(title)}</title></rect>")
    rows = -(-len(items) // PER_ROW) if items else 0
    return parts, top + rows * STEP


def _pod_cpus(explanation: Explanation) -> CPUSet:
    """Every exclusive CPU the explained pod's containers got."""
    got = CPUSet()
    for alloc in explanation.cpu_allocation:
        if not alloc.error:
            got = got.union(_cpus(alloc.cpus))
    return got


def _asked_cpus(explanation: Explanation) -> int:
    """A refused pod's largest exclusive CPU request (0: none, or admitted)."""
    if explanation.decision is None or explanation.decision.admitted:
        return 0
    return max((h.requested for h in explanation.cpu_hints), default=0)


def _cpu_bar(row, pod: CPUSet, pod_class: str, asked: int, x: int, top: float) -> tuple[list[str], float]:
    """One node's CPU bar: a square per CPU, its counts under it, a refused request over it."""
    cpus, free, reserved, held = _cpus(row.cpus), _cpus(row.free), _cpus(row.reserved), _cpus(row.exclusive)
    mine = pod.intersection(cpus)
    items = []
    for cpu in cpus.list():
        if cpu in mine:
            items.append((f"cpu pod {pod_class}", "data-cpu", str(cpu), f"CPU {cpu}: taken by this pod"))
        elif cpu in reserved:
            items.append(("cpu reserved", "data-cpu", str(cpu), f"CPU {cpu}: reserved for the system"))
        elif cpu in held:
            items.append(("cpu held", "data-cpu", str(cpu), f"CPU {cpu}: held exclusively by another container"))
        elif cpu in free:
            items.append(("cpu free", "data-cpu", str(cpu), f"CPU {cpu}: free (shared pool)"))
        else:
            items.append(("cpu held", "data-cpu", str(cpu), f"CPU {cpu}: in use"))
    free_after = free.difference(mine).size()
    head = (f'<g class="cpu-bar" data-cpus="{cpus.size()}" data-reserved="{reserved.size()}" '
            f'data-exclusive="{held.size()}" data-free="{free_after}" data-pod="{mine.size()}">')
    parts = [head]
    if asked:
        cls = "short" if free.size() < asked else "asked"
        parts.append(f'<text class="{cls}" x="{x + BAR_WIDTH / 2:.0f}" y="{top + 11:.0f}">asks {asked} CPU(s)</text>')
    squares, bottom = _squares(x, top + HEAD, items)
    parts.extend(squares)
    cx = x + BAR_WIDTH / 2
    parts.append(f'<text class="num" x="{cx:.0f}" y="{bottom + 12:.0f}">{free_after} free CPU(s)'
                 f'<tspan x="{cx:.0f}" dy="12">of {cpus.size()}</tspan></text></g>')
    return parts, bottom + UNDER


def _device_items(explanation: Explanation, node: Optional[int], pod_class: str
                  ) -> dict[str, list[tuple[str, str, str, str]]]:
    """Per device resource, the squares of the devices on `node` (None: those without topology)."""
    picked = {(a.resource, p.id) for a in explanation.device_allocation if not a.error for p in a.picks}
    out: dict[str, list[tuple[str, str, str, str]]] = {}
    for inv in explanation.devices:
        for d in inv.devices:
            on = (d.numa_nodes is None and node is None) or (node is not None and node in (d.numa_nodes or []))
            if not on:
                continue
            if (inv.resource, d.id) in picked:
                cls, what = f"device picked {pod_class}", "picked for this pod"
            elif not d.healthy and d.state != "in use (no plugin)":
                cls, what = "device unhealthy", "unhealthy"
            elif d.state == "free":
                cls, what = "device free", "free"
            else:
                cls, what = "device held", d.state
            out.setdefault(inv.resource, []).append((cls, "data-device", d.id, f"{inv.resource} {d.id}: {what}"))
    return out


def _device_bars(explanation: Explanation, node: Optional[int], pod_class: str, x: int, top: float
                 ) -> tuple[list[str], float]:
    """The node's device bars, one per resource."""
    parts: list[str] = []
    for resource, items in _device_items(explanation, node, pod_class).items():
        counts = {k: sum(1 for cls, *_ in items if cls.split()[1] == k) for k in ("held", "free", "picked")}
        parts.append(f'<g class="device-bar" data-resource="{_e(resource)}" data-devices="{len(items)}" '
                     f'data-held="{counts["held"]}" data-free="{counts["free"]}" data-picked="{counts["picked"]}">'
                     f'<text class="in" x="{x + BAR_WIDTH / 2:.0f}" y="{top + 10:.0f}">{_e(resource.split("/")[-1])}</text>')
        squares, bottom = _squares(x, top + 14, items)
        parts.extend(squares)
        parts.append(f'<text class="num" x="{x + BAR_WIDTH / 2:.0f}" y="{bottom + 12:.0f}">{counts["free"]} free of '
                     f"{len(items)}</text></g>")
        top = bottom + 20
    return parts, top


def cpu_device_svg(explanation: Optional[Explanation], palette: Palette) -> str:
    """The CPU and device picture of an explanation ("" when it has neither)."""
    if explanation is None or (not explanation.cpu_nodes and not explanation.devices):
        return ""
    pod_class = f"c{palette.number(explanation.asked.uid)}" if explanation.asked is not None else ""
    pod, asked = _pod_cpus(explanation), _asked_cpus(explanation)
    nodes = [r.node for r in explanation.cpu_nodes]
    for inv in explanation.devices:
        nodes.extend(n for d in inv.devices for n in (d.numa_nodes or []) if n not in nodes)
    nodes.sort()
    loose = any(d.numa_nodes is None for inv in explanation.devices for d in inv.devices)
    columns: list[Optional[int]] = [*nodes, *([None] if loose else [])]
    rows = {r.node: r for r in explanation.cpu_nodes}
    body, bottom = [], 0.0
    for i, node in enumerate(columns):
        x = LEFT + i * (BAR_WIDTH + BAR_GAP)
        parts, top = [], 4.0
        if node in rows:
            cpu_parts, top = _cpu_bar(rows[node], pod, pod_class, asked, x, top)
            parts.extend(cpu_parts)
        dev_parts, top = _device_bars(explanation, node, pod_class, x, top)
        parts.extend(dev_parts)
        name = "no topology" if node is None else f"node {node}"
        parts.append(f'<text class="head" x="{x + BAR_WIDTH / 2:.0f}" y="{top + 4:.0f}">{_e(name)}</text>')
        body.append(f'<g class="cpu-node" data-node="{"" if node is None else node}">{"".join(parts)}</g>')
        bottom = max(bottom, top + 10)
    width = LEFT + len(columns) * (BAR_WIDTH + BAR_GAP) + 10
    labels = '<text class="head lab" x="4" y="24">CPUs</text>' if explanation.cpu_nodes else ""
    legend = ('<div class="legend"><span><i style="background:#9e9e9e"></i>reserved / unhealthy</span>'
              '<span><i style="background:#ffb74d"></i>held by other containers</span>'
              '<span><i style="background:#f1f8e9;border:1px solid #8bc34a"></i>free</span>'
              f'<span><i style="background:{palette.colour(explanation.asked.uid) if explanation.asked else "#fff"};'
              'border:1px solid #0d47a1"></i>this pod\'s CPUs and devices</span></div>')
    return (f'<svg class="cpu-picture" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{bottom:.0f}" '
            f'viewBox="0 0 {width} {bottom:.0f}" role="img">{labels}{"".join(body)}</svg>{legend}')
