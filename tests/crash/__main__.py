"""`python -m tests.crash --kills N [--target checkpoint|claims|cache] [--writes W]`: the long crash run,
N kill points drawn (seeded) among the write boundaries of the first W writes;
`python -m tests.crash --serve`: the serve host killed at every file call of its script."""
import argparse
import sys

from tests.crash.kill import TARGETS, kill_points, run

parser = argparse.ArgumentParser(prog="python -m tests.crash", description=__doc__)
parser.add_argument("--kills", type=int, default=1000, help="kills per target (default 1,000)")
parser.add_argument("--writes", type=int, default=150, help="kill points lie in the first W writes (default 150)")
parser.add_argument("--target", action="append", choices=sorted(TARGETS))
parser.add_argument("--seed", type=int, default=12)
parser.add_argument("--serve", action="store_true", help="kill the serve host at every file call instead")
args = parser.parse_args()
bad = 0
if args.serve:
    from tests.crash.serve_kills import run as run_serve

    result = run_serve(step=1)
    print(f"serve: {result.kill_points} kill points, {result.restarts} restarts checked, "
          f"{len(result.failures)} failing")
    for failure in result.failures:
        print("   failure:", failure, file=sys.stderr)
    sys.exit(1 if result.failures else 0)
print("| target | kills | survived | cut before the rename | writes finished | failures |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for name in args.target or list(TARGETS):
    r = run(name, kill_points(args.writes, args.kills, args.seed))
    bad += len(r.failures)
    print(f"| {name} | {r.kills:,} | {r.survived:,} | {r.mid_write:,} | {r.writes:,} | {r.kills - r.survived:,} |",
          flush=True)
    for failure in r.failures:
        print("   failure:", failure, file=sys.stderr)
sys.exit(1 if bad else 0)
