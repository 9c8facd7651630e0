"""docs/tutorial.md: eleven walk-throughs, each on passing tutorial scenarios (or a fixture node) whose
embedded explain outputs are exactly what the command prints today."""
from __future__ import annotations

import os

from memorymanager.cli.embed_explain import blocks, command_output
from memorymanager.runner.execute import run_paths
from tests.explain.helpers import ROOT, TUTORIAL

PAGE = ROOT / "docs" / "tutorial.md"


def test_embedded_outputs_equal_the_command() -> None:
    found = blocks(PAGE.read_text(encoding="utf-8"))
    assert len(found) == 15
    cwd = os.getcwd()
    os.chdir(ROOT)  # the markers' paths are relative to the repository root
    try:
        for args, text in found:
            assert text.strip(), args
            assert text == command_output(args), f"docs/tutorial.md is stale for {args}; run python -m memorymanager.cli.embed_explain docs/tutorial.md"
    finally:
        os.chdir(cwd)
    scenarios = {arg for args, _ in found for arg in args if arg.startswith("fixtures/scenarios/tutorial/")}
    assert sorted(scenarios) == sorted(f"fixtures/scenarios/tutorial/{p.name}" for p in TUTORIAL.glob("*.yaml"))
    assert any(args[0] == "--node" for args, _ in found)  # chapter 11: a live node, no scenario


def test_tutorial_scenarios_pass() -> None:
    report = run_paths([str(TUTORIAL)])
    assert [s.status for s in report.scenarios] == ["passed"] * len(list(TUTORIAL.glob("*.yaml")))
    assert len(report.scenarios) == 11
