"""The HTML report in a real browser (Debian's headless chromium): it renders a picture that is
not blank, and the DOM the browser built holds one bar group per NUMA node per step with the
machine state's bytes, the reason before the picture, numbers on every bar, every bar on one
scale, and a refused request drawn (in red where it exceeds the free memory) against the free
space it did not fit.

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
from memorymanager.explain.walk import walk_scenario
from memorymanager.runner.scenario import load_scenario
from tests.explain.helpers import SCENARIOS, TUTORIAL, read_png, walk
from tests.explain.test_html import assert_bars_match, collect, collect_picture

WINDOW = (800, 600)
GI = 1 << 30


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
    refused = walk_scenario(load_scenario(str(TUTORIAL / "006-what-would-make-it-fit.yaml")), only_step=2,
                            what_if=True)
    refused.steps = [s for s in refused.steps if s.index == 2]
    page = tmp_path / "report.html"
    page.write_text(render_report([view, refused], open_steps=1), encoding="utf-8")

    dom = run_chromium(binary, tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parser = collect(dom.stdout)
    assert sorted(parser.steps) == [s.index for s in view.steps] + [2]  # tutorial 1's steps 0, 1; tutorial 6's step 2
    assert_bars_match(parser, view)  # the browser's DOM: one group per node per step, exact bytes
    picture = collect_picture(dom.stdout)
    asks = {node: bar["asks"] for (step, node, _), bar in picture.bars.items() if step == 2}
    assert asks == {"0": [3 * GI], "1": [3 * GI]} and picture.reason_first[2]
    assert all("free " in bar["text"] and " of " in bar["text"] for bar in picture.bars.values())
    assert "6. What would make it fit" in dom.stdout and "removing a (frees memory 2Gi on node 0)" in dom.stdout

    alone = tmp_path / "refused.html"  # the refused step alone, at the top of the window
    alone.write_text(render_report([refused], open_steps=1), encoding="utf-8")
    shot = tmp_path / "shot.png"
    result = run_chromium(binary, tmp_path, f"--screenshot={shot}", alone.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    width, height, rows = read_png(shot.read_bytes())
    assert (width, height) == WINDOW
    step = len(rows[0]) // width
    pixels = [row[i:i + 3] for row in rows for i in range(0, len(row), step)]
    not_white = sum(1 for p in pixels if min(p) < 235)
    colourful = sum(1 for p in pixels if max(p) - min(p) > 90)  # pod colours, not grey text
    red = sum(1 for p in pixels if p[0] > 200 and p[1] < 150 and p[2] < 150)  # the request beyond the free memory
    assert not_white > 0.02 * len(pixels), not_white
    assert colourful > 200, colourful
    assert red > 300, red


def test_cpu_and_device_bars_render_in_chromium(tmp_path: Path) -> None:
    """The CPU and device picture as the browser builds it: per NUMA node a CPU bar and device bars with the counts
    of the explanation, and the squares of CPUs held by other containers drawn (orange pixels on the screenshot)."""
    from tests.explain.test_html import cpu_bars

    binary = chromium()
    refused = walk_scenario(load_scenario(str(SCENARIOS / "cpu/032-single-numa-node-no-node-has-room.yaml")), only_step=2)
    refused.steps = [s for s in refused.steps if s.index == 2]
    aligned = walk("devices/034-dual-socket-cpu-memory-gpu-aligned.yaml")
    aligned.steps = aligned.steps[:1]
    page = tmp_path / "cpus.html"
    page.write_text(render_report([refused, aligned], open_steps=1), encoding="utf-8")
    dom = run_chromium(binary, tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    nodes = cpu_bars(dom.stdout)
    assert nodes[(2, "0")]["cpu"] == {"cpus": 16, "reserved": 1, "exclusive": 12, "free": 3, "pod": 0}
    assert nodes[(2, "1")]["cpu"] == {"cpus": 16, "reserved": 0, "exclusive": 12, "free": 4, "pod": 0}
    assert nodes[(0, "0")]["devices"][0]["picked"] == "1" and nodes[(0, "0")]["cpu"]["pod"] == 6
    assert "asks 5 CPU(s)" in dom.stdout

    alone = tmp_path / "refused.html"
    alone.write_text(render_report([refused], open_steps=1), encoding="utf-8")
    shot = tmp_path / "shot.png"
    result = run_chromium(binary, tmp_path, f"--screenshot={shot}", alone.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    width, _, rows = read_png(shot.read_bytes())
    step = len(rows[0]) // width
    orange = sum(1 for row in rows for i in range(0, len(row), step)
                 if row[i] > 230 and 160 < row[i + 1] < 200 and row[i + 2] < 110)  # #ffb74d: held CPUs
    assert orange > 24 * 50, orange  # 24 held CPUs of 9x9 pixels (and the legend's swatch)
