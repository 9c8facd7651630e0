"""The fuzz property of every reader, with the default run's budget (the long run: python -m tests.fuzz)."""
from __future__ import annotations

import pytest

from tests.fuzz.harness import FAILURES
from tests.fuzz.readers import readers
from tests.fuzz.run import fuzz_reader
from tests.helpers.budget import examples

# inputs per reader: the default run's, then the long run's (MEMORYMANAGER_LONG=1); the longest runs:
# python -m tests.fuzz --examples N
CI_EXAMPLES = {"scenario": examples(60, 150), "grpc": examples(60, 150),
               # the newer surfaces (tests/fuzz/surfaces.py), fewer: each builds nodes, folders or policies
               "api": examples(80, 200), "fleet-spec": examples(30, 80), "fleet-trace": examples(50, 120),
               "explain-node": examples(15, 40), "resmgr-calls": examples(50, 120), "resmgr-records": examples(25, 60),
               # the CPU and device managers' inputs (tests/fuzz/cpu_devices.py); scenarios run a node each
               "cpu-checkpoint": examples(60, 200), "device-checkpoint": examples(60, 200),
               "devices": examples(60, 200), "scenario-1.2": examples(30, 100)}
DEFAULT_EXAMPLES = examples(100, 250)


@pytest.mark.parametrize("name", list(readers()))
def test_reader_never_raises_hangs_or_accepts_what_it_must_refuse(name):
    counts, failures = fuzz_reader(name, CI_EXAMPLES.get(name, DEFAULT_EXAMPLES))
    assert not failures, "\n".join(f"{o}: {d}\n    input: {v}" for o, d, v in failures)
    assert sum(counts[o] for o in FAILURES) == 0
    assert counts["error"] > 0  # the generators do reach the refusals
