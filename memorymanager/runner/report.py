"""Reports of a run: the human one (one line per scenario, details for failures) and `--json`.

With `verbose` (`run -v`) the human report also tells, under each scenario's line, what
every step did: the admission decision (admitted, or refused with kubelet's reason and
message), and for each container of an admitted pod its NUMA nodes and the memory pinned
there per resource, as Kubernetes quantities (`1Gi`, `64Mi`), its exclusive CPUs and its
devices; an init container's memory, taken at admission and released when the next container
is created, is told as such. Warnings of a start (a device checkpoint entry kubelet restores
although the node lacks its device) follow the step that started the node.
"""
from __future__ import annotations

import json
from itertools import islice
from typing import Any, Optional, TextIO

from kubeinputs.pod import pod_label
from kubeinputs.quantity import size_text
from memorymanager.runner.expect import MISSING
from memorymanager.runner.results import FAILED, INVALID, SKIPPED, InitMemory, RunReport, ScenarioResult, StepResult
from memorymanager.runner.scenario import Scenario, Step

LABELS = {"passed": "ok     ", FAILED: "FAIL   ", INVALID: "INVALID", SKIPPED: "skipped"}


def render_value(value: Any) -> str:
    """A value as compact JSON (an absent value as `(absent)`)."""
    if value is MISSING:
        return "(absent)"
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def _step_title(step: StepResult, spec: Optional[Step]) -> str:
    """`steps[1] admit web`: the step's index, operation and the pod it is about."""
    title = f"steps[{step.index}] {step.op}"
    if spec is not None and spec.pod is not None:
        title += f" {pod_label(spec.pod)}"
    elif spec is not None and spec.pod_ref is not None:
        ref = spec.pod_ref if spec.namespace is None else f"{spec.namespace}/{spec.pod_ref}"
        title += f" {ref}" + (f" container {spec.container}" if spec.container else "")
    return title


def _decision(step: StepResult) -> str:
    """What the step did: an error, the admission decision, or the operation done."""
    actual = step.actual
    if actual.get("error") is not None:
        return f"error: {actual['error']}"
    if step.op == "admit":
        reason, message = actual.get("reason") or "", actual.get("message") or ""
        if actual.get("admitted"):
            return "admitted" + (f" ({reason})" if reason else "")
        return "refused: " + (reason or "no reason") + (f": {message}" if message else "")
    return {"start": "started", "restart": "restarted", "remove": "removed", "hints": "hints computed",
            "check": "checked"}.get(step.op, "done")


def _cpu_device_text(step: StepResult, name: str) -> str:
    """`; cpus 2-3,10-11; nvidia.com/gpu g0, g1`: a container's exclusive CPUs and devices, when it has any."""
    text = ""
    cpus = (step.actual.get("cpus") or {}).get(name)
    if cpus:
        text += f"; cpus {cpus}"
    for resource, ids in ((step.actual.get("devices") or {}).get(name) or {}).items():
        text += f"; {resource} {', '.join(ids)}"
    return text


def _container_lines(step: StepResult) -> list[str]:
    """`app: NUMA nodes [0, 1]; memory 6Gi, hugepages-2Mi 64Mi` for each container of an admitted pod, with
    its exclusive CPUs and devices when it has any (`; cpus 2-3,10-11; nvidia.com/gpu g0`)."""
    actual = step.actual
    if step.op != "admit" or not actual.get("admitted") or actual.get("error") is not None:
        return []
    memory = actual.get("memory") or {}
    numa_nodes = actual.get("numaNodes") or {}
    lines = []
    for name in list(memory) + [n for n in numa_nodes if n not in memory]:
        per_resource: dict[str, int] = {}
        for block in memory.get(name) or []:
            per_resource[block["type"]] = per_resource.get(block["type"], 0) + block["size"]
        nodes = numa_nodes.get(name)
        init = step.init_memory.get(name)
        if init is not None and nodes is None:
            lines.append(_init_line(name, init) + _cpu_device_text(step, name))
            continue
        where = "no NUMA nodes" if nodes is None else "NUMA nodes [" + ", ".join(map(str, nodes)) + "]"
        pinned = ", ".join(f"{res} {size_text(size)}" for res, size in per_resource.items()) or "no memory pinned"
        lines.append(f"{name}: {where}; {pinned}{_cpu_device_text(step, name)}")
    return lines


def _init_line(name: str, init: InitMemory) -> str:
    """`init: took memory 2Gi on NUMA nodes [0] at admission; released when app was created (app re-uses ...)`."""
    taken = ", ".join(f"{res} {size_text(size)}" for res, size in init.taken.items())
    line = (f"{name}: took {taken} on NUMA nodes [{', '.join(map(str, init.numa_nodes))}] at admission; "
            f"released when {init.released_by} was created")
    if init.reused:
        line += " (later containers re-use " + ", ".join(f"{res} {size_text(size)}" for res, size in init.reused.items()) + " of it)"
    return line


def step_lines(step: StepResult, spec: Optional[Step] = None) -> list[str]:
    """The verbose account of one step: its decision, then one line per container."""
    lines = [f"{_step_title(step, spec)}: {_decision(step)}"]
    lines.extend("    " + line for line in _container_lines(step))
    return lines


def scenario_lines(result: ScenarioResult, scenario: Optional[Scenario] = None, verbose: bool = False) -> list[str]:
    """The human report of one scenario (with `verbose`, every step's account under its line)."""
    status = result.status
    if status == INVALID:
        return [f"{LABELS[INVALID]} {result.error}"]
    title = f"{LABELS[status]} {result.file}" + (f"  ({result.name})" if result.name else "")
    lines = [title]
    specs = scenario.steps if scenario is not None else []
    skipped = next((s for s in result.steps if s.skipped is not None), None)
    if skipped is not None:
        lines.append(f"    {result.file}: steps[{skipped.index}] ({skipped.op}): skipped: {skipped.skipped}")
    for step in result.steps:
        if verbose:
            spec = specs[step.index] if step.index < len(specs) else None
            lines.extend("    " + line for line in step_lines(step, spec))
        for failure in step.failures:
            lines.append(f"    {result.file}: steps[{step.index}] ({step.op}): {failure.path}")
            lines.append(f"        expected: {render_value(failure.expected)}")
            lines.append(f"        actual:   {render_value(failure.actual)}")
        if verbose or step.failures:
            lines.extend(f"    {note}" for note in step.notes)
    return lines


def summary_line(report: RunReport) -> str:
    """`N passed, M failed, K invalid`."""
    line = f"{report.count('passed')} passed, {report.count(FAILED)} failed, {report.count(INVALID)} invalid"
    return line + (f", {report.count(SKIPPED)} skipped" if report.count(SKIPPED) else "")


def write_human(report: RunReport, out: TextIO, verbose: bool = False) -> None:
    """Every scenario's lines, then the summary line (`verbose` needs the scenarios, see `scenario_lines`)."""
    for result in report.scenarios:
        for line in scenario_lines(result, verbose=verbose):
            print(line, file=out)
    print(summary_line(report), file=out)


def write_json(report: RunReport, out: TextIO) -> None:
    """The `--json` document (one JSON object, newline-terminated): json.dump's text, written in large
    pieces rather than one write per token (a long scenario's document has millions of tokens)."""
    tokens = json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(report.to_dict())
    while True:
        piece = "".join(islice(tokens, 65536))
        if not piece:
            break
        out.write(piece)
    out.write("\n")
