"""Parity cases from kubelet v1.37's TestStaticPolicyAllocatePod and TestValidatePodScopeResources (KEP-5526,
gates PodLevelResources and PodLevelResourceManagers): one pod-level CPU set split into exclusive sets and a
pod shared pool, and the budgets refused. Pods and expected sets are kubelet's; names are ours."""
import dataclasses

import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGates
from kubeinputs.pod import parse_pod
from cpumanager.errors import CPUManagerError
from cpumanager.policy_static import EmptyPodSharedPoolError, new_policy_static
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore, state_with

GATES = {"PodLevelResources": True, "PodLevelResourceManagers": True}


def s(text):
    return CPUSet.parse(text)


def container(name, cpu=None, sidecar=False, limit=None):
    """A container with 50Mi of memory and, when given, this cpu request (limit = request unless given)."""
    res = {"requests": {"memory": "50Mi"}, "limits": {"memory": "50Mi"}}
    if cpu is not None:
        res["requests"]["cpu"] = cpu
        res["limits"]["cpu"] = limit or cpu
    return {"name": name, "resources": res, **({"restartPolicy": "Always"} if sidecar else {})}


def pod(uid, budget, init, app, budget_limit=None):
    """A pod with a pod-level cpu budget (requests = limits unless `budget_limit`) and 300Mi of memory. kubelet's
    table also has pods without app containers, which API validation refuses: such a pod is read with a
    placeholder app container that is then dropped, so the policy sees what kubelet's test gives it."""
    parsed = parse_pod({"metadata": {"name": uid, "uid": uid}, "spec": {
        "resources": {"requests": {"cpu": budget, "memory": "300Mi"},
                      "limits": {"cpu": budget_limit or budget, "memory": "300Mi"}},
        "initContainers": init, "containers": app or [container("placeholder")]}})
    return parsed if app else dataclasses.replace(parsed, containers=[])


ALLOCATE = [  # (name, pod, expected sets by container (None: refused), expected shared pool)
    ("a Guaranteed container under a 2-CPU budget", pod("pod1", "2", [], [container("container1", "1")]),
     {"container1": "2"}, "0-1,3-7,9-11"),
    ("a container without cpu takes the pod's pool", pod("gu-pod", "1", [], [container("ngu-container")]),
     {"ngu-container": "6"}, "0-5,7-11"),
    ("two exclusive containers and one on the pod pool", pod("gu-mix", "3", [], [
        container("gu-container-1", "1"), container("gu-container-2", "1"), container("ngu-container")]),
     {"gu-container-1": "6", "gu-container-2": "2", "ngu-container": "8"}, "0-1,3-5,7,9-11"),
    ("exclusive init containers reuse the CPUs of the app containers", pod("gu-init", "2", [
        container("gu-init-container-1", "1"), container("gu-init-container-2", "1")], [
        container("gu-container-1", "1"), container("gu-container-2", "1")]),
     {"gu-init-container-1": "2", "gu-init-container-2": "2", "gu-container-1": "2", "gu-container-2": "8"},
     "0-1,3-7,9-11"),
    ("an exclusive sidecar leaves the later init container's pool", pod("gu-side", "3", [
        container("ngu-init-container-1"), container("gu-init-restartable-2", "1", sidecar=True),
        container("ngu-init-container-3")], [container("gu-container-1", "1"), container("ngu-container-2")]),
     {"ngu-init-container-1": "2,6,8", "gu-init-restartable-2": "6", "ngu-init-container-3": "2,8",
      "gu-container-1": "2", "ngu-container-2": "8"}, "0-1,3-5,7,9-11"),
    ("a shared sidecar runs on the pool left by the app's exclusive CPUs", pod("ngu-side", "3", [
        container("ngu-init-container-1"), container("ngu-init-restartable-2", sidecar=True),
        container("ngu-init-container-3")], [container("gu-container-1", "1"), container("ngu-container-2")]),
     {"ngu-init-container-1": "2,6,8", "ngu-init-restartable-2": "2,8", "ngu-init-container-3": "2,6,8",
      "gu-container-1": "6", "ngu-container-2": "2,8"}, "0-1,3-5,7,9-11"),
    ("exclusive CPUs filling the budget leave no pool: refused", pod("gu-empty", "2", [], [
        container("gu-container-1", "1"), container("gu-container-2", "1"), container("ngu-container")]), None,
     "0-11"),
]


@pytest.mark.parametrize("name,pod_,expected,default", ALLOCATE, ids=[c[0] for c in ALLOCATE])
def test_allocate_pod(name, pod_, expected, default):
    p = new_policy_static(t.dual_socket_ht(), 1, s("0"), FakeStore(), {}, FeatureGates.from_config(GATES))
    state = state_with("0-11")
    if expected is None:
        with pytest.raises(EmptyPodSharedPoolError) as err:
            p.allocate_pod(state, pod_)
        assert str(err.value) == ("pod rejected, sum of exclusive container cpu requests equals pod budget, leaving "
                                  "no cpus for shared containers")
    else:
        p.allocate_pod(state, pod_)
        assert state.get_cpu_assignments() == {pod_.uid: {c: s(v) for c, v in expected.items()}}
    assert state.get_default_cpu_set() == s(default)


def test_a_burstable_pod_budget_gets_no_cpus():
    """A pod whose budget's request and limit differ is not Guaranteed: nothing is pinned."""
    pod_ = pod("ngu-pod", "1", [], [container("gu-container-1", "1")], budget_limit="2")
    p = new_policy_static(t.dual_socket_ht(), 1, s("0"), FakeStore(), {}, FeatureGates.from_config(GATES))
    state = state_with("0-11")
    p.allocate_pod(state, pod_)
    assert state.get_cpu_assignments() == {} and state.get_default_cpu_set() == s("0-11")


VALIDATE = [  # (name, budget, init containers, app containers, refused)
    ("budget above the exclusive containers, with shared ones", "4", [],
     [container("c1", "2"), container("c2")], False),
    ("only exclusive containers", "4", [], [container("c1", "2"), container("c2", "2")], False),
    ("only shared containers", "4", [], [container("c1"), container("c2")], False),
    ("exclusive containers fill the budget, a Burstable one beside", "6", [],
     [container("c1", "3"), container("c2", "2"), container("c3", "500m", limit="1000m"), container("c4")], False),
    ("exclusive containers fill the budget, a shared one beside", "5", [],
     [container("c1", "3"), container("c2", "2"), container("c3")], True),
    ("an exclusive init container and an exclusive sidecar", "2",
     [container("init-container1", "1"), container("restartable-init-container1", "1", sidecar=True)],
     [container("container1")], False),
    ("init and app containers each take the whole budget", "2", [container("init-container1", "2")],
     [container("container1", "2")], False),
    ("a sidecar takes the budget before a shared init container", "2",
     [container("restartable-init-container1", "2", sidecar=True), container("init-container1")], [], True),
    ("a shared init container runs before the sidecar takes the budget", "2",
     [container("init-container1"), container("restartable-init-container1", "2", sidecar=True)], [], False),
    ("an exclusive sidecar fills the budget beside a shared sidecar", "2",
     [container("restartable-init-container1", "2", sidecar=True),
      container("restartable-init-container2", sidecar=True)], [], True),
    ("one exclusive sidecar and one exclusive app container", "2",
     [container("restartable-init-container1", "1", sidecar=True)], [container("container1", "1")], False),
]


@pytest.mark.parametrize("name,budget,init,app,refused", VALIDATE, ids=[c[0] for c in VALIDATE])
def test_validate_pod_scope_resources(name, budget, init, app, refused):
    p = new_policy_static(t.single_socket_ht(), 0, CPUSet(), FakeStore(), {}, FeatureGates.from_config(GATES))
    pod_ = pod("p", budget, init, app)
    if refused:
        with pytest.raises(CPUManagerError):
            p.validate_pod_scope_resources(pod_)
    else:
        p.validate_pod_scope_resources(pod_)
