"""Parity cases from kubelet v1.37's topology_hints_test.go: container and pod hints of the static policy on
the 12-CPU cadvisor machine (hints regenerated from held CPUs), the pod's guaranteed CPU count, and pod hints
under align-by-socket. Machines, requests and expected hints are kubelet's; names are ours."""
import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGates
from kubeinputs.pod import parse_pod
from topologymanager.hint import TopologyHint
from cpumanager.policy_static import new_policy_static
from cpumanager.requests import pod_guaranteed_cpus
from cpumanager.topology import discover
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore, cadvisor_core, cadvisor_machine, make_pod, state_with


def H(nodes, preferred):
    return TopologyHint.of(nodes, preferred)


def machine_topology():
    """kubelet's returnMachineInfo: NUMA node = socket; node 0 cores (0,6), (1,7), (2,8), node 1 (3,9), (4,10), (5,11)."""
    return discover(cadvisor_machine({n: [cadvisor_core(c, [3 * n + c, 3 * n + c + 6], n) for c in range(3)]
                                      for n in (0, 1)}, 12))


def ordered(hints):
    return sorted(hints, key=lambda h: (not h.preferred, h.numa_node_affinity.bit_count(), h.numa_node_affinity))


FREE = "2-11"
HINTS = [  # (name, request, default pool, CPUs the container already holds, expected hints)
    ("2 CPUs with 4 free on node 0 and 6 on node 1", "2", FREE, "", [H([0], True), H([1], True), H([0, 1], False)]),
    ("5 CPUs with 4 free on node 0 and 6 on node 1", "5", FREE, "", [H([1], True), H([0, 1], False)]),
    ("7 CPUs need both nodes", "7", FREE, "", [H([0, 1], True)]),
    ("11 CPUs with 10 free: no hint", "11", FREE, "", []),
    ("2 CPUs with one free on each node", "2", "0,3", "", [H([0, 1], False)]),
    ("more CPUs than free: no hint", "5", "0-3", "", []),
    ("held CPUs on node 0 regenerate its hint", "2", "", "0,6", [H([0], True), H([0, 1], False)]),
    ("held CPUs on node 1 regenerate its hint", "2", "", "3,9", [H([1], True), H([0, 1], False)]),
    ("held CPUs across nodes regenerate the cross-node hint", "11", "", "0-10", [H([0, 1], True)]),
    ("fewer CPUs requested than held: no hint", "2", "", "0,3,6,9", []),
    ("more CPUs requested than held: no hint", "11", "", "0,3,6,9", []),
]


def policy(topo, options=None):
    return new_policy_static(topo, 0, CPUSet(), FakeStore(), options or {},
                             FeatureGates.from_config({"CPUManagerPolicyAlphaOptions": True}))


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize("name,req,default,held,expected", HINTS, ids=[c[0] for c in HINTS])
def test_hints(scope, name, req, default, held, expected):
    p = policy(machine_topology())
    state = state_with(default, {"fakePod": {"fake-container": held}} if held else {})
    pod = make_pod("fakePod", "fake-container", req, req)
    if scope == "container":
        got = p.get_topology_hints(state, pod, pod.containers[0])
    else:
        got = p.get_pod_topology_hints(state, pod)
    assert ordered(got["cpu"]) == ordered(expected)


def pod(init, app):
    """A Guaranteed-looking pod: init containers (cpu, sidecar) and app containers (cpu), requests = limits."""
    def res(cpu):
        return {"requests": {"cpu": cpu, "memory": "1G"}, "limits": {"cpu": cpu, "memory": "1G"}}
    return parse_pod({"metadata": {"name": "p", "uid": "p"}, "spec": {
        "initContainers": [{"name": f"init-{i}", "resources": res(c), **({"restartPolicy": "Always"} if side else {})}
                           for i, (c, side) in enumerate(init)],
        "containers": [{"name": f"app-{i}", "resources": res(c)} for i, c in enumerate(app)]}})


@pytest.mark.parametrize("init,app,expected", [
    ([("0", False)], ["0"], 0),
    ([("0", False)], ["2"], 0),
    ([("2", False)], ["0"], 0),
    ([("2", False)], ["2"], 2),
    ([("5", False)], ["5"], 5),
    ([("2", False)], ["5"], 5),
    ([("5", False)], ["2"], 5),
    ([("2", False), ("4", False)], ["2", "4"], 6),
    ([("1", True)], ["1"], 2),
    ([("5", False), ("1", True), ("2", True), ("3", True)], ["1"], 7),
    ([("5", False), ("1", True), ("2", True), ("5", False), ("3", True)], ["1"], 8),
    ([("10", True), ("200", False)], ["100"], 210),
], ids=["no cpu anywhere: not Guaranteed", "no cpu in the init container: not Guaranteed",
        "no cpu in the app container: not Guaranteed", "2 CPUs", "5 CPUs", "the app container's larger request",
        "the init container's larger request", "app containers add up", "a sidecar adds to the app container",
        "sidecars add up, the regular init container peaks alone",
        "a regular init container after sidecars peaks on top of them",
        "a sidecar, a large regular init container and an app container"])
def test_pod_guaranteed_cpus(init, app, expected):
    assert pod_guaranteed_cpus(pod(init, app), FeatureGates()) == expected


@pytest.mark.parametrize("align,req,default,expected", [
    ("false", "2", "2,3,11", [H([0], True)] + [H(m, False) for m in
                                                ([0, 1], [0, 2], [0, 3], [0, 1, 2], [0, 1, 3], [0, 2, 3], [0, 1, 2, 3])]),
    ("true", "2", "2,3,11", [H([0], True), H([0, 1], True)] + [H(m, False) for m in
                                                               ([0, 2], [0, 3], [0, 1, 2], [0, 1, 3], [0, 2, 3],
                                                                [0, 1, 2, 3])]),
    ("true", "41", "0-28,40-57", [H([0, 1, 2], True), H([0, 1, 2, 3], True)]),
], ids=["align-by-socket off: only the single node is preferred",
        "align-by-socket on: the node pair inside a socket is preferred too",
        "align-by-socket on: a request needing both sockets"])
def test_pod_hints_with_align_by_socket(align, req, default, expected):
    p = policy(t.dual_socket_multi_numa_ht(), {"align-by-socket": align})
    pod_ = make_pod("fakePod", "fake-container", req, req)
    assert ordered(p.get_pod_topology_hints(state_with(default), pod_)["cpu"]) == ordered(expected)
