"""Scenario files: shape validation (file: path: reason), references to other files, strict YAML."""
import json
import textwrap

import pytest

from memorymanager.runner.scenario import ScenarioError, load_scenario
from tests.helpers.scenarios import TWO_NODE_MACHINE

MACHINE = TWO_NODE_MACHINE
POD_SCOPE = {"topologyManagerScope": "pod"}
POD = {
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
}


def scenario(**overrides):
    doc = {"name": "t", "machine": MACHINE, "kubelet": {}, "steps": [{"admit": POD}]}
    doc.update(overrides)
    return {k: v for k, v in doc.items() if v is not None}


def write(tmp_path, doc, name="s.yaml"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def error_of(tmp_path, doc):
    path = write(tmp_path, doc)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    err = info.value
    assert str(err) == f"{path}: {err.where}: {err.reason}"
    return err.where, err.reason


@pytest.mark.parametrize(
    "doc, where, reason",
    [
        (scenario(machin=MACHINE), "machin", 'unknown key; did you mean "machine"?'),
        (scenario(machine=None), "machine", "required key is missing"),
        (scenario(steps=None), "steps", "required key is missing"),
        (scenario(steps=[]), "steps", "expected at least one step"),
        (scenario(steps={"admit": POD}), "steps", "expected a list, got map"),
        (scenario(name=3), "name", "expected a string, got integer"),
        (scenario(machine=[1]), "machine", "expected a cadvisor MachineInfo map or a path string, got list"),
        (scenario(kubelet=[]), "kubelet", "expected a map of KubeletConfiguration fields or a path string, got list"),
        (scenario(checkpoint=7), "checkpoint", "expected a map or a string, got integer"),
        # steps: exactly one operation, known keys only
        (scenario(steps=[{"check": {}, "admit": POD}]), "steps[0]", "more than one operation (check, admit); a step has exactly one"),
        (scenario(steps=[{"expect": {}}]), "steps[0]", "no operation; expected exactly one of start, admit, hints, remove, restart, check"),
        (scenario(steps=[{"admit": POD, "expct": {}}]), "steps[0].expct", 'unknown key; did you mean "expect"?'),
        (scenario(steps=[{"admitt": POD}]), "steps[0].admitt", 'unknown key; did you mean "admit"?'),
        (scenario(steps=["check"]), "steps[0]", "expected a map with one operation, got string"),
        (scenario(steps=[{"check": {"now": True}}]), "steps[0].check.now", "unknown key; no keys are allowed here"),
        (scenario(steps=[{"admit": POD, "expect": {"hint": {}}}]), "steps[0].expect.hint", 'unknown key; did you mean "hints"?'),
        (scenario(steps=[{"check": {}, "expect": {"admitted": True}}]), "steps[0].expect.admitted", 'a "check" step does not report this key'),
        # remove / restart bodies
        (scenario(steps=[{"remove": {"container": "c"}}]), "steps[0].remove.pod", "required key is missing"),
        (scenario(steps=[{"remove": {"pod": "p", "containr": "c"}}]), "steps[0].remove.containr", 'unknown key; did you mean "container"?'),
        (scenario(steps=[{"remove": "p"}]), "steps[0].remove", "expected a map {pod, namespace, container}, got string"),
        (scenario(steps=[{"remove": {"pod": "p", "namespace": 3}}]), "steps[0].remove.namespace", "expected a string, got integer"),
        (scenario(steps=[{"restart": {"kubelet": {"memoryManagerPolcy": "Static"}}}]),
         "steps[0].restart.kubelet.memoryManagerPolcy", 'unknown key; did you mean "memoryManagerPolicy"?'),
        (scenario(steps=[{"restart": {"kubelets": {}}}]), "steps[0].restart.kubelets", 'unknown key; did you mean "kubelet"?'),
        # pods: errors of the manifest parser, at the step's path
        (scenario(steps=[{"admit": {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resource": {}}]}}}]),
         "steps[0].admit.spec.containers[0].resource", 'unknown key; did you mean "resources"?'),
        (scenario(steps=[{"hints": 5}]), "steps[0].hints", "expected a v1 Pod manifest or a path string, got integer"),
        # injected providers
        (scenario(steps=[{"hints": POD, "providers": {}}]), "steps[0].providers", 'only allowed beside "admit"'),
        (scenario(steps=[{"admit": POD, "providers": {"container": {}}}]), "steps[0].providers.container", 'unknown key; did you mean "containers"?'),
        (scenario(steps=[{"admit": POD, "providers": {"containers": {"cc": {}}}}]),
         "steps[0].providers.containers.cc", 'the pod has no container of this name; did you mean "c"?'),
        (scenario(steps=[{"admit": POD, "providers": {"containers": {"c": {"cpu": {}}}}}]),
         "steps[0].providers.containers.c.cpu", "expected a list, got map"),
        (scenario(kubelet=POD_SCOPE, steps=[{"admit": POD, "providers": {"pod": {"cpu": [{"numaAffinity": [64], "preferred": True}]}}}]),
         "steps[0].providers.pod.cpu[0].numaAffinity[0]", "bit number must be in range 0-63"),
        (scenario(kubelet=POD_SCOPE, steps=[{"admit": POD, "providers": {"pod": {"cpu": [{"numaAffinity": [0]}]}}}]),
         "steps[0].providers.pod.cpu[0].preferred", "required key is missing"),
        # hints in the other scope's shape (format 1.2): the step is invalid, never silently ignored
        (scenario(steps=[{"admit": POD, "providers": {"pod": {"cpu": []}}}]), "steps[0].providers.pod",
         "the node's topologyManagerScope is 'container': its hints are written under 'containers' "
         "({CONTAINER: {RESOURCE: [HINT, ...]}}), not 'pod'"),
        (scenario(steps=[{"admit": POD, "providers": {"containers": {"c": {"cpu": []}}, "pod": None}}]),
         "steps[0].providers.pod", "the node's topologyManagerScope is 'container': its hints are written under "
         "'containers' ({CONTAINER: {RESOURCE: [HINT, ...]}}), not 'pod'"),
        (scenario(kubelet=POD_SCOPE, steps=[{"admit": POD, "providers": {"containers": {"c": {"cpu": []}}}}]),
         "steps[0].providers.containers", "the node's topologyManagerScope is 'pod': its hints are written under "
         "'pod' ({RESOURCE: [HINT, ...]}), not 'containers'"),
        (scenario(steps=[{"restart": {"kubelet": POD_SCOPE}}, {"admit": POD, "providers": {"containers": {}}}]),
         "steps[1].providers.containers", "the node's topologyManagerScope is 'pod': its hints are written under "
         "'pod' ({RESOURCE: [HINT, ...]}), not 'containers'"),
        (scenario(kubelet=POD_SCOPE, steps=[{"admit": POD, "providers": {"pod": {"cpu": [{"numaAffinity": [0], "preferred": "yes"}]}}}]),
         "steps[0].providers.pod.cpu[0].preferred", "expected a boolean (true or false), got string 'yes'"),
    ],
)
def test_invalid_documents(tmp_path, doc, where, reason):
    assert error_of(tmp_path, doc) == (where, reason)


def test_yaml_problems_are_reported_with_their_place(tmp_path):
    dup = "name: a\nname: b\nmachine: {}\nsteps: [{check: {}}]\n"
    where, reason = error_of(tmp_path, dup)
    assert (where, reason) == ("name", "found duplicate key 'name' at line 2, column 1 (first at line 1, column 1)")
    where, reason = error_of(tmp_path, "steps: [\n")
    assert where == "(document)" and reason.startswith("not valid YAML: line ")
    assert error_of(tmp_path, "- 1\n") == ("(document)", "expected a map with name, machine, kubelet and steps, got list")


def test_a_valid_scenario_is_parsed(tmp_path):
    doc = scenario(
        description="d",
        checkpoint={"policyName": "None", "machineState": {}, "checksum": 4236770233},
        steps=[
            {"start": None},
            {"admit": POD, "providers": {"containers": {"c": {"cpu": [{"numaAffinity": [1], "preferred": True}], "dev": None}}},
             "expect": {"admitted": True}},
            {"hints": POD},
            {"remove": {"pod": "p", "container": "c"}},
            {"remove": {"pod": "p", "namespace": "prod"}},
            {"restart": {"kubelet": {"topologyManagerPolicy": "restricted"}}},
            {"restart": None},
            {"check": {}},
        ],
    )
    s = load_scenario(write(tmp_path, doc))
    assert (s.name, s.description) == ("t", "d")
    assert [st.op for st in s.steps] == ["start", "admit", "hints", "remove", "remove", "restart", "restart", "check"]
    # a checkpoint object is written as compact JSON, keys in document order
    assert s.checkpoint == '{"policyName":"None","machineState":{},"checksum":4236770233}'
    admit = s.steps[1]
    assert admit.pod.uid == "p" and admit.expect == {"admitted": True}
    assert admit.providers.containers["c"]["cpu"][0].nodes == (1,)
    assert admit.providers.containers["c"]["dev"] is None
    assert admit.providers.pod is None
    assert (s.steps[3].pod_ref, s.steps[3].namespace, s.steps[3].container) == ("p", None, "c")
    assert (s.steps[4].pod_ref, s.steps[4].namespace, s.steps[4].container) == ("p", "prod", None)
    # a restart override applies on top of the configuration in force
    assert s.steps[5].kubelet.topology_manager_policy == "restricted"
    assert s.steps[6].kubelet is None
    assert len(s.machine.topology) == 2


def test_a_checkpoint_string_is_kept_byte_for_byte(tmp_path):
    raw = '{"policyName":"None", "machineState":{},"checksum":4236770233}'
    s = load_scenario(write(tmp_path, scenario(checkpoint=raw)))
    assert s.checkpoint == raw


def test_name_defaults_to_the_file_name(tmp_path):
    s = load_scenario(write(tmp_path, scenario(name=None), name="042-thing.yaml"))
    assert s.name == "042-thing"


def test_paths_are_relative_to_the_scenario_file(tmp_path):
    (tmp_path / "machines").mkdir()
    (tmp_path / "machines" / "m.json").write_text(json.dumps(MACHINE))
    (tmp_path / "pods").mkdir()
    (tmp_path / "pods" / "p.yaml").write_text(json.dumps(POD))
    (tmp_path / "kubelet.yaml").write_text(
        textwrap.dedent(
            """\
            apiVersion: kubelet.config.k8s.io/v1beta1
            kind: KubeletConfiguration
            memoryManagerPolicy: Static
            clusterDNS: [10.0.0.10]
            reservedMemory:
            - {numaNode: 0, limits: {memory: 100Mi}}
            """
        )
    )
    sub = tmp_path / "scenarios"
    sub.mkdir()
    doc = {"machine": "../machines/m.json", "kubelet": "../kubelet.yaml", "steps": [{"admit": "../pods/p.yaml"}]}
    s = load_scenario(write(sub, doc))
    assert s.machine.topology[1].node_id == 1
    assert s.kubelet.memory_manager_policy == "Static"
    assert s.steps[0].pod.name == "p"


def test_a_missing_or_broken_referenced_file_is_an_invalid_scenario(tmp_path):
    where, reason = error_of(tmp_path, scenario(machine="nope.json"))
    assert where == "machine" and reason.startswith("no such file: ") and reason.endswith("nope.json")
    (tmp_path / "bad.json").write_text(json.dumps({"topology": [{"node_id": 0, "memroy": 1}]}))
    where, reason = error_of(tmp_path, scenario(machine="bad.json"))
    assert where == "machine"
    assert "bad.json" in reason and 'unknown key; did you mean "memory"?' in reason
    (tmp_path / "pod.yaml").write_text("metadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {memory: 1Gb}}}]}\n")
    where, reason = error_of(tmp_path, scenario(steps=[{"admit": "pod.yaml"}]))
    assert where == "steps[0].admit" and "pod.yaml" in reason and "quantities must match the regular expression" in reason
