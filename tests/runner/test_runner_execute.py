"""Running scenarios (memorymanager.runner.execute): steps, failures, start handling, state folders, discovery."""
import json
import os

import pytest

from memorymanager.runner import execute
from memorymanager.runner.discover import collect_scenario_files
from memorymanager.runner.execute import error_message, merge_function, run_file, run_paths
from memorymanager.runner.report import scenario_lines, summary_line, write_human, write_json
from tests.helpers.scenarios import TWO_NODE_MACHINE

MACHINE = TWO_NODE_MACHINE
STATIC = {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def pod(name, memory="1Gi"):
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": memory}}}]}}


def write(tmp_path, steps, name="s.yaml", **top):
    doc = {"name": name, "machine": MACHINE, "kubelet": STATIC, "steps": steps}
    doc.update(top)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def run(tmp_path, steps, **top):
    result, _ = run_file(write(tmp_path, steps, **top))
    return result


def test_passing_and_failing_steps(tmp_path):
    result = run(
        tmp_path,
        [
            {"admit": pod("p"), "expect": {"admitted": True, "memory": {"c": [{"numaAffinity": [0], "type": "memory", "size": 1073741824}]}}},
            {"check": {}, "expect": {"entries": {"p": {"c": [{"numaAffinity": [1], "type": "memory", "size": 1073741824}]}}}},
        ],
    )
    assert result.status == "failed"
    assert [s.status for s in result.steps] == ["passed", "failed"]
    [failure] = result.steps[1].failures
    assert failure.path == "entries.p.c"
    assert failure.actual == [{"numaAffinity": [0], "type": "memory", "size": 1073741824}]


def test_every_step_reports_all_its_keys(tmp_path):
    result = run(tmp_path, [{"admit": pod("p")}, {"hints": pod("q")}, {"remove": {"pod": "p"}}, {"check": {}}])
    state_keys = {"error", "machineState", "entries", "podEntries", "allocatable"}
    pod_keys = {"affinity", "memory", "numaNodes"}
    assert set(result.steps[0].actual) == state_keys | pod_keys | {"admitted", "reason", "message", "hints"}
    assert set(result.steps[1].actual) == state_keys | pod_keys | {"hints"}
    assert set(result.steps[2].actual) == state_keys | pod_keys
    # a step without a pod of its own reports the pod of the last step that had one
    assert set(result.steps[3].actual) == state_keys | pod_keys
    assert result.steps[3].actual["memory"] == {"c": None}


def test_without_observe_all_a_step_reports_what_its_expect_names(tmp_path):
    steps = [{"admit": pod("p"), "expect": {"admitted": True}},
             {"admit": pod("q"), "expect": {"hints": {"c": {"memory": [{"numaAffinity": [0], "preferred": True}]}}}},
             {"check": {}, "expect": {"entries": {}}}]
    result, _ = run_file(write(tmp_path, steps, kubelet={**STATIC, "topologyManagerPolicy": "best-effort"}),
                         observe_all=False)
    pod_keys = {"affinity", "memory", "numaNodes"}
    assert set(result.steps[0].actual) == pod_keys | {"error", "admitted", "reason", "message"}
    assert set(result.steps[1].actual) == pod_keys | {"error", "admitted", "reason", "message", "hints"}
    assert result.steps[1].failures[0].path.startswith("hints.c.memory")  # rendered, then compared
    assert {"machineState", "entries", "podEntries", "allocatable"} <= set(result.steps[2].actual)
    assert [s.status for s in result.steps] == ["passed", "failed", "passed"]


def test_a_step_that_raises_is_a_failure_not_a_crash(tmp_path, monkeypatch):
    from memorymanager.node.simulated_node import SimulatedNode

    def boom(self, pod, extra=None):
        raise KeyError("surprise")

    monkeypatch.setattr(SimulatedNode, "admit", boom)
    result = run(tmp_path, [{"admit": pod("p"), "expect": {"admitted": True}}, {"check": {}}])
    assert result.steps[0].actual["error"] == "KeyError: 'surprise'"
    assert [f.path for f in result.steps[0].failures] == ["error", "admitted"]
    assert result.steps[1].status == "passed"


def test_an_expected_error_passes_and_state_is_still_reported(tmp_path):
    result = run(tmp_path, [{"start": {}, "expect": {"machineState": {"0": {"cells": [0]}}}},
                            {"start": {}, "expect": {"error": "nothing"}}])
    assert result.steps[0].status == "passed"
    assert [f.path for f in result.steps[1].failures] == ["error"]


def test_implicit_start_failure_fails_step_zero_and_every_step_needing_the_node(tmp_path):
    result = run(tmp_path, [{"admit": pod("p")}, {"check": {}}, {"restart": {"kubelet": {"memoryManagerPolicy": "None"}}}],
                 kubelet={"memoryManagerPolicy": "Static"})
    errors = [s.actual["error"] for s in result.steps]
    assert errors[0].startswith("the node is not running (start failed: the total amount \"0\" of type \"memory\"")
    assert errors[1] == errors[0]
    assert errors[2] is None  # the restart starts the node with a configuration that works
    assert [s.status for s in result.steps] == ["failed", "failed", "passed"]


def test_explicit_start_is_not_preceded_by_an_implicit_one(tmp_path, monkeypatch):
    from memorymanager.node.simulated_node import SimulatedNode

    starts = []
    original = SimulatedNode.start

    def counting(self):
        starts.append(1)
        return original(self)

    monkeypatch.setattr(SimulatedNode, "start", counting)
    run(tmp_path, [{"start": {}}, {"check": {}}])
    assert len(starts) == 1
    run(tmp_path, [{"check": {}}])
    assert len(starts) == 2


def test_checkpoint_is_written_before_the_first_start_and_state_dir_is_kept(tmp_path):
    state_dir = tmp_path / "state"
    raw = '{"policyName":"Static","machineState":{},"checksum":3940083781}'
    path = write(tmp_path, [{"start": {}, "expect": {"entries": {}}}], checkpoint=raw)
    result, _ = run_file(path, state_dir=str(state_dir))
    assert result.status == "passed", scenario_lines(result)
    text = (state_dir / "memory_manager_state").read_text()
    assert json.loads(text)["policyName"] == "Static"
    # the same folder for another scenario: the old checkpoint is removed first (a fresh node)
    (state_dir / "memory_manager_state").write_text("{")
    result, _ = run_file(write(tmp_path, [{"start": {}}], name="t.yaml"), state_dir=str(state_dir))
    assert result.status == "passed", scenario_lines(result)


def test_a_corrupt_checkpoint_is_a_start_error(tmp_path):
    result = run(tmp_path, [{"start": {}, "expect": {"error": "checkpoint is corrupted"}}],
                 checkpoint={"policyName": "Static", "machineState": {}, "checksum": 1})
    assert result.status == "passed", scenario_lines(result)


def test_temporary_state_folders_are_removed(tmp_path, monkeypatch):
    made = []
    real = execute.tempfile.mkdtemp

    def spy(**kw):
        made.append(real(**kw))
        return made[-1]

    monkeypatch.setattr(execute.tempfile, "mkdtemp", spy)
    run(tmp_path, [{"check": {}}])
    assert len(made) == 1 and not os.path.exists(made[0])


def test_merge_choice():
    assert merge_function("fast") is None
    from topologymanager.reference_merge import reference_merge_hints

    assert merge_function("reference") is reference_merge_hints
    with pytest.raises(ValueError):
        merge_function("slow")


def test_reference_merge_gives_the_same_results(tmp_path):
    path = write(
        tmp_path,
        [{"admit": pod("p"), "providers": {"containers": {"c": {"cpu": [{"numaAffinity": [1], "preferred": True}]}}},
          "expect": {"affinity": {"c": {"numaAffinity": [1], "preferred": True}}}}],
        kubelet={"topologyManagerPolicy": "restricted"},
    )
    for fn in (None, merge_function("reference")):
        result, _ = run_file(path, merge_fn=fn)
        assert result.status == "passed", scenario_lines(result)


def test_error_message_forms():
    from memorymanager.node.simulated_node import NodeError

    assert error_message(NodeError("the node is not running")) == "the node is not running"
    assert error_message(ValueError("bad\nthing")) == "ValueError: bad thing"
    assert error_message(RuntimeError()) == "RuntimeError: RuntimeError"


def test_discovery_order_and_problems(tmp_path):
    for rel in ["b/2.yaml", "b/10.yml", "a.json", "a/z.yaml", "b/notes.txt", ".hidden/x.yaml", "b/.x.yaml"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}")
    (tmp_path / "empty").mkdir()
    found = list(collect_scenario_files([str(tmp_path), str(tmp_path / "missing.yaml"), str(tmp_path / "empty"),
                                         str(tmp_path / "b" / "notes.txt")]))
    names = [os.path.relpath(p, tmp_path) for p, problem in found]
    assert names == ["a/z.yaml", "a.json", "b/10.yml", "b/2.yaml", "missing.yaml", "empty", "b/notes.txt"]
    assert [problem for _, problem in found][4:6] == ["no such file or folder", "no *.yaml, *.yml or *.json files in this folder"]


def test_run_paths_reports_invalid_files_and_runs_the_others(tmp_path):
    good = write(tmp_path, [{"check": {}}], name="good.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmachine: {}\nsteps: [{chek: {}}]\n")
    seen = []
    report = run_paths([str(tmp_path), str(tmp_path / "nope")], on_scenario=lambda r, s: seen.append(r.status))
    assert seen == ["invalid", "passed", "invalid"]
    assert report.exit_code == 2
    assert report.to_dict()["invalid"] == 2
    assert report.scenarios[0].error == f'{bad}: steps[0].chek: unknown key; did you mean "check"?'
    assert report.scenarios[1].file == good


def test_reports(tmp_path, capsys):
    import io

    path = write(tmp_path, [{"admit": pod("p"), "expect": {"admitted": False}}])
    report = run_paths([path])
    assert report.exit_code == 1
    out = io.StringIO()
    write_human(report, out)
    text = out.getvalue()
    assert f"{path}: steps[0] (admit): admitted" in text
    assert "expected: false" in text and "actual:   true" in text
    assert text.rstrip().endswith("0 passed, 1 failed, 0 invalid")
    assert summary_line(report) == "0 passed, 1 failed, 0 invalid"
    out = io.StringIO()
    write_json(report, out)
    doc = json.loads(out.getvalue())
    assert (doc["passed"], doc["failed"], doc["invalid"]) == (0, 1, 0)
    [scenario] = doc["scenarios"]
    assert scenario["status"] == "failed" and "error" not in scenario
    [step] = scenario["steps"]
    assert step["index"] == 0 and step["op"] == "admit" and step["status"] == "failed"
    assert step["failures"] == [{"path": "admitted", "expected": False, "actual": True}]
    assert step["actual"]["affinity"] == {"c": {"numaAffinity": None, "preferred": False}}


def test_benchmark_scenarios_pass(tmp_path):
    """benchmarks/scenarios.py (B9, B10) writes scenarios that are valid and hold."""
    from benchmarks import scenarios
    from memorymanager.runner.execute import run_paths

    paths = scenarios.write(str(tmp_path))
    report = run_paths([paths["hints"], paths["hints_block"], paths["trivial"]])
    assert [s.status for s in report.scenarios] == ["passed", "passed", "passed"]


def test_error_null_means_the_step_must_not_fail(tmp_path):
    """Contract 1.1: `expect: {error: null}` passes when the step succeeds and fails when it errors."""
    ok = run(tmp_path, [{"start": {}, "expect": {"error": None}}, {"admit": pod("p"), "expect": {"error": None}}])
    assert [s.status for s in ok.steps] == ["passed", "passed"]
    broken = run(tmp_path, [{"start": {}, "expect": {"error": None}}, {"check": {}, "expect": {"error": None}}],
                 kubelet={"memoryManagerPolicy": "Static"})  # Static without reservedMemory: kubelet refuses to start
    assert [s.status for s in broken.steps] == ["failed", "failed"]
    [failure] = broken.steps[0].failures
    assert failure.path == "error" and failure.expected is None
    assert "determined by Node Allocatable feature" in failure.actual
    assert broken.steps[0].to_dict()["failures"][0]["expected"] is None


def in_namespace(name, namespace, uid=None, memory="1Gi"):
    doc = pod(name, memory)
    doc["metadata"]["namespace"] = namespace
    if uid is not None:
        doc["metadata"]["uid"] = uid
    return doc


def test_namespaced_pods_a_reused_uid_and_an_ambiguous_name_are_step_errors(tmp_path):
    result = run(tmp_path, [
        {"admit": in_namespace("db", "prod"), "expect": {"entries": {"prod/db": {"c": [
            {"numaAffinity": [0], "type": "memory", "size": 1 << 30}]}}}},
        {"admit": in_namespace("db", "staging"), "expect": {"admitted": True}},
        {"remove": {"pod": "db"}, "expect": {"error": "pods named 'db' were admitted in namespaces prod, staging"}},
        {"admit": in_namespace("cache", "prod", uid="prod/db"),
         "expect": {"error": "metadata.uid: pod UID 'prod/db' is already the UID of pod prod/db"}},
        {"remove": {"pod": "db", "namespace": "staging"}, "expect": {"entries": {"staging/db": None, "prod/db": {
            "c": [{"numaAffinity": [0], "type": "memory", "size": 1 << 30}]}}}},
        {"remove": {"pod": "db"}, "expect": {"error": None, "entries": {"prod/db": None}}},  # one namespace left
    ])
    assert result.status == "passed", "\n".join(scenario_lines(result))
