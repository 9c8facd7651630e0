"""`python -m tests.load --seconds 60 [--clients 8] [--costly] [--processes]`: the long load run
(docs/limits.md). `--costly`: client 0 sends the costly requests of issue 27 in a loop; `--processes`:
each client in a process of its own. Prints the counts, the latency percentiles per kind of call
(milliseconds) and whether the node's state equals what the clients were told."""
import argparse
import sys
import tempfile

from tests.load.load import run_load

parser = argparse.ArgumentParser(prog="python -m tests.load", description=__doc__)
parser.add_argument("--seconds", type=float, default=60)
parser.add_argument("--clients", type=int, default=8)
parser.add_argument("--costly", action="store_true", help="client 0 sends costly requests in a loop")
parser.add_argument("--processes", action="store_true", help="each client in its own process")
args = parser.parse_args()
with tempfile.TemporaryDirectory() as tmp:
    tally, summary = run_load(tmp, args.seconds, args.clients, costly=args.costly, processes=args.processes)
print(f"{summary['requests']:,} requests in {summary['seconds']:.1f} s by {args.clients} clients, "
      f"{summary['errors']} errors; {dict(tally.counts)}")
for error in tally.errors:
    print("  ", error)
print("| call | n | p50 ms | p90 ms | p99 ms | max ms |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for kind, p in summary["latency"].items():
    print(f"| {kind} | {p['n']:,} | {p['p50']:.1f} | {p['p90']:.1f} | {p['p99']:.1f} | {p['max']:.1f} |")
same = (summary["stored_pods"] == summary["live"] == summary["listed"] == summary["pods"] == summary["served"]
        and summary["podresources_equals_checkpoint"])
print(f"state after the run: {len(summary['stored_pods'])} pods stored, {len(summary['live'])} acknowledged live, "
      f"PodResources, pod list and checkpoint {'equal' if same else 'DIFFERENT'}; SIGTERM stopped serve in "
      f"{summary['stop_seconds']:.2f} s")
sys.exit(0 if same and not summary["errors"] else 1)
