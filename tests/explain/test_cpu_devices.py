"""explain on nodes with the CPU and device managers: providers named by their events, the CPU part (free CPUs
per NUMA mask, the narrowest-width rule, the CPUs taken stage by stage, SMTAlignmentError) and the device part
(devices, masks over their NUMA nodes, picks), with real values on the bundled machines."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memorymanager
from kubeinputs.cpuset import CPUSet
from kubeinputs.pod import parse_pod
from memorymanager.explain.build import explain_pod
from memorymanager.explain.text import explanation_lines
from memorymanager.node.simulated_node import FixedHintProvider
from tests.explain.helpers import ROOT
from topologymanager.hint import TopologyHint

MACHINES = ROOT / "fixtures" / "machines"
# cpu-2s-ht: NUMA node 0 = socket 0 = CPUs 0-7,16-23; node 1 = CPUs 8-15,24-31 (core n: CPUs n and n+16)
STATIC = {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "topologyManagerPolicy": "single-numa-node"}


def _pod(name: str, cpu: str, extra: dict | None = None, memory: str = "1Gi") -> dict:
    limits = {"cpu": cpu, "memory": memory, **(extra or {})}
    return {"metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}}


def _explain(node: memorymanager.Node, raw: dict, extra: FixedHintProvider | None = None):
    if not node.simulated_node.running:
        node.start()  # a Node starts on first use; explain asks the simulated node directly
    return explain_pod(node.simulated_node, parse_pod(raw), extra)


def _rows(part) -> dict:
    return {tuple(r.nodes): (r.cpus, r.free, r.hint, r.preferred) for r in part.masks}


@pytest.fixture(scope="module")
def two_sockets() -> memorymanager.Node:
    """cpu-2s-ht with 12 CPUs taken on node 0 by pod a (CPU 0 reserved)."""
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), STATIC)
    assert node.admit(_pod("a", "12")).placements["app"].cpus == (1, 2, 3, 4, 5, 6, 17, 18, 19, 20, 21, 22)
    return node


def test_cpu_hints_per_mask_and_cpus_taken_by_stage(two_sockets) -> None:
    e = _explain(two_sockets, _pod("b", "8"))
    assert e.cpu_policy == "static"
    assert [(r.node, r.free, r.reserved, r.exclusive) for r in e.cpu_nodes] == [
        (0, "7,16,23", "0", "1-6,17-22"), (1, "8-15,24-31", "", "")]
    [part] = e.cpu_hints
    assert (part.path, part.requested, part.available, part.min_affinity_size) == ("calculated", 8, "7-16,23-31", 1)
    assert _rows(part) == {(0,): (16, 3, False, False), (1,): (16, 16, True, True), (0, 1): (32, 19, True, False)}
    assert part.hints == [{"numaAffinity": [1], "preferred": True}, {"numaAffinity": [0, 1], "preferred": False}]
    assert part.consistent
    [alloc] = e.cpu_allocation
    assert (alloc.affinity, alloc.cpus, alloc.aligned_free) == ([1], "8-11,24-27", "8-15,24-31")
    assert [(s.phase, s.stage, s.cpus) for s in alloc.steps] == [("aligned", "whole cores", "8-11,24-27")]
    assert alloc.consistent
    text = "\n".join(explanation_lines(e))
    assert "2b. The CPU manager's hints" in text and "too few free CPUs: 3 of 8" in text
    assert "whole cores from the hint's CPUs: 8-11,24-27" in text


def test_a_request_wider_than_a_numa_node_is_refused_with_the_cpu_reason(two_sockets) -> None:
    e = _explain(two_sockets, _pod("wide", "20"))
    [part] = e.cpu_hints
    assert part.min_affinity_size == 2
    assert _rows(part) == {(0,): (16, 3, False, False), (1,): (16, 16, False, False), (0, 1): (32, 19, False, False)}
    assert e.decision.reason == "TopologyAffinityError"
    assert "CPU manager cpu offers no preferred hint" in e.decision.why
    assert e.cpu_allocation == []  # refused before Allocate


def test_whole_numa_node_stage_on_one_socket() -> None:
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), {**STATIC, "topologyManagerPolicy": "restricted"})
    e = _explain(node, _pod("half", "16"))
    [alloc] = e.cpu_allocation
    # node 0 lost CPU 0 to the reservation, so only node 1 is a whole free NUMA node
    assert (alloc.affinity, alloc.cpus) == ([1], "8-15,24-31")
    assert [(s.stage, s.cpus) for s in alloc.steps] == [("whole NUMA nodes", "8-15,24-31")]


def test_smt_alignment_error_is_explained() -> None:
    node = memorymanager.Node(str(MACHINES / "cpu-1s-ht.json"),
                              {**STATIC, "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
                               "topologyManagerPolicy": "none"})
    e = _explain(node, _pod("odd", "3"))
    assert e.decision.reason == "SMTAlignmentError"
    [alloc] = e.cpu_allocation
    assert alloc.reason == "SMTAlignmentError"
    assert alloc.note == "full-pcpus-only takes whole cores only: 3 CPUs is not a multiple of 2 CPUs per core"
    assert "the CPU manager's Allocate refused app" in e.decision.why


def test_smt_alignment_error_for_too_few_physical_cpus() -> None:
    from tests.explain.helpers import walk

    view = walk("cpu/059-full-pcpus-only-not-enough-physical-cpus.yaml")
    refused = [s.explanation for s in view.steps if s.explanation and s.explanation.decision
               and s.explanation.decision.reason == "SMTAlignmentError"]
    [alloc] = refused[0].cpu_allocation
    assert alloc.note.startswith("full-pcpus-only: 14 CPUs asked, but the shared pool less every core holding a "
                                 "reserved CPU")
    assert alloc.note.endswith("has only 12")


def test_providers_are_named_by_their_events_not_their_positions() -> None:
    """On a CPU node the first list is the CPU manager's; hand-written hints come last, named as such."""
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), {**STATIC, "memoryManagerPolicy": "Static",
                              "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    extra = FixedHintProvider({"app": {"example.com/x": [TopologyHint(0b10, True)]}})
    e = _explain(node, _pod("p", "2"), extra)
    assert [(pl.provider, pl.resource) for pl in e.merges[0].lists] == [
        ("CPU manager", "cpu"), ("memory manager", "memory"), ("hand-written hints (providers)", "example.com/x")]
    plain = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), {"topologyManagerPolicy": "restricted"})
    e = _explain(plain, _pod("q", "2"), extra)
    assert [pl.provider for pl in e.merges[0].lists] == ["memory manager", "hand-written hints (providers)"]


def test_device_hints_over_device_numa_nodes_and_picks() -> None:
    devices = {"example.com/gpu": [{"id": "g0", "numaNodes": [0]}, {"id": "g1", "numaNodes": [0]},
                                   {"id": "g2", "numaNodes": [1], "healthy": False}, {"id": "g3"}]}
    node = memorymanager.Node(str(MACHINES / "dev-dual-socket-2x8.json"), STATIC, devices=devices)
    e = _explain(node, _pod("g", "2", {"example.com/gpu": "2"}))
    [inv] = e.devices
    assert [(d.id, d.numa_nodes, d.state) for d in inv.devices] == [
        ("g0", [0], "free"), ("g1", [0], "free"), ("g2", [1], "unhealthy"), ("g3", None, "free")]
    [part] = e.device_hints
    assert (part.path, part.device_nodes, part.min_affinity_size) == ("calculated", [0, 1], 1)
    assert {tuple(r.nodes): (r.devices, r.free, r.hint, r.preferred) for r in part.masks} == {
        (0,): (2, 2, True, True), (1,): (1, 0, False, False), (0, 1): (3, 2, True, False)}
    assert part.consistent
    assert [(pl.provider, pl.resource) for pl in e.merges[0].lists] == [
        ("device manager", "example.com/gpu"), ("CPU manager", "cpu"), ("memory manager", "(no preference)")]
    [alloc] = e.device_allocation
    assert alloc.affinity == [0]
    assert [(p.id, p.why) for p in alloc.picks] == [("g0", "aligned: on the merged hint's NUMA nodes"),
                                                     ("g1", "aligned: on the merged hint's NUMA nodes")]
    # once it runs, no NUMA node has two healthy free GPUs: a second pod asking 2 finds too few
    node.admit(_pod("g", "2", {"example.com/gpu": "2"}))
    e = _explain(node, _pod("h", "2", {"example.com/gpu": "2"}))
    [part] = e.device_hints
    assert (part.path, part.hints) == ("too-few", [])
    assert e.decision.reason == "TopologyAffinityError"
    assert "device manager example.com/gpu offers no preferred hint" in e.decision.why


OPTIONS = [{}, {"full-pcpus-only": "true"}, {"distribute-cpus-across-numa": "true"},
           {"align-by-socket": "true"}]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 9), min_size=1, max_size=5), st.sampled_from(OPTIONS),
       st.sampled_from(["best-effort", "restricted"]))
def test_cpu_part_agrees_with_the_cpu_manager(requests, options, policy) -> None:
    """Whatever the pods before, the CPU part's recomputed hints equal the manager's and the CPUs re-derived
    stage by stage are exactly the ones Allocate took (cpu-2s-ht)."""
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"),
                              {**STATIC, "topologyManagerPolicy": policy, "cpuManagerPolicyOptions": options,
                               "featureGates": {"CPUManagerPolicyAlphaOptions": True}})
    for i, cpus in enumerate(requests):
        e = _explain(node, _pod(f"p{i}", str(cpus * 2)))
        assert all(h.consistent for h in e.cpu_hints), (requests, options)
        assert all(a.consistent for a in e.cpu_allocation), (requests, options)
        taken = [a for a in e.cpu_allocation if a.cpus]
        if taken:
            assert sum(len(CPUSet.parse(s.cpus).list()) for s in taken[0].steps) == cpus * 2
        node.admit(_pod(f"p{i}", str(cpus * 2)))


def _scenario_text(path: str, step: int):
    """One step's explanation of a bundled scenario and its text."""
    from memorymanager.explain.walk import walk_scenario
    from memorymanager.runner.scenario import load_scenario

    view = walk_scenario(load_scenario(str(ROOT / "fixtures/scenarios" / path)), step)
    [e] = [s.explanation for s in view.steps if s.explanation is not None]
    return e, "\n".join(explanation_lines(e))


def test_part_1_names_the_cpu_manager_and_each_cpu_and_device_request() -> None:
    e, text = _scenario_text("tutorial/011-gpu-cpus-and-memory-on-one-node.yaml", 0)
    assert ("   memory manager Static, topology manager single-numa-node, scope container; CPU manager static\n"
            "   app (app): memory 4Gi; cpu 2, exclusive (Guaranteed with an integer CPU count); nvidia.com/gpu 1\n"
            "2. The memory manager's hints") in text
    [ask] = e.asked.containers
    assert (ask.cpu, ask.exclusive_cpus, ask.devices) == ("2", 2, {"nvidia.com/gpu": 1})
    _, text = _scenario_text("tutorial/010-full-pcpus-only.yaml", 0)
    assert "scope container; CPU manager static\n       (full-pcpus-only=true)\n" in text
    # a fractional request of a Guaranteed pod stays in the shared pool, and part 1 says why
    e, text = _scenario_text("cpu/021-fractional-guaranteed-is-shared.yaml", 0)
    assert "c1 (app): no memory; cpu 1500m, shared pool (not an integer CPU count)" in text
    assert e.asked.containers[0].exclusive_cpus == 0


def test_part_1_of_a_memory_only_node_is_as_before() -> None:
    e, text = _scenario_text("tutorial/001-single-node-fit.yaml", 0)
    part_1 = text.split("2. The memory")[0]
    assert part_1.endswith("   memory manager Static, topology manager single-numa-node, scope container\n"
                           "   app (app): memory 2Gi\n")
    assert all(a.cpu is None and a.devices is None for a in e.asked.containers)


def test_part_5_puts_memory_under_its_heading() -> None:
    """An SMTAlignmentError: the memory heading says nothing was allocated, the machine state sits under it."""
    _, text = _scenario_text("tutorial/010-full-pcpus-only.yaml", 0)
    assert ("   memory: nothing allocated (the pod was refused)\n"
            "     machine state:\n"
            "       node resource ") in text
    assert "\n   nothing allocated" not in text
    _, text = _scenario_text("tutorial/010-full-pcpus-only.yaml", 1)
    assert ("   memory:\n     app: nodes 0, cpuset.mems 0; took 1Gi memory from node 0\n"
            "     after the containers are created, they hold: app: memory 1Gi on 0\n     machine state:\n") in text


def test_part_1_in_pod_scope_with_the_static_memory_policy() -> None:
    """The pod row counts podGuaranteedCPUs (max of the app containers' 2 and the init container's 3); a
    fractional container says once that it stays in the shared pool."""
    config = {**STATIC, "topologyManagerScope": "pod", "memoryManagerPolicy": "Static",
              "kubeReserved": {"memory": "100Mi"}, "reservedMemory": [{"numaNode": 0, "limits": {"memory": "200Mi"}}]}
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), config)
    node.start()
    limits = [{"cpu": "3", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}, {"cpu": "500m", "memory": "1Gi"}]
    pod = {"metadata": {"name": "p", "uid": "uid-p"}, "spec": {
        "initContainers": [{"name": "i", "resources": {"limits": limits[0]}}],
        "containers": [{"name": "a", "resources": {"limits": limits[1]}},
                       {"name": "b", "resources": {"limits": limits[2]}}]}}
    e = explain_pod(node.simulated_node, parse_pod(pod))
    text = "\n".join(explanation_lines(e))
    assert "   b (app): memory 1Gi; cpu 500m, shared pool (not an integer CPU count)\n" in text
    assert "   pod (pod): memory 2Gi; cpu 3, exclusive (Guaranteed with an integer CPU count) - per resource" in text
    assert [(a.name, a.exclusive_cpus) for a in e.asked.containers] == [("i", 3), ("a", 2), ("b", 0), ("pod", 3)]
