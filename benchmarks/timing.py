"""Timing helpers shared by the benchmarks: medians of repeated runs, and result rows."""
from __future__ import annotations

import platform
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Callable

import psutil


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


def machine_line() -> str:
    """The machine and Python the figures were taken on."""
    cpu = platform.processor() or platform.machine()
    memory = psutil.virtual_memory().total / (1 << 30)
    return (f"{platform.python_implementation()} {platform.python_version()} on {platform.system()} {cpu}, "
            f"{psutil.cpu_count()} cores, {memory:.0f} GiB")


def print_table(rows: list[Row], out=sys.stdout) -> None:
    """A Markdown table: benchmark, case, variant, median, note."""
    print("| bench | case | variant | median | note |", file=out)
    print("| --- | --- | --- | ---: | --- |", file=out)
    for r in rows:
        value = f"{r.value:,.0f} {r.unit}" if r.unit == "ops/s" else f"{r.value:.3f} {r.unit}"
        print(f"| {r.bench} | {r.case} | {r.variant} | {value} | {r.note} |", file=out)


def size_text(n: int, digits: int = 1) -> str:
    """A peak of allocated bytes for the table: MB with `digits` decimals from 1 MiB, else whole KB."""
    return f"{n / (1 << 20):.{digits}f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB"
