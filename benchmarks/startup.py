"""B9 and B10: the command as a user runs it, in a fresh process each time.

B9: `memorymanager run` on a scenario injecting 4 x 255 hints (benchmarks/scenarios.py), in
the YAML `--record` writes and in block style, reported as the time over the same command on
a trivial scenario (the extra cost of reading, checking and running the big file), with the
in-process time of `load_scenario` alone beside it.
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


def _timed_runs(commands: dict[str, tuple[list[str], dict[str, str]]], repeats: int) -> dict[str, list[float]]:
    """Wall times of `python -m memorymanager ARGS` in new processes, per command: one untimed run each,
    then `repeats` rounds running every command once (interleaved, so that load from elsewhere on the
    machine falls on all of them alike)."""

    def once(args: list[str], env: dict[str, str]) -> float:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "memorymanager", *args], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode()}")
        return elapsed

    for args, env in commands.values():
        once(args, env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(max(3, repeats)):
        for name, (args, env) in commands.items():
            samples[name].append(once(args, env))
    return samples


def _ms(seconds: float) -> float:
    return seconds * 1e3


def run(repeats: int) -> list[Row]:
    """Rows B9 and B10."""
    with tempfile.TemporaryDirectory(prefix="memorymanager-bench-") as folder:
        paths = scenarios.write(folder)
        cached = _environment(os.path.join(folder, "pycache"))
        samples = _timed_runs({
            "version": (["--version"], cached),
            "trivial": (["run", paths["trivial"]], cached),
            "hints": (["run", paths["hints"]], cached),
            "hints_block": (["run", paths["hints_block"]], cached),
            "cold": (["run", paths["trivial"]], _environment(None)),
        }, repeats)

        from memorymanager.runner.scenario import load_scenario

        load_scenario(paths["hints"])  # imports and first-use set-up outside the timing
        loading = median_seconds(lambda: load_scenario(paths["hints"]), repeats)
        loading_block = median_seconds(lambda: load_scenario(paths["hints_block"]), repeats)
    median = {name: statistics.median(times) for name, times in samples.items()}
    fastest = {name: min(times) for name, times in samples.items()}
    extra = statistics.median(h - t for h, t in zip(samples["hints"], samples["trivial"]))
    extra_block = statistics.median(h - t for h, t in zip(samples["hints_block"], samples["trivial"]))
    return [
        Row("B9", "load scenario with 4x255 hints", "run, over trivial", _ms(extra), "ms",
            note=f"median of paired runs; run {_ms(median['hints']):.0f} ms vs trivial {_ms(median['trivial']):.0f} ms"),
        Row("B9", "load scenario with 4x255 hints", "load_scenario, in process", _ms(loading), "ms"),
        Row("B9", "load scenario with 4x255 hints, block-style YAML", "run, over trivial", _ms(extra_block), "ms",
            note=f"median of paired runs; run {_ms(median['hints_block']):.0f} ms vs trivial {_ms(median['trivial']):.0f} ms"),
        Row("B9", "load scenario with 4x255 hints, block-style YAML", "load_scenario, in process", _ms(loading_block),
            "ms"),
        Row("B10", "command start-up", "--version", _ms(median["version"]), "ms",
            note=f"fastest {_ms(fastest['version']):.0f} ms"),
        Row("B10", "command start-up", "run trivial scenario", _ms(median["trivial"]), "ms",
            note=f"fastest {_ms(fastest['trivial']):.0f} ms"),
        Row("B10", "command start-up", "run trivial scenario, no bytecode", _ms(median["cold"]), "ms",
            note=f"every module compiled at start; fastest {_ms(fastest['cold']):.0f} ms"),
    ]


if __name__ == "__main__":
    from benchmarks.timing import print_table

    print_table(run(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
