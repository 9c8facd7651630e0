"""`--record`: write what each step actually reported into its `expect`.

The rest of the document is kept (name, description, key order). The written keys are
the ones the step already expected plus the operation's main results:

| op | keys added |
| --- | --- |
| start | machineState, defaultCpuSet |
| admit | admitted, reason and message (when rejected), affinity, cpus, memory, devices |
| hints | hints |
| remove | entries, defaultCpuSet |
| restart, check | machineState, entries, defaultCpuSet |

(`cpus` and `defaultCpuSet` only on a node that models the CPU manager, `devices` only on one with
device plugins or a device checkpoint.)

`error` is written when the step failed and removed when it did not (an `error: null`
stays when the step still did not fail). A key the step
could not report (the node was not running) keeps its old value. The output is
`<name>.recorded.yaml` next to the scenario (a recorded copy is recorded onto itself), or the scenario
itself with `--in-place`
(a `.json` scenario stays JSON). YAML comments are lost, except the comment block at the
very top of the file, which is carried over; the description stays a folded block (`>`).
"""
from __future__ import annotations

import json
import os
from typing import Any

from memorymanager.runner.results import ScenarioResult
from memorymanager.runner.scenario import Scenario
from kubeinputs.reader import FoldedText, dump_yaml

KEY_ORDER = (
    "error", "admitted", "reason", "message", "affinity", "hints", "cpus", "memory", "devices", "numaNodes",
    "defaultCpuSet", "machineState", "entries", "podEntries", "allocatable",
)
# cpus, devices and defaultCpuSet are written only where the step reports them: a node that models
# the CPU manager (a static policy or a cpuCheckpoint) or devices (format 1.2)
DEFAULT_KEYS = {
    "start": ("machineState", "defaultCpuSet"),
    "admit": ("admitted", "affinity", "cpus", "memory", "devices"),
    "hints": ("hints",),
    "remove": ("entries", "defaultCpuSet"),
    "restart": ("machineState", "entries", "defaultCpuSet"),
    "check": ("machineState", "entries", "defaultCpuSet"),
}


def recorded_expect(op: str, old: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """The new `expect` of a step: old keys refreshed from `actual`, the op's main keys added."""
    wanted = set(old) | set(DEFAULT_KEYS[op])
    if op == "admit" and actual.get("admitted") is False:
        wanted |= {"reason", "message"}
    wanted.discard("error")
    new: dict[str, Any] = {}
    if actual.get("error") is not None:
        new["error"] = actual["error"]
    elif "error" in old and old["error"] is None:
        new["error"] = None
    for key in list(old) + [k for k in KEY_ORDER if k not in old]:
        if key not in wanted or key in new:
            continue
        if key in actual:
            new[key] = actual[key]
        elif key in old:
            new[key] = old[key]
    return new


def record_document(scenario: Scenario, result: ScenarioResult) -> dict:
    """The scenario document with every step's `expect` replaced by the recorded one (a description
    is written back as the folded block scenarios write it in, `description: >`)."""
    doc = scenario.document
    if isinstance(doc.get("description"), str) and " " in doc["description"].strip():
        doc["description"] = FoldedText(doc["description"])
    for step_doc, step in zip(doc["steps"], result.steps):
        expect = recorded_expect(step.op, dict(step_doc.get("expect") or {}), step.actual)
        if expect:
            step_doc["expect"] = expect
        else:
            step_doc.pop("expect", None)
    return doc


def recorded_path(path: str, in_place: bool) -> str:
    """Where `--record` writes: the file itself, or `<name>.recorded.yaml` beside it (a recorded copy
    is recorded onto itself, never into `<name>.recorded.recorded.yaml`)."""
    if in_place:
        return path
    base, _ = os.path.splitext(path)
    if base.endswith(".recorded"):
        return base + ".yaml"
    return base + ".recorded.yaml"


def leading_comments(path: str) -> str:
    """The comment lines (and blank lines among them) at the top of a YAML file."""
    lines = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("#") or (line.strip() == "" and lines):
                    lines.append(line if line.endswith("\n") else line + "\n")
                else:
                    break
    except OSError:
        return ""
    while lines and not lines[-1].strip():
        lines.pop()
    return "".join(lines)


def write_recorded(scenario: Scenario, result: ScenarioResult, in_place: bool = False) -> str:
    """Write the recorded scenario; returns the path written."""
    doc = record_document(scenario, result)
    target = recorded_path(scenario.path, in_place)
    if in_place and scenario.path.lower().endswith(".json"):
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    else:
        text = leading_comments(scenario.path) + dump_yaml(doc)
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, target)
    return target
