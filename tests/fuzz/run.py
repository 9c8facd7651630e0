"""Run every reader's fuzz property over N generated inputs and count the outcome classes."""
from __future__ import annotations

import collections
import time
from typing import Optional

from hypothesis import HealthCheck, given, settings

from kubeinputs import limits
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
        limits.reset()
        outcome, detail = classify(lambda: reader(value), must_refuse=must_refuse)
        counts[outcome] += 1
        if outcome in FAILURES and len(failures) < 20:
            failures.append((outcome, detail, repr(value)[:300]))

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


def main(examples: int, only: Optional[list[str]] = None, seed: Optional[int] = None) -> int:
    results, seconds, bad = {}, {}, 0
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
