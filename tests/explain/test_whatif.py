"""explain --what-if (part 6): every suggestion is made for real on a node built through the public
API from the same scenario, and the pod admitted there gets the answer the what-if gave."""
from __future__ import annotations

import io

import memorymanager
from memorymanager.cli.app import main
from memorymanager.explain.text import explanation_lines
from memorymanager.explain.walk import walk_scenario
from memorymanager.runner.scenario import load_scenario
from tests.explain.helpers import ROOT, TUTORIAL

MI, GI = 1 << 20, 1 << 30
FIT = TUTORIAL / "006-what-would-make-it-fit.yaml"


def scenario_node(path, upto, **changes):
    """A public-API node with the scenario's machine and configuration and the pods of its first `upto` steps."""
    scenario = load_scenario(str(path))
    node = memorymanager.Node(scenario.machine, scenario.kubelet)
    if changes:
        node.restart(**changes)
    for step in scenario.steps[:upto]:
        assert node.admit(step.pod).admitted
    return node, scenario.steps[upto].pod


def test_refused_pod_what_if_and_each_answer_made_for_real() -> None:
    view = walk_scenario(load_scenario(str(FIT)), only_step=2, what_if=True)
    w = view.steps[2].explanation.what_if
    assert not w.admitted and w.checks > 0
    lacks = {tuple(s.nodes): s for s in w.shortfalls}
    assert lacks[(0,)].lacking == {"memory": 1124 * MI} and lacks[(0,)].free_by_node == {"0": {"memory": 1948 * MI}}
    assert lacks[(1,)].lacking == {"memory": 2 * GI}
    assert lacks[(0, 1)].blocked_by.startswith("node 0 already holds single-NUMA memory")
    assert [fix.pods for fix in w.removals] == [("a",), ("b",)]
    for fix in w.removals:
        node, pod = scenario_node(FIT, 2)
        node.remove(fix.pods[0])
        assert node.admit(pod) == fix.admission and fix.admission.admitted
    assert w.settings and not any(t.admission.admitted for t in w.settings)
    for t in w.settings[:2]:  # a restart with the setting refuses it too
        node, pod = scenario_node(FIT, 2, topologyManagerPolicy=t.policy, topologyManagerScope=t.scope)
        assert not node.would_admit(pod).admitted
    assert w.largest.requests == {"app": {"memory": 1948 * MI}}
    node, pod = scenario_node(FIT, 2)
    smaller = {"metadata": {"name": "c"}, "spec": {"containers": [{"name": "app", "resources": {
        "limits": {"cpu": "1", "memory": "1948Mi"}}}]}}
    assert node.admit(smaller) == w.largest.admission
    text = "\n".join(explanation_lines(view.steps[2].explanation))
    assert "6. What would make it fit" in text and "removing a (frees memory 2Gi on node 0): admitted: app on node 0" in text


def test_admitted_pod_headroom() -> None:
    view = walk_scenario(load_scenario(str(FIT)), only_step=1, what_if=True)
    w = view.steps[1].explanation.what_if
    node, _ = scenario_node(FIT, 2)  # a and b admitted: the state after step 1
    assert w.admitted and {h.node: dict(h.free) for h in w.headroom} == node.free()
    assert "6. Headroom after the admission" in "\n".join(explanation_lines(view.steps[1].explanation))


def test_cli_what_if_on_a_live_node() -> None:
    out, err = io.StringIO(), io.StringIO()
    node_root = ROOT / "fixtures" / "nodes"
    code = main(["explain", "--node", str(node_root / "two-nodes"), str(node_root / "pod-4gi.yaml"), "--what-if"],
                out, err)
    assert code == 0, err.getvalue()
    assert "6. Headroom after the admission" in out.getvalue()
