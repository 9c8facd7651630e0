"""Reports of a run: the human one (one line per scenario, details for failures) and `--json`."""
from __future__ import annotations

import json
from typing import Any, TextIO

from memorymanager.runner.expect import MISSING
from memorymanager.runner.results import FAILED, INVALID, SKIPPED, RunReport, ScenarioResult

LABELS = {"passed": "ok     ", FAILED: "FAIL   ", INVALID: "INVALID", SKIPPED: "skipped"}


def render_value(value: Any) -> str:
    """A value as compact JSON (an absent value as `(absent)`)."""
    if value is MISSING:
        return "(absent)"
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def scenario_lines(result: ScenarioResult) -> list[str]:
    """The human report of one scenario."""
    status = result.status
    if status == INVALID:
        return [f"{LABELS[INVALID]} {result.error}"]
    title = f"{LABELS[status]} {result.file}" + (f"  ({result.name})" if result.name else "")
    lines = [title]
    skipped = next((s for s in result.steps if s.skipped is not None), None)
    if skipped is not None:
        lines.append(f"    {result.file}: steps[{skipped.index}] ({skipped.op}): skipped: {skipped.skipped}")
    for step in result.steps:
        for failure in step.failures:
            lines.append(f"    {result.file}: steps[{step.index}] ({step.op}): {failure.path}")
            lines.append(f"        expected: {render_value(failure.expected)}")
            lines.append(f"        actual:   {render_value(failure.actual)}")
    return lines


def summary_line(report: RunReport) -> str:
    """`N passed, M failed, K invalid`."""
    line = f"{report.count('passed')} passed, {report.count(FAILED)} failed, {report.count(INVALID)} invalid"
    return line + (f", {report.count(SKIPPED)} skipped" if report.count(SKIPPED) else "")


def write_human(report: RunReport, out: TextIO) -> None:
    """Every scenario's lines, then the summary line."""
    for result in report.scenarios:
        for line in scenario_lines(result):
            print(line, file=out)
    print(summary_line(report), file=out)


def write_json(report: RunReport, out: TextIO) -> None:
    """The `--json` document (one JSON object, newline-terminated)."""
    json.dump(report.to_dict(), out, indent=2, ensure_ascii=False)
    out.write("\n")
