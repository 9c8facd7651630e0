"""The fuzz property of every reader, with the CI budget (the long run: python -m tests.fuzz)."""
from __future__ import annotations

import pytest

from tests.fuzz.harness import FAILURES
from tests.fuzz.readers import readers
from tests.fuzz.run import fuzz_reader

CI_EXAMPLES = {"scenario": 150, "grpc": 150,
               # the surfaces of issue 20 (tests/fuzz/surfaces.py), fewer: each builds nodes, folders or policies
               "api": 200, "fleet-spec": 80, "fleet-trace": 120, "explain-node": 40, "resmgr-calls": 120,
               "resmgr-records": 60}
DEFAULT_EXAMPLES = 250


@pytest.mark.parametrize("name", list(readers()))
def test_reader_never_raises_hangs_or_accepts_what_it_must_refuse(name):
    counts, failures = fuzz_reader(name, CI_EXAMPLES.get(name, DEFAULT_EXAMPLES))
    assert not failures, "\n".join(f"{o}: {d}\n    input: {v}" for o, d, v in failures)
    assert sum(counts[o] for o in FAILURES) == 0
    assert counts["error"] > 0  # the generators do reach the refusals
