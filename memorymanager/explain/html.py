"""A self-contained HTML picture of NUMA memory, step by step (no network, inline CSS and SVG).

Per step: one bar group per NUMA node (`<g class="numa-node" data-node=...>`), holding one
bar per resource (`<g class="bar" data-resource=... data-total=... data-system-reserved=...
data-allocatable=... data-reserved=... data-free=...>`, the machine state's bytes) drawn
bottom-up as system reserved, each container's memory (one colour per pod, a legend, hover
titles) and free. Nodes of a multi-NUMA group are drawn joined by a bracket. Beside the
picture: the step's decision and its explanation text. Steps are `<details>` (collapsible,
closed by default except failed ones) so that a page of 200 steps on 8 nodes stays small
and quick (measured in tests/explain/test_html.py).

What the picture cannot know: kubelet records a multi-NUMA block as one size on a group of
nodes, not how its bytes split over those nodes; inside a group each node's reserved bytes
are shared among the group's containers in proportion to their block sizes, and the hover
title says so. The bar's data attributes are always the machine state's exact bytes.
"""
from __future__ import annotations

import html
from typing import Iterable, Optional

from memorymanager.explain.model import Explanation, ScenarioView, StepView
from memorymanager.explain.text import explanation_lines
from memorymanager.explain.start_text import start_text
from memorymanager.explain.units import DERIVATION_HEAD, approx_bytes, derivation_lines, fmt_bytes, fmt_nodes
from memorymanager.node.start_diagnosis import StartDiagnosis

BAR_HEIGHT = 150
BAR_WIDTH = 34
BAR_GAP = 14
LEFT = 108
TOP = 14
ROW_GAP = 52

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:17px;margin:18px 0 4px}.desc{color:#555;max-width:80em}
details.step{border:1px solid #ccc;border-radius:6px;margin:6px 0;padding:0 8px}
details.step.failed{border:2px solid #c62828;background:#fff5f5}
summary{cursor:pointer;padding:5px 0}summary .badge{border-radius:4px;padding:1px 6px;margin-left:8px;font-size:12px}
.ok{background:#e8f5e9;color:#1b5e20}.no{background:#ffebee;color:#b71c1c}.info{background:#eceff1;color:#37474f}
.fail{color:#c62828;font-weight:bold}.body{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.picture{flex:0 0 auto}.explain{flex:1 1 38em;min-width:30em}
.explain pre{font:12px/1.35 ui-monospace,monospace;white-space:pre-wrap;background:#fafafa;padding:8px;margin:0}
.legend span{display:inline-block;margin-right:10px;font-size:12px}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
svg text{font:11px system-ui,sans-serif;fill:#333}.sr{fill:#9e9e9e}.free{fill:#f1f8e9;stroke:#8bc34a}.other{fill:#ffcc80}
.frame{fill:none;stroke:#555}.group{fill:none;stroke:#1565c0;stroke-width:2}
"""

SCRIPT = """
function setAll(open){document.querySelectorAll('details.step').forEach(function(d){d.open=open;});}
"""


def pod_colour(index: int) -> str:
    """A distinct colour per pod (golden-angle hues)."""
    return f"hsl({(index * 137.5) % 360:.0f},62%,52%)"


def _e(text: object) -> str:
    """HTML-escaped text (attributes too)."""
    return html.escape(str(text), quote=True)


class _Palette:
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


def _segments(node_id: str, resource: str, node: dict, entries: Optional[dict],
              names: dict[str, str]) -> list[tuple[str, int, str]]:
    """(pod uid, bytes, title) of each container's memory on this node and resource."""
    table = node["memoryMap"][resource]
    reserved = table.get("reserved", 0)
    nid = int(node_id)
    exact: list[tuple[str, int, str]] = []
    shared: list[tuple[str, int, str]] = []
    for uid, containers in (entries or {}).items():
        for cname, blocks in (containers or {}).items():
            for block in blocks or []:
                if block.get("type") != resource or nid not in (block.get("numaAffinity") or []):
                    continue
                who = f"{names.get(uid, uid)}/{cname}"
                if len(block["numaAffinity"]) == 1:
                    exact.append((uid, block["size"], f"{who} {fmt_bytes(block['size'])}"))
                else:
                    shared.append((uid, block["size"], f"{who} {fmt_bytes(block['size'])} on "
                                                       f"{fmt_nodes(block['numaAffinity'])}"))
    out = [(uid, size, title) for uid, size, title in exact if size > 0]
    left = reserved - sum(size for _, size, _ in out)
    total_shared = sum(size for _, size, _ in shared)
    if len(shared) == 1 and left > 0:
        uid, _, title = shared[0]
        out.append((uid, left, f"{title}; {fmt_bytes(left)} of it here"))
        left = 0
    elif shared and total_shared > 0 and left > 0:
        parts = [left * size // total_shared for _, size, _ in shared]
        for (uid, _, title), part in zip(shared, parts):
            out.append((uid, part, f"{title}; about {approx_bytes(part)} here (split not recorded)"))
        left -= sum(parts)
    if left > 0:
        out.append(("", left, f"{fmt_bytes(left)} reserved by containers not in the assignments"))
    return out


def picture_svg(machine_state: Optional[dict], entries: Optional[dict], names: dict[str, str],
                palette: _Palette) -> tuple[str, list[str]]:
    """The step's SVG and the pod UIDs it shows (for the legend)."""
    if not machine_state:
        return '<p class="info">no machine state (the node is not running, or policy None keeps none)</p>', []
    node_ids = sorted(machine_state, key=int)
    resources: list[str] = []
    for nid in node_ids:
        for resource in (machine_state[nid].get("memoryMap") or {}):
            if resource not in resources:
                resources.append(resource)
    resources.sort(key=lambda name: (name != "memory", name))  # memory first, then hugepages by name
    width = LEFT + len(node_ids) * (BAR_WIDTH + BAR_GAP) + 10
    height = TOP + len(resources) * (BAR_HEIGHT + ROW_GAP)
    x_of = {nid: LEFT + i * (BAR_WIDTH + BAR_GAP) for i, nid in enumerate(node_ids)}
    shown: list[str] = []
    bars: dict[str, list[str]] = {nid: [] for nid in node_ids}
    labels: list[str] = []
    for row, resource in enumerate(resources):
        top = TOP + row * (BAR_HEIGHT + ROW_GAP)
        scale_total = max((machine_state[n]["memoryMap"].get(resource) or {}).get("total", 0) for n in node_ids) or 1
        for nid in node_ids:
            table = (machine_state[nid].get("memoryMap") or {}).get(resource)
            if table is None:
                continue
            x = x_of[nid]
            y = top + BAR_HEIGHT
            parts = [f'<g class="bar" data-resource="{_e(resource)}" data-total="{table["total"]}" '
                     f'data-system-reserved="{table["systemReserved"]}" data-allocatable="{table["allocatable"]}" '
                     f'data-reserved="{table["reserved"]}" data-free="{table["free"]}">']

            def rect(size: int, cls: str, title: str) -> None:
                """Stack one segment of `size` bytes on the bar, bottom-up."""
                nonlocal y
                if size <= 0:
                    return
                h = BAR_HEIGHT * size / scale_total
                y -= h
                parts.append(f'<rect x="{x}" y="{y:.0f}" width="{BAR_WIDTH}" height="{max(h, 1):.0f}" class="{cls}">'
                             f"<title>{_e(title)}</title></rect>")

            rect(table["systemReserved"], "sr", f"system reserved {fmt_bytes(table['systemReserved'])}")
            for uid, size, title in _segments(nid, resource, machine_state[nid], entries, names):
                if uid and uid not in shown:
                    shown.append(uid)
                rect(size, f"pod c{palette.number(uid)}" if uid else "other", title)
            rect(table["free"], "free", f"free {fmt_bytes(table['free'])} of {fmt_bytes(table['allocatable'])}")
            parts.append(f'<text x="{x + BAR_WIDTH // 2}" y="{top + BAR_HEIGHT + 13}" text-anchor="middle">{_e(nid)}</text>')
            parts.append("</g>")
            bars[nid].append("".join(parts))
        labels.append(f'<text x="4" y="{top + BAR_HEIGHT / 2:.0f}">{_e(resource)}</text>')
    groups = []
    seen: set[tuple] = set()
    for nid in node_ids:
        cells = tuple(machine_state[nid].get("cells") or [])
        if len(cells) > 1 and cells not in seen and all(str(c) in x_of for c in cells):
            seen.add(cells)
            xs = [x_of[str(c)] for c in cells]
            for row in range(len(resources)):
                yb = TOP + row * (BAR_HEIGHT + ROW_GAP) + BAR_HEIGHT + 20
                groups.append(f'<path class="group" d="M{min(xs)} {yb - 4}V{yb}H{max(xs) + BAR_WIDTH}V{yb - 4}">'
                              f"<title>NUMA group {fmt_nodes(cells)}</title></path>"
                              f'<text x="{min(xs)}" y="{yb + 13}">group {fmt_nodes(cells)}</text>')
    body = "".join(f'<g class="numa-node" data-node="{_e(nid)}">{"".join(bars[nid])}</g>' for nid in node_ids)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img">{"".join(labels)}{body}{"".join(groups)}</svg>')
    return svg, shown


def _legend(shown: Iterable[str], names: dict[str, str], palette: _Palette) -> str:
    """The colour key: system reserved, free, and each pod shown."""
    items = ['<span><i class="sr" style="background:#9e9e9e"></i>system reserved</span>',
             '<span><i style="background:#f1f8e9;border:1px solid #8bc34a"></i>free</span>']
    items += [f'<span><i style="background:{palette.colour(uid)}"></i>{_e(names.get(uid, uid))}</span>' for uid in shown]
    return '<div class="legend">' + "".join(items) + "</div>"


def _badge(step: StepView) -> str:
    """The step's verdict beside its title: admitted, kubelet's reason, error, or the operation."""
    e = step.explanation
    if e is not None and e.decision is not None:
        d = e.decision
        return '<span class="badge ok">admitted</span>' if d.admitted else f'<span class="badge no">{_e(d.reason)}</span>'
    if step.error:
        return f'<span class="badge no">error</span>'
    return f'<span class="badge info">{_e(step.op)}</span>'


def step_html(step: StepView, palette: _Palette, open_: bool = False) -> str:
    """One collapsible step: picture and legend beside the decision and explanation."""
    svg, shown = picture_svg(step.machine_state, step.entries, step.pod_names, palette)
    failed = step.status == "failed"
    lines: list[str] = []
    for f in step.failures:
        lines.append(f'<p class="fail">expected {_e(f["path"])} = {_e(f["expected"])!s}, got {_e(f["actual"])}</p>')
    if step.error and not (step.explanation and step.explanation.error):
        lines.append(f"<p>error: {_e(step.error)}</p>")
    if step.explanation is not None:
        text = "\n".join(explanation_lines(step.explanation))
        lines.append(f"<pre>{_e(text)}</pre>")
    elif not lines:
        lines.append(f"<p>{_e(step.op)}: the node after the step</p>")
    classes = "step failed" if failed else "step"
    mark = ' <span class="fail">expectation failed</span>' if failed else ""
    return (f'<details class="{classes}" data-step="{step.index}"{" open" if open_ or failed else ""}>'
            f"<summary>step {step.index}: {_e(step.title)}{_badge(step)}{mark}</summary>"
            f'<div class="body"><div class="picture">{svg}{_legend(shown, step.pod_names, palette)}</div>'
            f'<div class="explain">{"".join(lines)}</div></div></details>')


def _page(title: str, sections: list[str], palette: _Palette) -> str:
    """The whole document around the sections (CSS, pod colours, expand/collapse buttons)."""
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{CSS}{palette.css()}</style><script>{SCRIPT}</script></head><body>"
            f"<h1>{_e(title)}</h1><p><button onclick=\"setAll(true)\">expand all</button> "
            f"<button onclick=\"setAll(false)\">collapse all</button></p>"
            + "".join(sections) + "</body></html>\n")


def render_report(views: list[ScenarioView], title: str = "memorymanager report", open_steps: int = 3) -> str:
    """The whole page for scenarios: one section per scenario, one collapsible step each
    (the first `open_steps` of a scenario and every failed step open)."""
    palette = _Palette()
    sections = []
    for view in views:
        head = f'<section class="scenario"><h2>{_e(view.name or view.file)}</h2><p class="desc">{_e(view.file)}'
        if view.description:
            head += f" - {_e(view.description)}"
        head += "</p>"
        if view.error:
            head += f'<p class="fail">{_e(view.error)}</p>'
        steps = "".join(step_html(step, palette, i < open_steps) for i, step in enumerate(view.steps))
        sections.append(head + steps + "</section>")
    return _page(title, sections, palette)


def render_explanation_page(explanation: Explanation, title: str, machine_state: Optional[dict] = None,
                            entries: Optional[dict] = None, names: Optional[dict[str, str]] = None) -> str:
    """A page for one explanation (live-node mode): the node as it is, with the explanation beside it."""
    step = StepView(0, explanation.op, title, "passed", [], explanation, machine_state, entries, names or {})
    palette = _Palette()
    return _page(title, [step_html(step, palette, True)], palette)


def render_start_page(diagnosis: StartDiagnosis, title: str) -> str:
    """`explain --start --format html`: kubelet's verdict first, then the picture of what this machine and
    configuration give (the checkpoint's assignments placed on it) beside the whole account."""
    palette = _Palette()
    names = {uid: uid for uid in (diagnosis.entries or {})}
    svg, shown = picture_svg(diagnosis.machine_state, diagnosis.entries, names, palette)
    verdict = ('<p class="reason ok">kubelet starts</p>' if diagnosis.starts
               else f'<p class="reason no">kubelet does not start: {_e(diagnosis.error)}</p>')
    body = (f'<section class="start">{verdict}<div class="body"><div class="picture">{svg}'
            f'{_legend(shown, names, palette)}{_derivation_html(diagnosis.allocatable)}</div>'
            f'<div class="explain"><pre>{_e(start_text(diagnosis))}</pre></div></div></section>')
    return _page(title, [body], palette)


def _derivation_html(rows: list) -> str:
    """How each node's allocatable comes about, one line per node, under the picture."""
    if not rows:
        return ""
    return (f'<div class="derivation"><div>{_e(DERIVATION_HEAD)}</div>'
            + "".join(f"<div>{_e(line)}</div>" for line in derivation_lines(rows)) + "</div>")


def write_report(paths: list[str], output: str, merge_fn=None) -> None:
    """`memorymanager run --html REPORT`: walk the scenarios again with explanations, write the page."""
    from memorymanager.explain.walk import walk_paths

    from kubeinputs.errors import InputError

    page = render_report(walk_paths(list(paths), merge_fn), title="memorymanager run " + " ".join(paths))
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(page)
    except OSError as exc:
        raise InputError(output, f"cannot write the HTML report: {exc.strerror}") from None
