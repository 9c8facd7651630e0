"""`--record`: actual results written into each step's expect (memorymanager.runner.record)."""
import json

import pytest
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
