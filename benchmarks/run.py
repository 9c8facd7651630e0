"""Run the benchmark suite and print the results table (medians of several runs).

    python -m benchmarks.run            # the whole suite, as in the README
    python -m benchmarks.run --quick    # fewer repeats, no cross-product reference, B7 at 1/10 scale

Not a test: nothing here asserts a time. The README holds the table of a run.
"""
from __future__ import annotations

import argparse
import sys

from benchmarks import (admission, cpu_hints, end_to_end, fleet, hints, large_numa, merge, scale, serve_load, server, startup,
                        whatif, wired)
from benchmarks.timing import Row, machine_line, print_table  # noqa: F401 (re-exported)

TARGETS = {
    "B1": "< 10 ms per 4 x 255 merge",
    "B2": "< 5 ms at 8 NUMA nodes, < 1 s at 16",
    "B3": "< 1 ms median",
    "B4": ">= 10,000 ops/s with the checkpoint off; >= 5,000 with the CPU manager on",
    "B5": "none set (PodResources List with 500 pods, one client)",
    "B6": "none set (control-service Admit round trips, one client)",
    "B7": "figures only: fleet replay events/s, local 1 and 2 workers, dask 2 workers, and peak memory",
    "B8": "< 1 s and < 200 MB per admission at 34 and 64 NUMA nodes (issue 14)",
    "B9": "run on 4 x 255 injected hints within 100 ms of a trivial scenario; < 50 ms with a block-style YAML file",
    "B10": "< 150 ms to start (--version, or one trivial scenario)",
    "B11": "< 5 s each: 10,000 containers in one pod, 10,000 steps (nothing quadratic)",
    "B12": "< 1 ms: hints + one admission with CPU, memory and one device list, 8 NUMA nodes, 256 CPUs",
    "B13": "< 10 ms and < 5 MB peak: CPU manager hints, GB200 shape (64 NUMA nodes, CPUs on 2) and 64 CPU nodes; "
           "one admission with CPU + memory hints on the node",
    "B14": "< 10 ms: one admission with CPU, memory and 8 GPUs on 64 NUMA nodes",
    "B15": "run of 1,000 admissions <= 2 x the same admissions in process + 0.5 s; churn steps cost the same at 10,000",
    "B16": "figures only: explain --what-if's searches and --start's diagnosis",
    "B17": "p99 < 100 ms for List and metrics of 7 clients while one sends costly requests; SIGTERM < 2 s",
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats; skip the slow cross-product reference")
    parser.add_argument("--repeats", type=int, default=15, help="runs per median (default 15)")
    parser.add_argument("--churn", type=int, default=10_000, help="pods in B4 (default 10,000)")
    parser.add_argument("--no-fleet", action="store_true", help="skip B7 (the fleet replay, needs dask for its last row)")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    print(machine_line())
    rows: list[Row] = []
    rows += merge.run(repeats, with_reference=not args.quick)
    rows += hints.run(repeats)
    rows += admission.run_b3(max(repeats, 25))
    rows += admission.run_b4(1000 if args.quick else args.churn)
    rows += wired.run_b4_cpu(1000 if args.quick else args.churn)
    rows += server.run_b5(20 if args.quick else 100)
    rows += server.run_b6(200 if args.quick else 2000)
    rows += large_numa.run_b8(3 if args.quick else 5, with_before=not args.quick)
    if not args.no_fleet:
        rows += fleet.run(quick=args.quick)
    rows += startup.run(5 if args.quick else args.repeats)
    rows += scale.run(1 if args.quick else 3)
    rows += cpu_hints.run(3 if args.quick else args.repeats)
    rows += wired.run(3 if args.quick else args.repeats, with_before=not args.quick)
    rows += whatif.run(3 if args.quick else 5)
    rows += end_to_end.run(1 if args.quick else 3)
    rows += serve_load.run(10 if args.quick else 30, 1 if args.quick else 3)
    print_table(rows)
    print()
    for bench, target in TARGETS.items():
        print(f"target {bench}: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
