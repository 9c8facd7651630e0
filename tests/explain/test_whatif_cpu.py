"""`--what-if` for refusals caused by CPUs or devices, with real values on the bundled CPU and device machines: each
mask's missing CPUs or devices, the removals of pods holding exclusive CPUs, the largest CPU request admitted now
(whole cores under full-pcpus-only), a restart with fewer reserved CPUs or without full-pcpus-only. Each answer is
checked here again on an independent public-API node, never by trusting part 6."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memorymanager
from kubeinputs.pod import parse_pod
from memorymanager.explain.build import explain_pod
from memorymanager.explain.text import explanation_lines
from memorymanager.explain.walk import walk_scenario
from memorymanager.runner.scenario import load_scenario
from tests.explain.helpers import ROOT

MACHINES = ROOT / "fixtures" / "machines"
# cpu-2s-ht: NUMA node 0 = CPUs 0-7,16-23; node 1 = CPUs 8-15,24-31 (core n: CPUs n and n+16)
STATIC = {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "topologyManagerPolicy": "single-numa-node"}


def _pod(name: str, cpu: str) -> dict:
    return {"metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}]}}


def _what_if(node: memorymanager.Node, raw: dict):
    if not node.simulated_node.running:
        node.start()
    e = explain_pod(node.simulated_node, parse_pod(raw), what_if=True)
    return e, e.what_if, "\n".join(explanation_lines(e))


def _fragmented() -> memorymanager.Node:
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), STATIC)
    assert node.admit(_pod("a", "12")).placements["app"].cpus == (1, 2, 3, 4, 5, 6, 17, 18, 19, 20, 21, 22)
    assert node.admit(_pod("b", "12")).admitted  # node 1 keeps 14,15,30,31
    return node


def test_cpu_refusal_shortfalls_removals_and_a_smaller_request() -> None:
    node = _fragmented()
    e, w, text = _what_if(node, _pod("c", "5"))
    assert e.decision.reason == "TopologyAffinityError"
    assert [(s.nodes, s.cpus, s.free, s.lacking, s.preferred_width) for s in w.cpu_shortfalls] == [
        ([1], 16, 4, 1, True), ([0], 16, 3, 2, True), ([0, 1], 32, 7, 0, False)]
    assert [(r.pods, r.freed_cpus) for r in w.removals] == [(("a",), "1-6,17-22"), (("b",), "8-13,24-29")]
    fit = w.smaller_cpus
    assert (fit.container, fit.requested, fit.cpus, fit.refused_above, fit.step) == ("app", 5, 4, 5, 1)
    assert fit.admission.placements["app"].cpus == (14, 15, 30, 31)
    assert w.cpu_settings == []  # one reserved CPU, no full-pcpus-only: no CPU manager setting to try
    assert "lacks 1 CPU(s) (4 free of 16)" in text
    assert "the largest CPU request of app admitted now: 4 CPU(s), asked 5" in text
    # checked independently: 4 CPUs are admitted on node 1, 5 are not; without a, 5 fit on node 0
    assert node.would_admit(_pod("c4", "4")).placements["app"].cpus == (14, 15, 30, 31)
    assert not node.would_admit(_pod("c5", "5")).admitted
    node.remove("a")
    assert node.would_admit(_pod("c", "5")).placements["app"].numa_nodes == (0,)


def test_smt_alignment_error_under_full_pcpus_only() -> None:
    config = {**STATIC, "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}
    node = memorymanager.Node(str(MACHINES / "cpu-1s-ht.json"), config)
    e, w, text = _what_if(node, _pod("odd", "3"))
    assert e.decision.reason == "SMTAlignmentError"
    assert "not a multiple of 2 CPUs per core" in w.cpu_note
    fit = w.smaller_cpus
    assert (fit.cpus, fit.step, fit.refused_above) == (2, 2, 3)
    [setting] = w.cpu_settings
    assert setting.fields == {"cpuManagerPolicyOptions": {}} and setting.admission.admitted
    assert len(setting.admission.placements["app"].cpus) == 3
    assert "without the CPU manager option full-pcpus-only" in text
    plain = memorymanager.Node(str(MACHINES / "cpu-1s-ht.json"), STATIC)  # the setting, independently
    assert plain.would_admit(_pod("odd", "3")).admitted


def test_reserving_fewer_cpus_admits_a_pod_that_needs_them() -> None:
    # cpu-1s-ht: 16 CPUs; 2 reserved (CPU 0 and its sibling 8) leave 14 free; 15 are asked
    node = memorymanager.Node(str(MACHINES / "cpu-1s-ht.json"), {**STATIC, "systemReserved": {"cpu": "2"}})
    e, w, text = _what_if(node, _pod("big", "15"))
    assert not e.decision.admitted
    [setting] = w.cpu_settings
    assert setting.fields == {"reservedSystemCPUs": "0"} and setting.admission.admitted
    assert "reserving CPU 0 only (now 2 reserved: 0,8)" in text
    assert w.smaller_cpus.cpus == 14
    fewer = memorymanager.Node(str(MACHINES / "cpu-1s-ht.json"), {**STATIC, "reservedSystemCPUs": "0"})
    assert fewer.would_admit(_pod("big", "15")).admitted


def test_device_refusal_names_the_devices_each_mask_lacks() -> None:
    path = ROOT / "fixtures/scenarios/devices/006-unhealthy-width-restricted-rejects.yaml"
    view = walk_scenario(load_scenario(str(path)), what_if=True)
    [w] = [s.explanation.what_if for s in view.steps if s.explanation is not None and not s.explanation.decision.admitted]
    assert [(s.resource, s.nodes, s.devices, s.free, s.lacking, s.preferred_width) for s in w.device_shortfalls] == [
        ("nvidia.com/gpu", [0], 2, 1, 1, True), ("nvidia.com/gpu", [0, 1], 3, 2, 0, False)]
    assert any(t.policy == "best-effort" and t.admission.admitted for t in w.settings)
    [fit] = w.smaller_devices  # one GPU fits node 0 (its other GPU is unhealthy)
    assert (fit.resource, fit.requested, fit.devices, fit.refused_above) == ("nvidia.com/gpu", 2, 1, 2)
    assert fit.admission.placements["c"].devices == {"nvidia.com/gpu": ("g1",)}


def test_admitted_pod_headroom_counts_cpus() -> None:
    node = _fragmented()
    _, w, text = _what_if(node, _pod("d", "2"))
    assert w.admitted
    # packed on the fuller node 0: the whole core 7,23
    assert [(r.node, r.free, r.exclusive) for r in w.cpu_headroom] == [(0, "16", "1-7,17-23"), (1, "14-15,30-31",
                                                                                              "8-13,24-29")]
    assert "node 0: 1 CPU(s) free for exclusive requests (16); 14 held exclusively, 1 reserved" in text


def test_public_api_largest_cpu_request() -> None:
    node = _fragmented()
    fit = node.largest_cpu_request(_pod("c", "5"))
    assert (fit.cpus, fit.refused_above, fit.admission.placements["app"].numa_nodes) == (4, 5, (1,))
    assert node.would_admit(_pod("c", "4")).admitted and not node.would_admit(_pod("c", "5")).admitted
    with pytest.raises(memorymanager.NodeError, match="no container asks for exclusive CPUs"):
        node.largest_cpu_request(_pod("shared", "500m"))
    with pytest.raises(memorymanager.NodeError, match="has no container 'db'"):
        node.largest_cpu_request(_pod("c", "5"), "db")


def test_memory_only_none_policy_text_keeps_no_part_6() -> None:
    """A node pinning nothing (memory policy None, no CPU manager, no device) prints no part 6, as before the CPU
    and device what-ifs; with the static CPU policy the CPUs decide, and part 6 is printed."""
    from memorymanager.explain.text import step_lines

    view = walk_scenario(load_scenario(str(ROOT / "fixtures/scenarios/memory/013-none-policy.yaml")), what_if=True)
    assert not any("6. " in line for s in view.steps for line in step_lines(s))
    node = _fragmented()
    assert "6. What would make it fit" in _what_if(node, _pod("c", "5"))[2]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(held=st.lists(st.integers(1, 6), max_size=4), asked=st.integers(2, 16),
       full_cores=st.booleans())
def test_largest_cpu_request_is_admitted_and_the_next_is_not(held, asked, full_cores) -> None:
    """Whatever the node holds, the answer is admitted and the count above it refused, each checked independently;
    under full-pcpus-only the answer is a whole number of cores."""
    options = {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}} if full_cores else {}
    node = memorymanager.Node(str(MACHINES / "cpu-1s-ht.json"), {**STATIC, **options})
    for i, cpus in enumerate(held):
        node.admit(_pod(f"h{i}", str(cpus)))
    if node.would_admit(_pod("x", str(asked))).admitted:
        return
    fit = node.largest_cpu_request(_pod("x", str(asked)))
    if fit is None:
        step = 2 if full_cores else 1
        assert not any(node.would_admit(_pod("x", str(n))).admitted for n in range(step, asked, step))
        return
    assert fit.cpus < asked and (not full_cores or fit.cpus % 2 == 0)
    assert node.would_admit(_pod("x", str(fit.cpus))).admitted
    assert not node.would_admit(_pod("x", str(fit.refused_above))).admitted


def test_full_pcpus_only_headroom_counts_only_whole_free_cores() -> None:
    """Tutorial 010 after `even` (CPUs 1-2,17-18): CPU 16 is free but its sibling 0 is reserved, so under
    full-pcpus-only kubelet cannot hand it out; node 0 has 10 CPUs for exclusive requests, not 11."""
    view = walk_scenario(load_scenario(str(ROOT / "fixtures/scenarios/tutorial/010-full-pcpus-only.yaml")), 1,
                         what_if=True)
    [e] = [s.explanation for s in view.steps if s.explanation is not None]
    rows = e.what_if.cpu_headroom
    assert [(r.node, r.free, r.takeable) for r in rows] == [(0, "3-7,16,19-23", "3-7,19-23"),
                                                          (1, "8-15,24-31", "8-15,24-31")]
    text = "\n".join(explanation_lines(e))
    assert ("node 0: 10 CPU(s) free for exclusive requests (3-7,19-23); 4 held exclusively, 1 reserved, 1\n"
            "         free but not in a whole free core (16: full-pcpus-only)") in text


def test_full_pcpus_only_headroom_leaves_out_a_cpu_whose_sibling_is_held(tmp_path) -> None:
    """Two 1-CPU containers pinned before full-pcpus-only was turned on hold CPUs 16 and 1; after a restart with
    the option, CPU 17 is free but its sibling 1 is held. The count matches what the CPU manager then admits:
    every takeable CPU of the machine (28) in one pod is admitted, 30 are refused."""
    from memorymanager.node.whatif import restarted_with

    config = dict(STATIC, topologyManagerPolicy="none")
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), config)
    pods = [_pod("one", "1"), _pod("uno", "1")]
    assert [node.admit(p).placements["app"].cpus for p in pods] == [(16,), (1,)]
    restarted = restarted_with(node.simulated_node, {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
                               str(tmp_path))
    restarted.assume_running([parse_pod(p) for p in pods])
    e = explain_pod(restarted, parse_pod(_pod("two", "2")), what_if=True)
    w, text = e.what_if, "\n".join(explanation_lines(e))
    assert w.admitted
    assert [(r.free, r.takeable) for r in w.cpu_headroom] == [("3-7,17,19-23", "3-7,19-23"),
                                                              ("8-15,24-31", "8-15,24-31")]
    assert "1 free but not in a whole free core (17: full-pcpus-only)" in " ".join(text.split())
    before = explain_pod(restarted, parse_pod(_pod("none", "0")), what_if=False)  # the node as it is now
    takeable = sum(_size(r.takeable) for r in before.cpu_nodes)
    assert takeable == 28  # 2-7,18-23 on node 0, all 16 of node 1
    for cpus, admitted in ((takeable, True), (takeable + 2, False)):
        trial = restarted.fork()
        assert trial.admit(parse_pod(_pod("big", str(cpus)))).admit is admitted, cpus


def _size(cpus: str) -> int:
    """The CPUs of a cpuset string."""
    from kubeinputs.cpuset import CPUSet

    return CPUSet.parse(cpus).size() if cpus else 0


def _tutorial(name: str, step: int):
    """The explanation of one step of a tutorial scenario, with part 6, and its text with lines joined."""
    view = walk_scenario(load_scenario(str(ROOT / "fixtures/scenarios/tutorial" / name)), step, what_if=True)
    [e] = [s.explanation for s in view.steps if s.explanation is not None]
    return e, " ".join("\n".join(explanation_lines(e)).split())


def test_cross_manager_mismatch_names_where_each_provider_fits() -> None:
    """Tutorial 009 `web`: CPUs fit only on node 0, memory only on node 1; memory does not limit it, and the
    policies that admit it put memory and CPUs on different nodes, which each placement says."""
    e, text = _tutorial("009-cpus-on-one-node-memory-on-the-other.yaml", 2)
    assert e.what_if.limited_by == []
    assert "CPUs fit app only on node 0, memory only on node 1: no mask suits every provider as preferred" in text
    assert "memory is not what keeps it out" not in text
    assert ("topology manager policy none, scope container: admitted: app's memory on node 1, CPUs 2-3,18-19 on "
            "node 0") in text
    # same node for both: the short form
    assert "removing compute (frees memory 1Gi on node 1; CPUs 8-15,24-31): admitted: app on node 1, CPUs 8-9,24-25" \
        in text
    assert ("the largest memory request admitted now (CPUs and devices as asked): app memory 1948Mi: admitted: app "
            "on node 0, CPUs 2-3,18-19; app memory 1949Mi is refused") in text
    [none] = [t for t in e.what_if.settings if t.policy == "none"]
    placement = none.admission.placements["app"]
    assert (placement.cpuset_mems, placement.cpu_numa_nodes) == ("1", (0,))


def test_cpu_refusal_says_memory_is_not_the_limit() -> None:
    """Tutorial 010 `odd` (SMTAlignmentError): no smaller memory request helps, and the line says the CPUs refused."""
    e, text = _tutorial("010-full-pcpus-only.yaml", 0)
    assert e.what_if.limited_by == ["cpu"] and e.what_if.largest is None
    assert ("a smaller memory request does not help: none is admitted now (3 sizes checked); memory is not the "
            "limiting resource, the CPUs refused it") in text
    assert "the largest request of this shape" not in text


def test_device_refusal_names_the_device_as_the_limit() -> None:
    path = ROOT / "fixtures/scenarios/devices/006-unhealthy-width-restricted-rejects.yaml"
    view = walk_scenario(load_scenario(str(path)), what_if=True)
    [w] = [s.explanation.what_if for s in view.steps if s.explanation is not None and not s.explanation.decision.admitted]
    assert w.limited_by == ["nvidia.com/gpu"]
