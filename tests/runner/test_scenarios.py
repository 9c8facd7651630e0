"""Every conformance scenario under fixtures/scenarios runs through the runner and passes (one test per file)."""
from tests.helpers.paths import FIXTURES as FIXTURES_ROOT
from pathlib import Path

import pytest

from memorymanager.runner.discover import collect_scenario_files
from memorymanager.runner.execute import run_file
from memorymanager.runner.report import scenario_lines

SCENARIO_ROOT = FIXTURES_ROOT / "scenarios"
FILES = [path for path, problem in collect_scenario_files([str(SCENARIO_ROOT)]) if problem is None]


def _id(path: str) -> str:
    return str(Path(path).relative_to(SCENARIO_ROOT))


@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_scenario_passes(path):
    result, _ = run_file(path)
    assert result.status == "passed", "\n".join(scenario_lines(result))


def test_the_bundled_scenarios_are_found():
    """The parametrized test above runs one test per file: none found would pass vacuously."""
    assert len(FILES) > 250 and all(path.endswith(".yaml") for path in FILES)
