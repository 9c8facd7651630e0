"""Self-contained HTML pages of explain (no network, inline CSS and SVG): a scenario step by step
(`run --html`, `explain SCENARIO --format html`), one pod on a live node, and a kubelet start.

Per step, the reason first: kubelet's verdict and the one sentence of why, and (with `--what-if`)
what would make a refused pod fit; then the picture of the node after the step
(`memorymanager.explain.picture`: one bar per NUMA node and resource on one scale, numbers on every
bar, the refused request drawn against the free space it did not fit) with the allocatable
arithmetic of each node under it, beside the explanation text. Steps are `<details>` (collapsible,
closed by default except failed ones) so that a page of 200 steps on 8 nodes stays small and quick
(measured in tests/explain/test_html.py).
"""
from __future__ import annotations

import html
from typing import Optional

from kubeinputs.limits import DEFAULT_LIMITS, Limits
from memorymanager.explain import cpu_picture, picture
from memorymanager.explain.cpu_picture import cpu_device_svg
from memorymanager.explain.model import Explanation, ScenarioView, StepView
from memorymanager.explain.picture import Palette, legend, picture_svg, picture_width
from memorymanager.explain.start_text import start_text
from memorymanager.explain.text import explanation_lines
from memorymanager.explain.units import DERIVATION_HEAD, derivation_lines, fmt_sizes
from memorymanager.explain.whatif_part import refused_target
from memorymanager.explain.whatif_text import what_if_items
from memorymanager.machine_state import allocatable_terms
from memorymanager.node.start_diagnosis import StartDiagnosis

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:17px;margin:18px 0 4px}.desc{color:#555;max-width:80em}
details.step{border:1px solid #ccc;border-radius:6px;margin:6px 0;padding:0 8px}
details.step.failed{border:2px solid #c62828;background:#fff5f5}
summary{cursor:pointer;padding:5px 0}summary .badge{border-radius:4px;padding:1px 6px;margin-left:8px;font-size:12px}
.ok{background:#e8f5e9;color:#1b5e20}.no{background:#ffebee;color:#b71c1c}.info{background:#eceff1;color:#37474f}
.fail{color:#c62828;font-weight:bold}.body{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.reason{margin:4px 0 8px;padding:6px 10px;border-radius:4px;font-weight:600;max-width:90em}
.reason .why{font-weight:normal}.whatif{font-size:13px;margin:0 0 8px;padding:6px 10px;background:#fffde7;
border-left:3px solid #f9a825}.whatif div{text-indent:-1.2em;margin-left:1.2em}.whatif div:first-child{font-weight:600}
.picture{flex:0 0 auto}.explain{flex:1 1 38em;min-width:30em}.derivation{font-size:12px;color:#37474f;margin-top:6px}
.explain pre{font:12px/1.35 ui-monospace,monospace;white-space:pre;overflow-x:auto;background:#fafafa;padding:8px;margin:0}
.legend{max-width:420px}.legend span{display:inline-block;margin-right:10px;font-size:12px}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
""" + picture.CSS

SCRIPT = """
function setAll(open){document.querySelectorAll('details.step').forEach(function(d){d.open=open;});}
"""


def _e(text: object) -> str:
    """HTML-escaped text (attributes too)."""
    return html.escape(str(text), quote=True)


def refused_request(explanation: Optional[Explanation]) -> Optional[dict[str, int]]:
    """What the container (or pod) that was refused asked for, to draw against the free memory; None when
    nothing was refused or it asked no memory."""
    if explanation is None or explanation.decision is None or explanation.decision.admitted:
        return None
    target = refused_target(explanation)
    part = next((h for h in reversed(explanation.hints) if h.target == target and h.requested), None)
    if part is not None:
        return dict(part.requested)
    ask = next((a for a in (explanation.asked.containers if explanation.asked else []) if a.name == target), None)
    return dict(ask.requested) if ask is not None and ask.requested and not ask.note else None


def _reason_html(explanation: Explanation) -> str:
    """kubelet's verdict and why, first."""
    d = explanation.decision
    if d is None:
        return ""
    if d.admitted:
        verdict = f'<p class="reason ok">admitted <span class="why">{_e(d.why)}</span></p>'
    else:
        ask = refused_request(explanation)
        asked = f" (asks {fmt_sizes(ask)})" if ask else ""
        verdict = (f'<p class="reason no">rejected: {_e(d.reason)}{_e(asked)}: <span class="why">{_e(d.why)}</span>'
                   f'<br><span class="why">{_e(d.message)}</span></p>')
    return verdict


def _what_if_html(explanation: Optional[Explanation]) -> str:
    """Part 6, at the head of the explanation column (beside the picture), when it was asked for."""
    if explanation is None or explanation.what_if is None:
        return ""
    rows = "".join(f'<div style="padding-left:{indent * 0.6:.1f}em">{_e(text)}</div>'
                   for indent, text in what_if_items(explanation.what_if))
    return f'<div class="whatif">{rows}</div>'



def _derivation_html(rows: list, width: int) -> str:
    """How each node's allocatable comes about, one line per node, under the picture (as wide as it)."""
    if not rows:
        return ""
    return (f'<div class="derivation" style="max-width:{max(width, 360)}px"><div>{_e(DERIVATION_HEAD)}:</div>'
            + "".join(f"<div>{_e(line)}</div>" for line in derivation_lines(rows)) + "</div>")


def _derivation_of(machine_state: Optional[dict]) -> list:
    """The allocatable arithmetic of a machine state in the checkpoint's shape."""
    rows = []
    for nid, node in sorted((machine_state or {}).items(), key=lambda kv: int(kv[0])):
        tables = {r: (t["total"], t["systemReserved"], t["allocatable"]) for r, t in (node.get("memoryMap") or {}).items()
                  if t is not None}
        rows.extend(allocatable_terms(int(nid), tables))
    return rows


def _badge(step: StepView) -> str:
    """The step's verdict beside its title: admitted, kubelet's reason, error, or the operation."""
    e = step.explanation
    if e is not None and e.decision is not None:
        d = e.decision
        return '<span class="badge ok">admitted</span>' if d.admitted else f'<span class="badge no">{_e(d.reason)}</span>'
    if step.error:
        return f'<span class="badge no">error</span>'
    return f'<span class="badge info">{_e(step.op)}</span>'


def step_html(step: StepView, palette: Palette, open_: bool = False, derivation: bool = True) -> str:
    """One collapsible step: the reason first, then the picture and legend beside the explanation (and under
    the picture each node's allocatable arithmetic, unless `derivation` is off: the previous step showed it)."""
    ask = refused_request(step.explanation)
    svg, shown = picture_svg(step.machine_state, step.entries, step.pod_names, palette, ask)
    failed = step.status == "failed"
    lines: list[str] = []
    for f in step.failures:
        lines.append(f'<p class="fail">expected {_e(f["path"])} = {_e(f["expected"])!s}, got {_e(f["actual"])}</p>')
    if step.error and not (step.explanation and step.explanation.error):
        lines.append(f"<p>error: {_e(step.error)}</p>")
    if step.explanation is not None:
        text = "\n".join(explanation_lines(step.explanation, what_if=False))
        lines.append(f"<pre>{_e(text)}</pre>")
    elif not lines:
        lines.append(f"<p>{_e(step.op)}: the node after the step</p>")
    classes = "step failed" if failed else "step"
    mark = ' <span class="fail">expectation failed</span>' if failed else ""
    return (f'<details class="{classes}" data-step="{step.index}"{" open" if open_ or failed else ""}>'
            f"<summary>step {step.index}: {_e(step.title)}{_badge(step)}{mark}</summary>"
            + (_reason_html(step.explanation) if step.explanation is not None else "")
            + f'<div class="body"><div class="picture">{svg}{legend(shown, step.pod_names, palette, bool(ask))}'
            f'{_derivation_html(_derivation_of(step.machine_state) if derivation else [], picture_width(step.machine_state))}'
            f'{cpu_device_svg(step.explanation, palette)}</div>'
            f'<div class="explain">{_what_if_html(step.explanation)}{"".join(lines)}</div></div></details>')


def _page(title: str, sections: list[str], palette: Palette) -> str:
    """The whole document around the sections (CSS, pod colours, expand/collapse buttons)."""
    extra = cpu_picture.CSS if any('class="cpu-picture"' in section for section in sections) else ""
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{CSS}{extra}{palette.css()}</style><script>{SCRIPT}</script></head><body>"
            f"<h1>{_e(title)}</h1><p><button onclick=\"setAll(true)\">expand all</button> "
            f"<button onclick=\"setAll(false)\">collapse all</button></p>"
            + "".join(sections) + "</body></html>\n")


def render_report(views: list[ScenarioView], title: str = "memorymanager report", open_steps: int = 3) -> str:
    """The whole page for scenarios: one section per scenario, one collapsible step each
    (the first `open_steps` of a scenario and every failed step open)."""
    palette = Palette()
    sections = []
    for view in views:
        head = f'<section class="scenario"><h2>{_e(view.name or view.file)}</h2><p class="desc">{_e(view.file)}'
        if view.description:
            head += f" - {_e(view.description)}"
        head += "</p>"
        if view.error:
            head += f'<p class="fail">{_e(view.error)}</p>'
        shown_rows: list = []
        parts = []
        for i, step in enumerate(view.steps):
            rows = _derivation_of(step.machine_state)
            fresh = rows != shown_rows or i < open_steps  # an open step always shows it; closed ones when it changed
            parts.append(step_html(step, palette, i < open_steps, fresh))
            shown_rows = rows
        steps = "".join(parts)
        sections.append(head + steps + "</section>")
    return _page(title, sections, palette)


def render_explanation_page(explanation: Explanation, title: str, machine_state: Optional[dict] = None,
                            entries: Optional[dict] = None, names: Optional[dict[str, str]] = None) -> str:
    """A page for one explanation (live-node mode): the node as it is, with the explanation beside it."""
    step = StepView(0, explanation.op, title, "passed", [], explanation, machine_state, entries, names or {})
    palette = Palette()
    return _page(title, [step_html(step, palette, True)], palette)


def render_start_page(diagnosis: StartDiagnosis, title: str) -> str:
    """`explain --start --format html`: kubelet's verdict first, then the picture of what this machine and
    configuration give (the checkpoint's assignments placed on it) beside the whole account."""
    palette = Palette()
    names = {uid: uid for uid in (diagnosis.entries or {})}
    svg, shown = picture_svg(diagnosis.machine_state, diagnosis.entries, names, palette)
    verdict = ('<p class="reason ok">kubelet starts</p>' if diagnosis.starts
               else f'<p class="reason no">kubelet does not start: {_e(diagnosis.error)}</p>')
    body = (f'<section class="start">{verdict}<div class="body"><div class="picture">{svg}'
            f'{legend(shown, names, palette)}{_derivation_html(diagnosis.allocatable, picture_width(diagnosis.machine_state))}'
            '</div>'
            f'<div class="explain"><pre>{_e(start_text(diagnosis))}</pre></div></div></section>')
    return _page(title, [body], palette)


def write_report(paths: list[str], output: str, merge_fn=None, limits: Limits = DEFAULT_LIMITS) -> None:
    """`memorymanager run --html REPORT`: walk the scenarios again with explanations, write the page."""
    from memorymanager.explain.walk import walk_paths

    from kubeinputs.errors import InputError

    page = render_report(walk_paths(list(paths), merge_fn, limits), title="memorymanager run " + " ".join(paths))
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(page)
    except OSError as exc:
        raise InputError(output, f"cannot write the HTML report: {exc.strerror}") from None
