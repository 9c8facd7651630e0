"""`python -m tests.load --seconds 60 [--clients 8]`: the long load run (docs/limits.md)."""
import argparse
import sys
import tempfile

from tests.load.load import run_load

parser = argparse.ArgumentParser(prog="python -m tests.load", description=__doc__)
parser.add_argument("--seconds", type=float, default=60)
parser.add_argument("--clients", type=int, default=8)
args = parser.parse_args()
with tempfile.TemporaryDirectory() as tmp:
    tally, summary = run_load(tmp, args.seconds, args.clients)
print(f"{summary['requests']:,} requests in {summary['seconds']:.1f} s by {args.clients} clients, "
      f"{summary['errors']} errors; {dict(tally.counts)}")
for error in tally.errors:
    print("  ", error)
same = summary["stored_pods"] == summary["live"]
print(f"state after the run: {len(summary['stored_pods'])} pods stored, {len(summary['live'])} acknowledged live: "
      f"{'equal' if same else 'DIFFERENT'}")
sys.exit(0 if same and not summary["errors"] else 1)
