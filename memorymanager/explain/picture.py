"""The SVG picture of a node's NUMA memory, for explain's HTML pages.

One column per NUMA node (`<g class="numa-node" data-node=...>`), one row per resource (regular
memory first), one bar per node and resource (`<g class="bar" data-resource=... data-total=...
data-system-reserved=... data-allocatable=... data-reserved=... data-free=...>`, the machine
state's exact bytes). Every bar is drawn on one scale, whatever its resource (a 2Gi hugepage bar
is shorter than a 5Gi memory bar), its frame as tall as its total; bottom-up: reservedMemory
(system reserved), the hugepage pools carved out of regular memory, each container's memory (one
colour per pod, hover titles) and free. Each segment tall enough carries its numbers; under each
bar, the node, its free and its allocatable bytes. Nodes of a multi-NUMA group are joined by a
bracket.

A refused request (`ask`: resource -> bytes) is drawn on every node against the free space it did
not fit: a dashed outline of its size standing on the used part of the bar
(`<rect class="ask" data-request=...>`), the part that does not fit in free memory filled red
(`ask-over`), labelled with its size.

What the picture cannot know: kubelet records a multi-NUMA block as one size on a group of nodes,
not how its bytes split over those nodes; inside a group each node's reserved bytes are shared
among the group's containers in proportion to their block sizes, and the hover title says so.
"""
from __future__ import annotations

import html
from typing import Iterable, Optional

from memorymanager.explain.units import approx_bytes, fmt_bytes, fmt_nodes

FULL = 170  # pixels of the largest bar (or refused request) on the page's one scale
BAR_WIDTH = 76
BAR_GAP = 22
LEFT = 104  # room for the resource names
HEAD = 18  # above each row: room for the refused request's label
UNDER = 50  # under each row: the node, free and allocatable lines, the group bracket
MIN_ROW = 24  # the least height of a row (a resource whose bars are all tiny)
MIN_LABEL = 13  # a segment at least this tall carries its label
CHARS = 12  # the longest label a bar holds

CSS = """
svg text{font:11px system-ui,sans-serif;fill:#333;text-anchor:middle}svg text.in{fill:#111;font-size:10px}
svg text.num{font-size:10.5px}svg .head{font-weight:bold}svg text.lab{text-anchor:start}.sr{fill:#9e9e9e}.hp{fill:#b0bec5}.free{fill:#f1f8e9;stroke:#8bc34a}.other{fill:#ffcc80}
.frame{fill:none;stroke:#555}.group{fill:none;stroke:#1565c0;stroke-width:2}
.ask{fill:none;stroke:#c62828;stroke-width:2;stroke-dasharray:5 3}.ask-over{fill:#e53935;fill-opacity:.55}
svg text.asked{fill:#b71c1c;font-weight:bold}
"""


def pod_colour(index: int) -> str:
    """A distinct colour per pod (golden-angle hues)."""
    return f"hsl({(index * 137.5) % 360:.0f},62%,52%)"


def _e(text: object) -> str:
    """HTML-escaped text (attributes too)."""
    return html.escape(str(text), quote=True)


class Palette:
    """One colour per pod UID across the whole page, in order of first appearance."""

    def __init__(self) -> None:
        """No pod seen yet."""
        self.index: dict[str, int] = {}

    def number(self, uid: str) -> int:
        """The pod's colour number (CSS class `c<number>`)."""
        if uid not in self.index:
            self.index[uid] = len(self.index)
        return self.index[uid]

    def colour(self, uid: str) -> str:
        """The pod's colour."""
        return pod_colour(self.number(uid))

    def css(self) -> str:
        """One rule per pod colour used on the page."""
        return "".join(f".c{i}{{fill:{pod_colour(i)}}}" for i in range(len(self.index)))


def segments(node_id: str, resource: str, node: dict, entries: Optional[dict],
             names: dict[str, str]) -> list[tuple[str, int, str, str]]:
    """(pod uid, bytes, label, hover title) of each container's memory on this node and resource."""
    table = node["memoryMap"][resource]
    reserved = table.get("reserved", 0)
    nid = int(node_id)
    exact: list[tuple[str, int, str, str]] = []
    shared: list[tuple[str, int, str, str]] = []
    for uid, containers in (entries or {}).items():
        for cname, blocks in (containers or {}).items():
            for block in blocks or []:
                if block.get("type") != resource or nid not in (block.get("numaAffinity") or []):
                    continue
                who = f"{names.get(uid, uid)}/{cname}"
                if len(block["numaAffinity"]) == 1:
                    exact.append((uid, block["size"], names.get(uid, uid), f"{who} {fmt_bytes(block['size'])}"))
                else:
                    shared.append((uid, block["size"], names.get(uid, uid), f"{who} {fmt_bytes(block['size'])} on "
                                                                           f"{fmt_nodes(block['numaAffinity'])}"))
    out = [(uid, size, f"{name} {fmt_bytes(size)}", title) for uid, size, name, title in exact if size > 0]
    left = reserved - sum(size for _, size, _, _ in out)
    total_shared = sum(size for _, size, _, _ in shared)
    if len(shared) == 1 and left > 0:
        uid, _, name, title = shared[0]
        out.append((uid, left, f"{name} {fmt_bytes(left)}", f"{title}; {fmt_bytes(left)} of it here"))
        left = 0
    elif shared and total_shared > 0 and left > 0:
        parts = [left * size // total_shared for _, size, _, _ in shared]
        for (uid, _, name, title), part in zip(shared, parts):
            out.append((uid, part, f"{name} ~{approx_bytes(part)}",
                        f"{title}; about {approx_bytes(part)} here (split not recorded)"))
        left -= sum(parts)
    if left > 0:
        out.append(("", left, fmt_bytes(left), f"{fmt_bytes(left)} reserved by containers not in the assignments"))
    return out


def _fit(label: str) -> str:
    """A label short enough for a bar: the name dropped (then cut) when it is too long."""
    if len(label) <= CHARS:
        return label
    size = label.rsplit(" ", 1)[-1]
    return size if len(size) <= CHARS else size[:CHARS - 1] + "…"


def _resources(machine_state: dict, node_ids: list[str]) -> list[str]:
    """Every resource of the machine state: regular memory first, then hugepages by name."""
    found: list[str] = []
    for nid in node_ids:
        for resource in (machine_state[nid].get("memoryMap") or {}):
            if resource not in found:
                found.append(resource)
    return sorted(found, key=lambda name: (name != "memory", name))


def _hugepages(node: dict) -> int:
    """The bytes of regular memory the node's hugepage pools take (total - reserved - allocatable)."""
    table = node["memoryMap"].get("memory")
    if table is None:
        return 0
    return max(0, table["total"] - table["systemReserved"] - table["allocatable"])


class _Bar:
    """One bar being drawn, bottom-up, on the page's scale."""

    def __init__(self, x: int, bottom: float, px: float) -> None:
        """The bar's left edge, its bottom and the scale (pixels per byte)."""
        self.x, self.y, self.px = x, bottom, px
        self.parts: list[str] = []

    def stack(self, size: int, cls: str, label: str, title: str) -> None:
        """One segment of `size` bytes on top of the previous ones, labelled when tall enough."""
        if size <= 0:
            return
        h = self.px * size
        self.y -= h
        self.parts.append(f'<rect x="{self.x}" y="{self.y:.0f}" width="{BAR_WIDTH}" height="{max(h, 1):.0f}" '
                          f'class="{cls}"><title>{_e(title)}</title></rect>')
        if h >= MIN_LABEL and label:
            self.parts.append(f'<text class="in" x="{self.x + BAR_WIDTH / 2:.0f}" y="{self.y + h / 2 + 4:.0f}">'
                              f'{_e(_fit(label))}</text>')


def picture_width(machine_state: Optional[dict]) -> int:
    """The picture's width in pixels (what is drawn under it may not be wider)."""
    return LEFT + len(machine_state or {}) * (BAR_WIDTH + BAR_GAP) + 10


def picture_svg(machine_state: Optional[dict], entries: Optional[dict], names: dict[str, str],
                palette: Palette, ask: Optional[dict[str, int]] = None) -> tuple[str, list[str]]:
    """The SVG and the pod UIDs it shows (for the legend); `ask` is a refused request to draw."""
    if not machine_state:
        return '<p class="info">no machine state (the node is not running, or policy None keeps none)</p>', []
    ask = {r: size for r, size in (ask or {}).items() if size > 0}
    node_ids = sorted(machine_state, key=int)
    resources = _resources(machine_state, node_ids)

    def table(nid: str, resource: str) -> Optional[dict]:
        return (machine_state[nid].get("memoryMap") or {}).get(resource)

    def reach(nid: str, resource: str) -> int:
        """How high this bar (or the request drawn on it) reaches, in bytes."""
        t = table(nid, resource)
        if t is None:
            return 0
        return max(t["total"], t["total"] - t["free"] + ask.get(resource, 0))

    px = FULL / (max(reach(n, r) for n in node_ids for r in resources) or 1)  # one scale for every bar
    x_of = {nid: LEFT + i * (BAR_WIDTH + BAR_GAP) for i, nid in enumerate(node_ids)}
    width = picture_width(machine_state)
    shown: list[str] = []
    bars: dict[str, list[str]] = {nid: [] for nid in node_ids}
    labels: list[str] = []
    groups: list[str] = []
    top = 0.0
    for resource in resources:
        height = max(MIN_ROW, max(reach(n, resource) for n in node_ids) * px)
        bottom = top + HEAD + height
        for nid in node_ids:
            t = table(nid, resource)
            if t is not None:
                bars[nid].append(_bar(nid, resource, t, machine_state[nid], x_of[nid], bottom, px, entries, names,
                                      palette, shown, ask.get(resource, 0)))
        labels.append(f'<text class="head lab" x="4" y="{bottom - height / 2:.0f}">{_e(resource)}</text>')
        groups.extend(_brackets(machine_state, node_ids, x_of, bottom + UNDER - 8))
        top = bottom + UNDER + 8
    body = "".join(f'<g class="numa-node" data-node="{_e(nid)}">{"".join(bars[nid])}</g>' for nid in node_ids)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top:.0f}" '
           f'viewBox="0 0 {width} {top:.0f}" role="img">{"".join(labels)}{body}{"".join(groups)}</svg>')
    return svg, shown


def _bar(nid: str, resource: str, t: dict, node: dict, x: int, bottom: float, px: float, entries: Optional[dict],
         names: dict[str, str], palette: Palette, shown: list[str], asked: int) -> str:
    """One bar: its frame (as tall as its total), its segments, its numbers and the refused request on it."""
    bar = _Bar(x, bottom, px)
    head = (f'<g class="bar" data-resource="{_e(resource)}" data-total="{t["total"]}" '
            f'data-system-reserved="{t["systemReserved"]}" data-allocatable="{t["allocatable"]}" '
            f'data-reserved="{t["reserved"]}" data-free="{t["free"]}">')
    bar.stack(t["systemReserved"], "sr", f"sys {fmt_bytes(t['systemReserved'])}",
              f"reservedMemory {fmt_bytes(t['systemReserved'])}")
    if resource == "memory":
        pools = _hugepages(node)
        bar.stack(pools, "hp", f"hp {fmt_bytes(pools)}", f"hugepage pools {fmt_bytes(pools)}")
    for uid, size, label, title in segments(nid, resource, node, entries, names):
        if uid and uid not in shown:
            shown.append(uid)
        bar.stack(size, f"pod c{palette.number(uid)}" if uid else "other", label, title)
    bar.stack(t["free"], "free", "", f"free {fmt_bytes(t['free'])}")  # its numbers are under the bar
    frame_h = t["total"] * px
    parts = [head, *bar.parts,
             f'<rect class="frame" x="{x}" y="{bottom - frame_h:.0f}" width="{BAR_WIDTH}" height="{frame_h:.0f}"/>']
    if asked:
        used = t["total"] - t["free"]
        y_top = bottom - (used + asked) * px
        parts.append(f'<rect class="ask" data-request="{asked}" x="{x + 3}" y="{y_top:.0f}" width="{BAR_WIDTH - 6}" '
                     f'height="{asked * px:.0f}"><title>the refused request: {_e(resource)} {fmt_bytes(asked)}, '
                     f'{fmt_bytes(t["free"])} free here</title></rect>')
        if asked > t["free"]:
            over = (asked - t["free"]) * px
            parts.append(f'<rect class="ask-over" x="{x + 3}" y="{y_top:.0f}" width="{BAR_WIDTH - 6}" '
                         f'height="{over:.0f}"><title>{fmt_bytes(asked - t["free"])} more than is free</title></rect>')
        y_label = y_top + 13 if asked * px >= MIN_LABEL + 2 else y_top - 4  # inside the outline when it is tall enough
        parts.append(f'<text class="asked" x="{x + BAR_WIDTH / 2:.0f}" y="{y_label:.0f}">asks {_e(fmt_bytes(asked))}</text>')
    cx = x + BAR_WIDTH / 2
    parts.append(f'<text class="num" x="{cx:.0f}" y="{bottom + 13:.0f}"><tspan class="head">node {_e(nid)}</tspan>'
                 f'<tspan x="{cx:.0f}" dy="12">free {fmt_bytes(t["free"])}</tspan>'
                 f'<tspan x="{cx:.0f}" dy="12">of {fmt_bytes(t["allocatable"])}</tspan></text></g>')
    return "".join(parts)


def _brackets(machine_state: dict, node_ids: list[str], x_of: dict[str, int], y: float) -> list[str]:
    """A bracket under the nodes of each multi-NUMA group."""
    out: list[str] = []
    seen: set[tuple] = set()
    for nid in node_ids:
        cells = tuple(machine_state[nid].get("cells") or [])
        if len(cells) > 1 and cells not in seen and all(str(c) in x_of for c in cells):
            seen.add(cells)
            xs = [x_of[str(c)] for c in cells]
            out.append(f'<path class="group" d="M{min(xs)} {y - 4:.0f}V{y:.0f}H{max(xs) + BAR_WIDTH}V{y - 4:.0f}">'
                       f"<title>NUMA group {fmt_nodes(cells)}</title></path>"
                       f'<text class="lab" x="{min(xs) + 2}" y="{y + 12:.0f}">group {fmt_nodes(cells)}</text>')
    return out


def legend(shown: Iterable[str], names: dict[str, str], palette: Palette, asked: bool = False) -> str:
    """The colour key: system reserved, hugepages, free, each pod shown, the refused request."""
    items = ['<span><i style="background:#9e9e9e"></i>system reserved</span>',
             '<span><i style="background:#b0bec5"></i>hugepage pools</span>',
             '<span><i style="background:#f1f8e9;border:1px solid #8bc34a"></i>free</span>']
    items += [f'<span><i style="background:{palette.colour(uid)}"></i>{_e(names.get(uid, uid))}</span>' for uid in shown]
    if asked:
        items.append('<span><i style="border:2px dashed #c62828;background:#ef9a9a"></i>refused request '
                     '(red: more than is free)</span>')
    return '<div class="legend">' + "".join(items) + "</div>"
