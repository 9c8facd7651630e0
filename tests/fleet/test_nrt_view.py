"""The fleet's NRT kept pod by pod (`nrt_view.NodeNRT`) equals the whole object `node_nrt` computes
from the PodResources answers, after every admission and deletion, on any machine and policy
(issue 18 item 6: the whole object was rebuilt after every change, O(pods on the node))."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memorymanager
from kubeinputs.pod import parse_pod
from memorymanager.fleet.nrt_filter import numa_zones
from memorymanager.fleet.nrt_view import NodeNRT, node_nrt

POLICIES = ("single-numa-node", "restricted", "best-effort", "none")


def pod_manifest(name: str, containers: list[tuple[str, str, str]], sidecar: bool, burstable: bool = False) -> dict:
    spec: dict = {"containers": [
        {"name": f"c{i}", "resources": {"limits": {"cpu": cpu, "memory": memory, **({"hugepages-2Mi": huge} if huge else {})}}}
        for i, (cpu, memory, huge) in enumerate(containers)]}
    if burstable:  # not watched by the updater's scanner: listed (fingerprinted) but not drawn down
        spec["containers"][0]["resources"]["requests"] = {"cpu": "100m", "memory": "128Mi"}
    if sidecar:
        spec["initContainers"] = [{"name": "side", "restartPolicy": "Always",
                                   "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}]
    return {"metadata": {"name": name, "uid": name}, "spec": spec}


containers = st.lists(st.tuples(st.sampled_from(["1", "2", "500m", "1500m"]),
                                st.sampled_from(["256Mi", "1Gi", "3Gi", "5Gi", "9Gi"]),
                                st.sampled_from(["", "", "64Mi", "512Mi"])), min_size=1, max_size=2)
operations = st.lists(st.one_of(st.tuples(st.just("add"), containers, st.booleans(), st.booleans()),
                                st.tuples(st.just("delete"), st.integers(0, 20), st.just(False), st.just(False))),
                      min_size=1, max_size=14)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(numa=st.integers(1, 4), policy=st.sampled_from(POLICIES), scope=st.sampled_from(["container", "pod"]),
       ops=operations)
def test_kept_pod_by_pod_equals_the_whole_object(numa, policy, scope, ops):
    node = memorymanager.Node(memorymanager.synthetic_machine(numa, 8 << 30, hugepages_2mi=512),
                              {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
                               "topologyManagerScope": scope,
                               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    view = NodeNRT("n", node)
    assert view.nrt() == node_nrt("n", node)
    running: list = []
    for i, (op, arg, sidecar, burstable) in enumerate(ops):
        if op == "add":
            pod = parse_pod(pod_manifest(f"p{i}", arg, sidecar, burstable))
            if node.admit(pod).admitted:
                view.added(pod)
                running.append(pod)
        elif running:
            pod = running.pop(arg % len(running))
            node.remove(pod.uid)
            view.removed(pod)
        assert view.nrt() == node_nrt("n", node), (op, arg)
        assert view.numa_zones() == numa_zones(view.nrt())  # what the filter reads, without the round trip


def test_a_block_on_two_numa_nodes_is_drawn_as_the_updater_draws_it():
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 4 << 30),
                              {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "restricted",
                               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    view = NodeNRT("n", node)
    wide = parse_pod(pod_manifest("wide", [("1", "5Gi", "")], False))
    assert node.admit(wide).placements["c0"].numa_nodes == (0, 1)
    view.added(wide)
    zones = {z["name"]: {r["name"]: r["available"] for r in z["resources"]} for z in view.nrt()["zones"]}
    assert zones["node-0"]["memory"] == "0"  # the lowest node is emptied first
    assert Fraction(zones["node-1"]["memory"]) == (4 << 30) + (4 << 30) - (100 << 20) - (5 << 30)
    assert view.nrt() == node_nrt("n", node)
    node.remove("wide")
    view.removed(wide)
    assert view.nrt() == node_nrt("n", node)


def test_pod_level_cpu_sets_are_listed_and_counted_through_their_containers_only():
    """PodLevelResourceManagers: the pod's CPU set is listed as `serve` lists it, and the zones take only the CPU
    ids its containers report, as NFD's scanner reads containers only (node-feature-discovery v0.19
    podresourcesscanner.go): CPUs of the set no container reports stay available in the zones."""
    from pathlib import Path

    from memorymanager.fleet.nrt_view import pod_view

    kubelet = {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "topologyManagerPolicy": "single-numa-node",
               "topologyManagerScope": "pod", "featureGates": {"PodLevelResourceManagers": True}}
    machine = Path(__file__).resolve().parents[2] / "fixtures" / "machines" / "cpu-2s-ht.json"
    node = memorymanager.Node(memorymanager.node.api.read_machine(str(machine)), kubelet)
    view = NodeNRT("n", node)

    def pod(name, containers):
        def resources(cpu, exclusive):
            return {"requests": {"cpu": cpu, "memory": "1Gi"},
                    **({"limits": {"cpu": cpu, "memory": "1Gi"}} if exclusive else {})}
        six = {"cpu": "6", "memory": "6Gi"}
        return parse_pod({"metadata": {"name": name}, "spec": {"resources": {"requests": six, "limits": six},
                          "containers": [{"name": n, "resources": resources(c, e)} for n, c, e in containers]}})

    def cpu_available():
        return {z.numa_id: z.resources["cpu"] for z in view.numa_zones()}

    assert cpu_available() == {0: 15, 1: 16}  # CPU 0 reserved
    shared = pod("shared", [("c1", "4", True), ("c2", "1", False)])  # c2 shares the rest of the set
    assert node.admit(shared).admitted
    view.added(shared)
    assert pod_view(node, shared).cpus == (1, 2, 3, 17, 18, 19)
    assert cpu_available() == {0: 9, 1: 16} and view.nrt() == node_nrt("n", node)  # 4 + 2 reported by containers
    bubble = pod("bubble", [("c1", "2", True)])  # 6 for the pod, 2 of them reported by its one container
    assert node.admit(bubble).admitted
    view.added(bubble)
    assert len(pod_view(node, bubble).cpus) == 6
    assert cpu_available() == {0: 7, 1: 16} and view.nrt() == node_nrt("n", node)
    free_on_0 = [c for c in node.simulated_node.cpu_manager.get_default_cpu_set().list() if c < 8 or 16 <= c < 24]
    assert len(free_on_0) == 1 + 3  # kubelet: the reserved CPU and 3 free, where the zone says 7
    view.removed(bubble)
    node.remove(bubble.uid)
    assert cpu_available() == {0: 9, 1: 16} and view.nrt() == node_nrt("n", node)
