"""Timing helpers shared by the benchmarks: medians of repeated runs, and result rows."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable


@dataclass
class Row:
    """One line of the results table."""

    bench: str
    case: str
    variant: str
    value: float
    unit: str
    note: str = ""


def median_seconds(fn: Callable[[], object], repeats: int, inner: int = 1) -> float:
    """Median over `repeats` runs of the time of `inner` calls of fn, per call, in seconds."""
    samples = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)
