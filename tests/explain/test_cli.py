"""`memorymanager explain` and `run --html` on the command line: output, errors without tracebacks."""
from __future__ import annotations

import io
import json

from memorymanager.cli.app import main
from tests.explain.helpers import TUTORIAL


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_text_has_five_parts_and_fits_100_columns() -> None:
    code, out, err = run("explain", str(TUTORIAL / "003-single-and-cross-numa.yaml"))
    assert code == 0, err
    for heading in ("1. What is asked", "2. The memory manager's hints", "3. The merge", "4. The decision",
                    "5. The allocation"):
        assert out.count(heading) == 2
    assert "node 0 belongs to the multi-NUMA group 0-1: not usable alone" in out
    assert "rejected: TopologyAffinityError: Resources cannot be allocated with Topology locality" in out
    assert "\033[" not in out  # no colour when not a terminal
    assert max(len(line) for line in out.splitlines()) <= 100


def test_step_json_and_html(tmp_path) -> None:
    code, out, _ = run("explain", str(TUTORIAL / "005-restricted-cpu-not-aligned.yaml"), "--step", "0",
                       "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["steps"][0]["explanation"]["decision"]["reason"] == "TopologyAffinityError"
    target = tmp_path / "x.html"
    code, out, _ = run("explain", str(TUTORIAL / "002-spread-over-a-group.yaml"), "--format", "html", "-o", str(target))
    assert code == 0 and out == ""
    assert target.read_text().count('class="numa-node"') == 2


def test_bad_inputs_are_one_line_errors(tmp_path) -> None:
    code, _, err = run("explain", str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in err and "Traceback" not in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmachine: {}\nsteps: [{admitt: {}}]\n")
    code, _, err = run("explain", str(bad))
    assert code == 2 and "bad.yaml" in err and "steps[0]" in err
    code, _, err = run("explain", str(TUTORIAL / "001-single-node-fit.yaml"), "--step", "7")
    assert code == 2 and "--step 7" in err
    code, _, err = run("explain", str(TUTORIAL / "001-single-node-fit.yaml"), "--hints", "h.yaml")
    assert code == 2 and "need --node" in err


def test_run_html_report(tmp_path) -> None:
    target = tmp_path / "report.html"
    from memorymanager.runner.scenario import load_scenario

    files = sorted(TUTORIAL.glob("*.yaml"))
    code, out, _ = run("run", str(TUTORIAL), "--html", str(target))
    assert code == 0 and f"{len(files)} passed" in out
    page = target.read_text()
    assert page.count("<details") == sum(len(load_scenario(str(f)).steps) for f in files)  # the tutorial's steps
    assert "TopologyAffinityError" in page
    code, _, err = run("run", str(TUTORIAL / "001-single-node-fit.yaml"), "--html", str(tmp_path / "no" / "r.html"))
    assert code == 2 and "cannot write the HTML report" in err


class FakeTerminal(io.StringIO):
    """Standard output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal() -> None:
    out, err = FakeTerminal(), io.StringIO()
    assert main(["explain", str(TUTORIAL / "003-single-and-cross-numa.yaml"), "--step", "1"], out, err) == 0
    assert "\033[31m" in out.getvalue() and "\033[1m" in out.getvalue()
    plain = run("explain", str(TUTORIAL / "003-single-and-cross-numa.yaml"), "--step", "1")[1]
    assert "\033[" not in plain
    assert plain == out.getvalue().replace("\033[31m", "").replace("\033[32m", "").replace(
        "\033[1m", "").replace("\033[0m", "")
