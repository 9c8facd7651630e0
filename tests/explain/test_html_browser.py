"""The HTML report in a real browser (Debian's headless chromium): it renders a picture that is
not blank, and the DOM the browser built holds one bar group per NUMA node per step with the
machine state's bytes.

Skipped only when chromium is absent outside CI; with CI=true a missing browser fails
(.ci/run installs it).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memorymanager.explain.html import render_report
from memorymanager.explain.png import find_chromium
from memorymanager.explain.png import run_chromium as run_browser
from tests.explain.helpers import read_png, walk
from tests.explain.test_html import assert_bars_match, collect

WINDOW = (640, 480)


def chromium() -> str:
    """The chromium binary, or skip (fail in CI)."""
    found = find_chromium()
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed but CI=true: .ci/run should have installed it")
    pytest.skip("chromium not installed (apt-get install chromium); CI installs it and runs this test")


def run_chromium(binary: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless chromium as the README's PNG is made (memorymanager.explain.png), own profile folder."""
    return run_browser(binary, tmp_path / "profile", WINDOW, *args)


def test_tutorial_report_in_chromium(tmp_path: Path) -> None:
    binary = chromium()
    view = walk("tutorial/001-single-node-fit.yaml")
    page = tmp_path / "report.html"
    page.write_text(render_report([view], open_steps=1), encoding="utf-8")
    url = page.as_uri()

    dom = run_chromium(binary, tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    parser = collect(dom.stdout)
    assert sorted(parser.steps) == [s.index for s in view.steps]
    assert_bars_match(parser, view)  # the browser's DOM: one group per node per step, exact bytes

    shot = tmp_path / "shot.png"
    result = run_chromium(binary, tmp_path, f"--screenshot={shot}", url)
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    width, height, rows = read_png(shot.read_bytes())
    assert (width, height) == WINDOW
    step = len(rows[0]) // width
    pixels = [row[i:i + 3] for row in rows for i in range(0, len(row), step)]
    not_white = sum(1 for p in pixels if min(p) < 235)
    colourful = sum(1 for p in pixels if max(p) - min(p) > 90)  # pod colours, not grey text
    assert not_white > 0.02 * len(pixels), not_white
    assert colourful > 200, colourful
