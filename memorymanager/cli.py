"""The `memorymanager` command (placeholder until the runner lands)."""
import sys


def main(argv=None) -> int:
    print("memorymanager: not implemented yet", file=sys.stderr)
    return 2
