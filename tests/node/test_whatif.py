"""What-ifs: every answer is checked here by making the suggested change on a real node and admitting
the pod (never by trusting the what-if), on the tutorial's two-node machine."""
from __future__ import annotations

import pytest

import memorymanager
from kubeinputs.pod import parse_pod
from memorymanager.node import whatif
from tests.explain.helpers import ROOT

MI, GI = 1 << 20, 1 << 30
MACHINE = str(ROOT / "fixtures" / "machines" / "two-nodes.json")
RESERVED = [{"numaNode": 0, "limits": {"memory": "100Mi"}}]


def pod(name, memory, **more):
    limits = {"cpu": "1", "memory": memory, **more}
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}}


def node(policy="single-numa-node", state_dir=None, machine=MACHINE, **more):
    return memorymanager.Node(machine, {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
                                        "reservedMemory": RESERVED, **more}, state_dir=state_dir)


def two_single_pods(state_dir=None, policy="single-numa-node"):
    """a (2Gi) on node 0, b (3Gi) on node 1: a 3Gi pod fits nowhere (1948Mi and 1Gi free)."""
    n = node(policy, state_dir)
    assert n.admit(pod("a", "2Gi")).placements["app"].numa_nodes == (0,)
    assert n.admit(pod("b", "3Gi")).placements["app"].numa_nodes == (1,)
    assert not n.would_admit(pod("c", "3Gi")).admitted
    return n


def test_removals_fewest_pods_first_each_checked_by_removing_for_real() -> None:
    n = two_single_pods()
    search = whatif.removals_that_admit(n.simulated_node, parse_pod(pod("c", "3Gi")))
    assert [fix.pods for fix in search.fixes] == [("a",), ("b",)]  # one pod each, the smaller first
    assert search.fixes[0].freed == {0: {"memory": 2 * GI}} and search.fixes[1].freed == {1: {"memory": 3 * GI}}
    for fix in search.fixes:
        real = two_single_pods()
        real.remove(fix.pods[0])
        answer = real.admit(pod("c", "3Gi"))
        assert answer.admitted and answer == fix.admission  # where the what-if said, exactly
    assert search.checks <= 3 and not search.exhausted


def test_no_removal_helps_when_the_other_provider_decides() -> None:
    n = node("restricted")
    n.admit(pod("a", "1Gi"))
    cpu = {"app": {"cpu": [{"numaAffinity": [0, 1], "preferred": True}]}}
    from memorymanager.node.api import hint_provider

    wide = parse_pod(pod("wide", "1Gi"))
    search = whatif.removals_that_admit(n.simulated_node, wide, hint_provider(wide, cpu, "container"))
    assert search.fixes == () and "does not help" in search.note and search.checks == 1
    n.remove("a")  # checked: even on an empty node it is refused
    assert not n.would_admit(wide, hints=cpu).admitted


def test_other_settings_each_checked_by_restarting_for_real(tmp_path) -> None:
    n = node("restricted", tmp_path / "n")
    assert n.admit(pod("big", "6Gi")).placements["app"].numa_nodes == (0, 1)  # the group [0,1]
    small = pod("small", "1Gi")
    assert n.would_admit(small).reason == "TopologyAffinityError"
    tries = {(t.policy, t.scope): t for t in whatif.other_settings(n.simulated_node, parse_pod(small))}
    assert ("restricted", "container") not in tries and len(tries) == 6
    admitted = {key for key, t in tries.items() if t.admission and t.admission.admitted}
    assert admitted == {("best-effort", "container"), ("best-effort", "pod"), ("none", "container")}
    for policy, scope in sorted(admitted):
        n.restart(topologyManagerPolicy=policy, topologyManagerScope=scope)
        assert n.would_admit(small) == tries[(policy, scope)].admission
    n.restart(topologyManagerPolicy="single-numa-node", topologyManagerScope="container")
    assert not n.would_admit(small).admitted and not tries[("single-numa-node", "container")].admission.admitted


def test_largest_request_of_the_same_shape_is_admitted_and_one_step_more_is_not() -> None:
    n = two_single_pods()
    fit = n.largest_admissible(pod("c", "3Gi"))
    assert fit.requests == {"app": {"memory": 1948 * MI}} and fit.refused_above == {"app": {"memory": 1949 * MI}}
    assert fit.admission.admitted and fit.checks <= whatif.MAX_CHECKS
    assert n.would_admit(pod("c", "1948Mi")) == fit.admission
    assert not n.would_admit(pod("c", "1949Mi")).admitted
    assert n.admit(pod("c", "1948Mi")).admitted


def test_largest_keeps_the_shape_of_memory_and_hugepages() -> None:
    machine = memorymanager.synthetic_machine(2, 4 * GI, hugepages_2mi=256)  # 512Mi of 2Mi pages per node
    n = node("single-numa-node", machine=machine)
    assert n.admit(pod("a", "1Gi", **{"hugepages-2Mi": "300Mi"})).admitted
    asked = pod("b", "2Gi", **{"hugepages-2Mi": "400Mi"})  # only node 1 has 400Mi of pages, 212Mi on node 0
    fit = n.largest_admissible(asked)
    assert fit is not None and fit.admission.admitted
    got, above = fit.requests["app"], fit.refused_above["app"]
    assert got["hugepages-2Mi"] % (2 * MI) == 0 and got["memory"] % MI == 0
    assert got["memory"] * 400 // 2048 // (2 * MI) * (2 * MI) == got["hugepages-2Mi"]  # one factor for both
    assert n.would_admit(pod("b", f"{got['memory']}", **{"hugepages-2Mi": f"{got['hugepages-2Mi']}"})).admitted
    assert not n.would_admit(pod("b", f"{above['memory']}", **{"hugepages-2Mi": f"{above['hugepages-2Mi']}"})).admitted
    assert n.would_admit(asked).admitted == (got["memory"] >= 2 * GI)


def test_no_size_fits_a_node_whose_free_memory_sits_in_a_group() -> None:
    n = node("restricted")
    n.admit(pod("big", "6Gi"))
    assert n.largest_admissible(pod("small", "1Gi")) is None  # narrow: not preferred; wide: no free memory
    for size in ("1Mi", "1Gi", "1948Mi", "4097Mi"):
        assert not n.would_admit(pod("small", size)).admitted


def test_headroom_per_numa_node() -> None:
    n = node("best-effort")
    n.admit(pod("a", "2Gi"))
    room = n.headroom()
    assert room[0].free == n.free()[0] == {"memory": 1948 * MI} and room[0].usable_alone
    assert room[1].allocatable == {"memory": 4 * GI} and room[1].cells == (1,)
    n.remove("a")
    n.admit(pod("big", "6Gi"))
    room = n.headroom()
    assert not room[0].usable_alone and room[1].cells == (0, 1) and room[1].group_free == {"memory": 1948 * MI}


def test_api_arguments_are_checked() -> None:
    n = node()
    with pytest.raises(memorymanager.InputError):
        n.largest_admissible(42)
    with pytest.raises(memorymanager.InputError):
        n.largest_admissible(pod("c", "1Gi"), hints=["not", "a", "map"])
    with pytest.raises(memorymanager.NodeError, match="Burstable"):
        n.largest_admissible({"metadata": {"name": "b"}, "spec": {"containers": [
            {"name": "app", "resources": {"requests": {"memory": "1Gi"}}}]}})
    assert memorymanager.NodeHeadroom is whatif.NodeHeadroom and memorymanager.LargestFit is whatif.LargestFit


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SIZES = st.sampled_from(["512Mi", "1Gi", "1536Mi", "2Gi", "3Gi", "5Gi"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=st.sampled_from(["single-numa-node", "restricted", "best-effort"]),
       admitted=st.lists(SIZES, min_size=1, max_size=4), asked=SIZES)
def test_every_what_if_answer_holds_when_made_for_real(policy, admitted, asked) -> None:
    """Whatever the node holds, each removal the search reports admits the pod once those pods are really
    removed, and the largest request of the shape is admitted while the next one up is refused."""
    def fresh():
        n = node(policy)
        for i, size in enumerate(admitted):
            n.admit(pod(f"p{i}", size))
        return n

    n = fresh()
    target = pod("asked", asked)
    if n.would_admit(target).admitted:
        return
    search = whatif.removals_that_admit(n.simulated_node, parse_pod(target))
    assert [len(f.pods) for f in search.fixes] == sorted(len(f.pods) for f in search.fixes)
    for fix in search.fixes:
        real = fresh()
        for name in fix.pods:
            real.remove(name)
        assert real.admit(target) == fix.admission and fix.admission.admitted
    fit = n.largest_admissible(target)
    if fit is not None:
        assert n.would_admit(pod("asked", str(fit.requests["app"]["memory"]))) == fit.admission
        if fit.refused_above is not None:
            assert not n.would_admit(pod("asked", str(fit.refused_above["app"]["memory"]))).admitted
