"""`memorymanager fleet`: kubelet's exact admission replayed over a fleet of nodes.

    memorymanager fleet FLEET.yaml [--engine local|dask] [--scheduler ADDRESS [--scheduler-timeout S]] [--workers N]
                        [--threads] [--out DIR] [--progress | --no-progress] [--json] [--limit NAME=N]

Prints the summary table (or summary.json with --json) and, with --out, writes summary.json
and report.html there. See docs/fleet.md.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register `fleet`."""
    fleet = commands.add_parser("fleet", help="replay a pod trace on a fleet of simulated nodes (what-if)")
    fleet.add_argument("fleet", metavar="FLEET.yaml", help="the fleet file (node groups, trace, placement, sweep)")
    fleet.add_argument("--engine", choices=("local", "dask"), default="local",
                       help="local processes (default) or dask.distributed")
    fleet.add_argument("--scheduler", metavar="ADDRESS", help="with --engine dask: an existing scheduler "
                       "(default: a LocalCluster)")
    fleet.add_argument("--scheduler-timeout", type=float, default=None, metavar="SECONDS",
                       help="with --scheduler: seconds to reach it and see a worker there (default 10)")
    fleet.add_argument("--workers", type=int, default=1, metavar="N",
                       help="worker processes (local) or LocalCluster workers (dask); default 1")
    fleet.add_argument("--threads", action="store_true",
                       help="with --engine dask and no --scheduler: LocalCluster workers are threads, not processes")
    fleet.add_argument("--out", metavar="DIR", help="write summary.json and report.html into DIR")
    fleet.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    progress = fleet.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="show a progress bar on stderr (default: when stderr is a terminal)")
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    from memorymanager.cli.common import add_limit_flag

    add_limit_flag(fleet)
    fleet.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Load, simulate, report."""
    from memorymanager.cli.common import UsageError, limits_of
    from memorymanager.fleet.engines import SCHEDULER_TIMEOUT, EngineError, execute
    from memorymanager.fleet.report import ProgressBar, print_table, write_outputs
    from memorymanager.fleet.spec import load_fleet
    from memorymanager.fleet.summary import build_summary, dumps
    from memorymanager.fleet.trace import is_bound, load_trace

    if args.scheduler and args.engine != "dask":
        raise UsageError("--scheduler only makes sense with --engine dask")
    if args.threads and (args.engine != "dask" or args.scheduler):
        raise UsageError("--threads only makes sense with --engine dask and a LocalCluster")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.scheduler_timeout is not None and not args.scheduler:
        raise UsageError("--scheduler-timeout only makes sense with --scheduler")
    timeout = SCHEDULER_TIMEOUT if args.scheduler_timeout is None else args.scheduler_timeout
    if not 0 < timeout <= 3600:
        raise UsageError("--scheduler-timeout must be more than 0 and at most 3600 seconds")
    spec = load_fleet(args.fleet, limits_of(args))
    enabled = sys.stderr.isatty() if args.progress is None else args.progress
    reading = ProgressBar(os.path.getsize(spec.trace), enabled, unit="bytes")
    try:
        events = load_trace(spec.trace, spec.templates, spec.node_names(), reading, spec.limits)
    finally:
        reading.close()
    bar = ProgressBar(len(events) * len(spec.variants), enabled)
    try:
        results = execute(spec, events, engine=args.engine, workers=args.workers, scheduler=args.scheduler,
                          processes=not args.threads, progress=bar, timeout=timeout)
    except EngineError as exc:
        raise UsageError(str(exc)) from None
    finally:
        bar.close()
    summary = build_summary(spec, results, events=len(events), bound=is_bound(events))
    text = dumps(summary)
    if args.json:
        out.write(text)
    else:
        print_table(summary, out)
    if args.out:
        for path in write_outputs(summary, args.out, text):
            if not args.json:
                print(f"wrote {path}", file=out)
    return 0
