"""B9 and B10: the command as a user runs it, in a fresh process each time.

B9: `memorymanager run` on a scenario injecting 4 x 255 hints (benchmarks/scenarios.py),
reported as the time over the same command on a trivial scenario (the extra cost of
reading, checking and running the big file), with the in-process time of
`load_scenario` alone beside it.
B10: command start-up: `memorymanager --version`, and `memorymanager run` on the
trivial scenario (one NUMA node, Static policy, one pod).

Each process gets a private bytecode cache (PYTHONPYCACHEPREFIX in a temporary folder,
warmed by one untimed run), as an installed package has its .pyc files; the
`no bytecode` variant measures a checkout run with PYTHONDONTWRITEBYTECODE, where every
module is compiled at each start.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks import scenarios
from benchmarks.timing import Row, median_seconds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _environment(pycache: str | None) -> dict[str, str]:
    """The child's environment: a private bytecode cache, or none at all."""
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def _command_seconds(args: list[str], env: dict[str, str], repeats: int) -> tuple[float, float]:
    """Median and fastest wall time of `python -m memorymanager ARGS` in a new process (after one untimed run)."""
    command = [sys.executable, "-m", "memorymanager", *args]

    def once() -> float:
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode()}")
        return elapsed

    once()
    samples = [once() for _ in range(max(3, repeats))]
    return statistics.median(samples), min(samples)


def run(repeats: int) -> list[Row]:
    """Rows B9 and B10."""
    with tempfile.TemporaryDirectory(prefix="memorymanager-bench-") as folder:
        paths = scenarios.write(folder)
        cached = _environment(os.path.join(folder, "pycache"))
        version, version_min = _command_seconds(["--version"], cached, repeats)
        trivial, trivial_min = _command_seconds(["run", paths["trivial"]], cached, repeats)
        hints, hints_min = _command_seconds(["run", paths["hints"]], cached, repeats)
        cold, cold_min = _command_seconds(["run", paths["trivial"]], _environment(None), repeats)

        from memorymanager.runner.scenario import load_scenario

        load_scenario(paths["hints"])  # imports and first-use set-up outside the timing
        loading = median_seconds(lambda: load_scenario(paths["hints"]), repeats)
    return [
        Row("B9", "load scenario with 4x255 hints", "run, over trivial", (hints - trivial) * 1e3, "ms",
            note=f"run {hints * 1e3:.0f} ms vs trivial {trivial * 1e3:.0f} ms; fastest {hints_min * 1e3:.0f} "
            f"vs {trivial_min * 1e3:.0f} ms"),
        Row("B9", "load scenario with 4x255 hints", "load_scenario, in process", loading * 1e3, "ms"),
        Row("B10", "command start-up", "--version", version * 1e3, "ms", note=f"fastest {version_min * 1e3:.0f} ms"),
        Row("B10", "command start-up", "run trivial scenario", trivial * 1e3, "ms",
            note=f"fastest {trivial_min * 1e3:.0f} ms"),
        Row("B10", "command start-up", "run trivial scenario, no bytecode", cold * 1e3, "ms",
            note=f"every module compiled at start; fastest {cold_min * 1e3:.0f} ms"),
    ]


if __name__ == "__main__":
    from benchmarks.run import print_table

    print_table(run(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
