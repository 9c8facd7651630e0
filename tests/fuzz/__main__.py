"""`python -m tests.fuzz --examples N [--reader NAME ...] [--seed S] [--no-corpus] [--no-large]`: the long fuzz
run (docs/limits.md): the replay of fixtures/bad and the large generated cases, then every surface."""
import argparse
import sys

from tests.fuzz.run import main

parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
parser.add_argument("--examples", type=int, default=1000, help="generated inputs per reader (default 1,000)")
parser.add_argument("--reader", action="append", help="only this reader (repeatable)")
parser.add_argument("--seed", type=int, help="a random seed (default: derandomized, the same inputs every run)")
parser.add_argument("--no-corpus", action="store_true", help="skip the replay of fixtures/bad and the large cases")
parser.add_argument("--no-large", action="store_true", help="replay fixtures/bad but skip the large generated cases")
args = parser.parse_args()
sys.exit(main(args.examples, args.reader, args.seed, corpus=not args.no_corpus, large=not args.no_large))
