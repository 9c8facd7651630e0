"""B11: nothing quadratic in containers or steps (issue 12). `memorymanager run` on generated scenarios
of 10,000 containers in one pod, 10,000 steps (admit/remove churn) and 1,000 admissions kept, each
timed once as a user runs it (the in-process runner, the checkpoint on disk)."""
from __future__ import annotations

import io
import os
import tempfile
import time

from benchmarks.timing import Row
from tests.fuzz.corpus import admit_steps, churn_steps, pod_with_containers, write_json


def _run(doc) -> float:
    from memorymanager.cli.app import main

    with tempfile.TemporaryDirectory() as folder:
        path = write_json(os.path.join(folder, "scenario.json"), doc)
        out = io.StringIO()
        start = time.perf_counter()
        code = main(["run", path], out, out)
        elapsed = time.perf_counter() - start
    assert code == 0, out.getvalue()[-2000:]
    return elapsed


def run(repeats: int = 1) -> list[Row]:
    """One timing per case (the median of `repeats`)."""
    import statistics

    cases = [
        ("10,000 containers in one pod", lambda: pod_with_containers(10_000), "was 55 s (quadratic)"),
        ("10,000 steps (admit/remove churn)", lambda: churn_steps(10_000), "mostly the 10,000 checkpoint renames"),
        ("1,000 admissions kept", lambda: admit_steps(1_000), "was 12 s; grows with the live pods"),
    ]
    rows = []
    for case, build, note in cases:
        doc = build()
        seconds = statistics.median(_run(doc) for _ in range(max(1, repeats)))
        rows.append(Row("B11", case, "memorymanager run", seconds, "s", note))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
