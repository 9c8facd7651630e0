"""Run every reader's fuzz property over N generated inputs and count the outcome classes."""
from __future__ import annotations

import collections
import time
from typing import Callable, Optional

from hypothesis import HealthCheck, given, settings

from kubeinputs.errors import brief
from tests.fuzz.harness import FAILURES, OUTCOMES, classify
from tests.fuzz.readers import readers


def fuzz_reader(name: str, examples: int, *, seed: Optional[int] = None) -> tuple[collections.Counter, list]:
    """(outcome counts, the first failures as (outcome, detail, input)) over `examples` inputs."""
    reader, strategy = readers()[name]
    counts: collections.Counter = collections.Counter()
    failures: list = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one(case) -> None:
        value, must_refuse = case
        outcome, detail = classify(lambda: reader(value), must_refuse=must_refuse)
        counts[outcome] += 1
        if outcome in FAILURES and len(failures) < 20:
            failures.append((outcome, detail, brief(value)[:300]))  # brief: an integer of any length

    if seed is not None:
        from hypothesis import seed as hseed

        one = hseed(seed)(one)
    one()
    return counts, failures


def table(results: dict[str, collections.Counter], seconds: dict[str, float]) -> list[str]:
    """A Markdown table: reader, inputs, one column per outcome, seconds."""
    lines = ["| reader | inputs | " + " | ".join(OUTCOMES) + " | seconds |",
             "| --- | ---: | " + " | ".join("---:" for _ in OUTCOMES) + " | ---: |"]
    for name, counts in results.items():
        lines.append(f"| {name} | {sum(counts.values()):,} | " + " | ".join(f"{counts[o]:,}" for o in OUTCOMES)
                     + f" | {seconds[name]:.0f} |")
    return lines


def large_cases() -> list[tuple[str, int, Callable[[str], tuple[int, str]]]]:
    """The generated members of the corpus too slow for every test run: (name, budget in seconds,
    a function of a scratch folder giving (exit code, output)). Each must end within its budget
    (docs/limits.md) with exit 0."""
    from tests.fuzz.corpus import claim_records, run_cli, unbound_trace

    def explain_50000(folder: str) -> tuple[int, str]:
        from pathlib import Path

        from tests.explain.helpers import node_root_with_entries
        from tests.fuzz.corpus import POD_4GI

        root = node_root_with_entries(Path(folder) / "node", 50_000)
        return run_cli(["explain", "--node", str(root), POD_4GI, "--format", "json"])

    def claims_2000(folder: str) -> tuple[int, str]:
        from tests.fuzz.surfaces import _policy

        policy = _policy(claim_records(folder, 2000))
        return 0, f"{len(policy.backend.claim_records())} claims"

    def trace_200000(folder: str) -> tuple[int, str]:
        return run_cli(["fleet", unbound_trace(folder, 200_000, nodes=100), "--no-progress", "--json"])

    return [("explain --node, 50,000-entry checkpoint", 10, explain_50000),
            ("resmgr start, 2,000 claims the checkpoint lost", 30, claims_2000),
            ("fleet, 200,000 unbound adds on 100 nodes, numa-aware", 600, trace_200000)]


def replay_corpus(large: bool = True) -> int:
    """fixtures/bad/cases.yaml (each with its exit code and text, within 20 s), then the large
    generated cases; prints one line each and returns the number of failures."""
    import os
    import shutil
    import tempfile

    from tests.fuzz.corpus import BAD, argv_of, load_cases, run_cli
    from tests.fuzz.harness import Hang, budget

    bad = 0
    cases = load_cases()
    for case in cases:
        start = time.monotonic()
        try:
            with budget(20):
                code, output = run_cli(argv_of(case, os.path.join(BAD, case["path"])))
            ok = code == case["exit"] and case["text"] in output and "Traceback" not in output
        except Hang:
            ok, code = False, "hang"
        bad += not ok
        if not ok:
            print(f"corpus {case['path']}: FAILED (exit {code})")
    print(f"corpus: {len(cases) - bad} of {len(cases)} stored cases as recorded", flush=True)
    for name, seconds, run in (large_cases() if large else []):
        folder = tempfile.mkdtemp(prefix="fuzz-large-")
        start = time.monotonic()
        try:
            with budget(seconds * 3):
                code, output = run(folder)
            took = time.monotonic() - start
            ok = code == 0 and "Traceback" not in output
            print(f"large: {name}: exit {code} in {took:.1f} s (budget {seconds} s)"
                  + ("" if ok and took <= seconds else "  FAILED"), flush=True)
            bad += not (ok and took <= seconds)
        except Hang:
            print(f"large: {name}: past {seconds * 3} s  FAILED", flush=True)
            bad += 1
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return bad


def main(examples: int, only: Optional[list[str]] = None, seed: Optional[int] = None, corpus: bool = True,
         large: bool = True) -> int:
    results, seconds, bad = {}, {}, 0
    if corpus:
        bad += replay_corpus(large)
    for name in readers():
        if only and name not in only:
            continue
        start = time.monotonic()
        counts, failures = fuzz_reader(name, examples, seed=seed)
        seconds[name] = time.monotonic() - start
        results[name] = counts
        for outcome, detail, value in failures:
            bad += 1
            print(f"{name}: {outcome}: {detail}\n    input: {value}")
        print(f"{name}: {dict(counts)} in {seconds[name]:.1f} s", flush=True)
    print()
    print("\n".join(table(results, seconds)))
    return 1 if bad else 0
