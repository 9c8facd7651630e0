"""`--record`: actual results written into each step's expect (memorymanager.runner.record)."""
import json
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import yaml

from memorymanager.runner.execute import run_file
from memorymanager.runner.record import recorded_expect, recorded_path, write_recorded
from tests.helpers.scenarios import TWO_NODE_MACHINE

MACHINE = TWO_NODE_MACHINE

SCENARIO = """\
# The derivation comment at the top survives recording.
# second line
name: record me
description: keep this
machine: {MACHINE}
kubelet:
  memoryManagerPolicy: Static
  topologyManagerPolicy: restricted
  reservedMemory:
  - {{numaNode: 0, limits: {{memory: 100Mi}}}}
steps:
- admit:
    metadata: {{name: p}}
    spec:
      containers:
      - {{name: c, resources: {{limits: {{cpu: "1", memory: 1Gi}}}}}}
  expect:
    numaNodes: {{c: [1]}}   # wrong on purpose
- admit:
    metadata: {{name: big}}
    spec:
      containers:
      - {{name: c, resources: {{limits: {{cpu: "1", memory: 100Gi}}}}}}
- hints:
    metadata: {{name: q}}
    spec:
      containers:
      - {{name: c, resources: {{limits: {{cpu: "1", memory: 1Gi}}}}}}
- remove: {{pod: p}}
- check: {{}}
  expect:
    error: not an error
""".format(MACHINE=json.dumps(MACHINE))


@pytest.mark.parametrize(
    "op, old, actual, new",
    [
        ("check", {}, {"error": None, "machineState": {"0": {}}, "entries": {}, "allocatable": []},
         {"machineState": {"0": {}}, "entries": {}}),
        # old keys are refreshed and keep their place; `error` is dropped when there was none
        ("check", {"allocatable": [1], "error": "x"}, {"error": None, "machineState": {}, "entries": {}, "allocatable": []},
         {"allocatable": [], "machineState": {}, "entries": {}}),
        # a rejected admission records reason and message
        ("admit", {}, {"error": None, "admitted": False, "reason": "R", "message": "M", "affinity": {}, "memory": {}, "hints": {}},
         {"admitted": False, "reason": "R", "message": "M", "affinity": {}, "memory": {}}),
        ("admit", {}, {"error": None, "admitted": True, "reason": "", "message": "", "affinity": {}, "memory": {}},
         {"admitted": True, "affinity": {}, "memory": {}}),
        # a failed step records its error first; keys it could not report keep their old value
        ("restart", {"machineState": {"0": None}}, {"error": "boom"}, {"error": "boom", "machineState": {"0": None}}),
        ("hints", {}, {"error": None, "hints": {"c": None}}, {"hints": {"c": None}}),
        ("remove", {}, {"error": None, "entries": {}}, {"entries": {}}),
        ("start", {}, {"error": None, "machineState": {}}, {"machineState": {}}),
        # `error: null` is kept while the step does not fail, replaced by the message when it does
        ("check", {"error": None}, {"error": None, "machineState": {}, "entries": {}},
         {"error": None, "machineState": {}, "entries": {}}),
        ("check", {"error": None}, {"error": "boom"}, {"error": "boom"}),
    ],
)
def test_recorded_expect(op, old, actual, new):
    got = recorded_expect(op, old, actual)
    assert got == new
    assert list(got) == list(new)


def test_recorded_path():
    assert recorded_path("a/b/x.yaml", False) == "a/b/x.recorded.yaml"
    assert recorded_path("a/b/x.json", False) == "a/b/x.recorded.yaml"
    assert recorded_path("a/b/x.yaml", True) == "a/b/x.yaml"
    assert recorded_path("a/b/x.recorded.yaml", False) == "a/b/x.recorded.yaml"  # a copy is recorded onto itself


def test_run_help_says_what_a_folder_and_record_do():
    import io
    import contextlib

    import memorymanager.cli.app as cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["run", "--help"]) == 0
    text = " ".join(out.getvalue().split())
    assert "that includes the *.recorded.yaml copies --record leaves next to the scenarios" in text
    assert "NAME.recorded.yaml next to NAME.yaml" in text and "recording a NAME.recorded.yaml rewrites that copy itself" in text


def test_recording_turns_an_observation_into_a_passing_test(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    result, scenario = run_file(str(path))
    assert result.status == "failed"
    written = write_recorded(scenario, result)
    assert written == str(tmp_path / "s.recorded.yaml")
    text = (tmp_path / "s.recorded.yaml").read_text()
    assert text.startswith("# The derivation comment at the top survives recording.\n# second line\n")
    doc = yaml.safe_load(text)
    assert list(doc) == ["name", "description", "machine", "kubelet", "steps"]
    assert doc["description"] == "keep this"
    steps = doc["steps"]
    assert steps[0]["expect"]["numaNodes"] == {"c": [0]}
    assert list(steps[0]["expect"]) == ["numaNodes", "admitted", "affinity", "memory"]
    assert steps[1]["expect"]["admitted"] is False
    assert steps[1]["expect"]["reason"] == "UnexpectedAdmissionError"
    assert "hints" in steps[2]["expect"]
    assert steps[3]["expect"]["entries"] == {}
    assert "error" not in steps[4]["expect"]
    # the original is untouched, and the recorded file passes
    assert path.read_text() == SCENARIO
    again, _ = run_file(written)
    assert again.status == "passed"


def test_recording_in_place_keeps_json_as_json(tmp_path):
    doc = {
        "name": "j",
        "machine": MACHINE,
        "steps": [{"check": {}, "expect": {"entries": {"x": {}}}}],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    result, scenario = run_file(str(path))
    assert result.status == "failed"
    assert write_recorded(scenario, result, in_place=True) == str(path)
    recorded = json.loads(path.read_text())
    assert recorded["steps"][0]["expect"]["entries"] == {}
    assert run_file(str(path))[0].status == "passed"


@pytest.mark.parametrize("style, ending", [(">", "\n"), (">-", "")])
def test_record_keeps_a_folded_description(tmp_path, style, ending):
    prose = ("policy_static.go Allocate: a request larger than any single node is placed on the narrowest "
             "group of nodes that holds it, lowest node filled first.")
    path = tmp_path / "s.yaml"
    folded = "".join(f"  {line}\n" for line in textwrap.wrap(prose, 70))
    path.write_text(f"name: folded\ndescription: {style}\n{folded}machine: {json.dumps(MACHINE)}\nsteps:\n- check: {{}}\n")
    result, scenario = run_file(str(path))
    written = write_recorded(scenario, result)
    text = open(written).read()
    assert f"\ndescription: {style}\n  policy_static.go Allocate:" in text
    assert yaml.safe_load(text)["description"] == yaml.safe_load(path.read_text())["description"] == prose + ending


WORD = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=15)


@settings(max_examples=100, deadline=None)
@given(st.lists(WORD, min_size=2, max_size=40).map(" ".join), st.sampled_from(["", "\n", "\n\nsecond paragraph\n"]))
def test_a_folded_text_reads_back_as_written(words, ending):
    text = words + ending
    from kubeinputs.reader import FoldedText, dump_yaml, load_yaml_text

    assert load_yaml_text(dump_yaml({"description": FoldedText(text)}))["description"] == text
