"""explain's five parts, computed by the deciding code, on the tutorial and bundled scenarios."""
from __future__ import annotations

import pytest

from memorymanager.explain.build import explain_pod
from memorymanager.explain.walk import EXPLAINED_OPS
from memorymanager.node.api import Node
from memorymanager.explain.walk import walk_scenario
from kubeinputs.synthetic_machine import synthetic_machine
from memorymanager.runner.scenario import load_scenario
from tests.explain.helpers import SCENARIOS, walk

GI = 1 << 30
MI = 1 << 20


def test_every_bundled_scenario_is_explained_consistently() -> None:
    """Every admit and hints step of every bundled scenario gets an explanation, and the hints
    and merge results recomputed from the building blocks equal what the managers produced."""
    explained = 0
    for path in sorted(SCENARIOS.rglob("*.yaml")):
        scenario = load_scenario(str(path))
        view = walk_scenario(scenario)
        assert all(s.status == "passed" for s in view.steps), path
        for step, spec in zip(view.steps, scenario.steps):
            if step.op not in EXPLAINED_OPS:
                assert step.explanation is None
                continue
            e = step.explanation
            explained += 1
            assert not e.error or "not running" in e.error, (path, step.index, e.error)
            if e.error:
                continue
            assert e.asked is not None
            assert e.hints or e.asked.topology_policy == "none", (path, step.index)
            assert all(h.consistent for h in e.hints), (path, step.index)
            assert all(m.consistent for m in e.merges), (path, step.index)
            assert all(h.consistent for h in e.cpu_hints + e.device_hints), (path, step.index)
            assert all(a.consistent for a in e.cpu_allocation), (path, step.index)
            if e.op == "admit" and "admitted" in spec.expect:
                assert e.decision.admitted == spec.expect["admitted"], (path, step.index)
    assert explained > 200


def test_single_node_fit_mask_table() -> None:
    view = walk("tutorial/001-single-node-fit.yaml")
    second = view.steps[1].explanation
    rows = {tuple(r.nodes): r for r in second.hints[0].masks}
    assert rows[(0,)].allocatable_ok and rows[(0,)].fits is False
    assert rows[(0,)].free == {"memory": 3996 * MI - 2 * GI}
    assert rows[(0, 1)].group_rule == "joins-single-numa-allocation" and rows[(0, 1)].group_node == 0
    assert rows[(1,)].hint and rows[(1,)].preferred
    assert second.hints[0].preferred_width == 1
    assert second.merges[0].winner == {"numaAffinity": [1], "preferred": True}


def test_spread_over_group_fill_order() -> None:
    e = walk("tutorial/002-spread-over-a-group.yaml").steps[0].explanation
    alloc = e.allocation.containers[0]
    assert [(t.node, t.size) for t in alloc.taken] == [(0, 3996 * MI), (1, 6 * GI - 3996 * MI)]
    assert alloc.cpuset_mems == "0-1"
    assert e.allocation.after["0"]["cells"] == [0, 1]
    assert e.allocation.before["0"]["memoryMap"]["memory"]["free"] == 3996 * MI


def test_group_rule_refusal_sentence() -> None:
    e = walk("tutorial/003-single-and-cross-numa.yaml").steps[1].explanation
    rows = {tuple(r.nodes): r for r in e.hints[0].masks}
    assert rows[(0,)].group_rule == "single-node-in-group"
    assert rows[(0, 1)].hint and not rows[(0, 1)].preferred
    assert e.merges[0].path == "non-preferred" and e.merges[0].best_non_preferred_count == 2
    assert not e.decision.admitted and e.decision.reason == "TopologyAffinityError"
    assert "restricted admits only a preferred hint" in e.decision.why


def test_init_memory_reused() -> None:
    e = walk("tutorial/004-init-memory-reused.yaml").steps[0].explanation
    init, app = e.allocation.containers
    assert init.taken and init.taken[0].size == 2 * GI
    assert app.reused == {"memory": 2 * GI} and app.taken == []
    assert e.allocation.blocks_after["init"] is None
    app_rows = {tuple(r.nodes): r for r in e.hints[1].masks}
    assert app_rows[(0,)].reusable == {"memory": 2 * GI} and app_rows[(0,)].hint


def test_cpu_not_aligned_rivals() -> None:
    e = walk("tutorial/005-restricted-cpu-not-aligned.yaml").steps[0].explanation
    merge = e.merges[0]
    assert merge.combinations == 3 and merge.preferred_candidates == 0
    assert [pl.resource for pl in merge.lists] == ["memory", "cpu"]
    assert [r.nodes for r in merge.rivals] == [[0], [1]]
    assert "exactly BestNonPreferredAffinityCount = 2" in merge.rivals[0].rule
    assert "cpu prefers 0-1" in e.decision.why


def test_pod_scope_parts() -> None:
    e = walk("memory/052-pod-scope-init-max.yaml").steps[0].explanation
    (part,) = e.asked.pod_parts
    assert (part.app, part.init_peak, part.peak_container, part.total) == (3 * GI, 4 * GI, "i2", 4 * GI)
    assert e.hints[0].target == "pod"


def test_explain_leaves_the_node_untouched() -> None:
    node = Node({"topology": [{"node_id": 0, "memory": 4 * GI}, {"node_id": 1, "memory": 4 * GI}],
                 "num_cores": 2, "memory_capacity": 8 * GI},
                {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
                 "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    node.start()
    before = node.free()
    pod = node.simulated_node  # the layer explain works on
    from memorymanager.node.api import read_pod

    e = explain_pod(pod, read_pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}))
    assert e.decision.admitted
    assert node.free() == before and node.pods() == []


def test_large_machine_lists_only_masks_that_matter() -> None:
    node = Node(synthetic_machine(12, 4 * GI),
                {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
                 "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "12"},
                 "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    node.start()
    from memorymanager.node.api import read_pod

    e = explain_pod(node.simulated_node, read_pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}))
    hints = e.hints[0]
    assert hints.total_masks == 4095
    assert len(hints.masks) < 64
    assert len(hints.masks) + sum(hints.omitted.values()) == 4095
    assert hints.consistent and e.merges[0].consistent


def test_prefer_closest_rival_rule() -> None:
    merge = walk("topology/046-prefer-closest-distance-beats-lower-mask.yaml").steps[0].explanation.merges[0]
    assert merge.prefer_closest and merge.winner == {"numaAffinity": [2, 3], "preferred": True}
    assert merge.rivals[0].nodes == [0, 2] and merge.rivals[0].rule.startswith("closer")


def test_non_preferred_tie_and_count_rules() -> None:
    merge = walk("topology/040-upstream-best-non-preferred-count-5-narrowest.yaml").steps[0].explanation.merges[0]
    assert merge.best_non_preferred_count == 2 and merge.combinations == 4
    assert [(r.nodes, r.rule) for r in merge.rivals] == [
        ([2, 3], "same width: the lower mask wins"),
        ([1], "exactly BestNonPreferredAffinityCount = 2 node(s) beats 1"),
    ]


def test_pod_level_budget_without_shared_pool() -> None:
    """KEP-5526: exclusive containers take the whole pod budget, a shared one is left nothing."""
    node = Node(synthetic_machine(2, 4 * GI),
                {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod",
                 "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
                 "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    node.start()
    from memorymanager.node.api import read_pod

    pod = read_pod({"metadata": {"name": "p"}, "spec": {
        "resources": {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
        "containers": [{"name": "excl", "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
                       {"name": "shared"}]}})
    e = explain_pod(node.simulated_node, pod)
    (hints,) = e.hints
    assert hints.hints == {"memory": []} and hints.consistent
    assert "leaving no memory for shared containers" in hints.note
    assert e.merges[0].consistent


def test_a_burstable_pod_is_not_pinned_and_its_qos_reason_names_what_is_missing() -> None:
    e = walk("memory/067-burstable-pod-not-pinned.yaml").steps[0].explanation
    assert e.decision.admitted
    assert e.decision.why == ("admitted: the pod is Burstable, so it is not pinned (only Guaranteed pods get "
                              "exclusive NUMA memory)")
    assert "aligned" not in e.decision.why
    assert e.asked.qos_reason == "the summed memory requests (1Gi) differ from the summed memory limits (2Gi)"


def test_allocatable_is_derived_per_node() -> None:
    node = Node(synthetic_machine(2, 4 * GI, hugepages_2mi=256),
                {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    node.start()
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    from kubeinputs.pod import parse_pod

    e = explain_pod(node.simulated_node, parse_pod(pod))
    rows = {(r.node, r.resource): r for r in e.allocatable}
    memory0 = rows[(0, "memory")]
    assert (memory0.total, memory0.hugepages, memory0.reserved) == (4 * GI, 512 * MI, 100 * MI)
    assert memory0.allocatable == node.allocatable()[0]["memory"] == 4 * GI - 512 * MI - 100 * MI and memory0.adds_up
    assert rows[(1, "hugepages-2Mi")].allocatable == 512 * MI
    from memorymanager.explain.text import explanation_lines

    text = "\n".join(explanation_lines(e))
    assert "node 0: memory 4Gi - 512Mi - 100Mi = 3484Mi; hugepages-2Mi 512Mi - 0 = 512Mi" in text
