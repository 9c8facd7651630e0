"""scheduler-plugins' single-numa-node filter: table tests from its behaviour (the cases of its
own filter test, rewritten here as data), plus the NRT-reading rules."""
from __future__ import annotations

from fractions import Fraction

import pytest

from kubeinputs.pod import Container, Pod, ResourceRequirements, parse_resource_list
from kubeinputs.quantity import parse_quantity
from memorymanager.fleet.nrt_filter import filter_pod, numa_zones, pod_effective_request, topology_manager_of

NIC = "vendor/nic1"
EXT = "namespace/extended"
NIC_NO_NUMA = "vendor.com/old-nic-model"


def zone(name, **available):
    return {"name": name, "type": "Node",
            "resources": [{"name": k.replace("_", "/").replace("hp2", "hugepages-2Mi"), "capacity": v, "available": v}
                          for k, v in available.items()]}


def res(cpu=None, memory=None, hp=None, nic=None, **extra):
    out = {}
    for key, value in (("cpu", cpu), ("memory", memory), ("hugepages-2Mi", hp), (NIC, nic)):
        if value is not None:
            out[key] = value
    out.update(extra)
    return out


def nrt(policy, *zones):
    return {"topologyPolicies": [policy], "zones": list(zones)}


def allocatable(obj, extra=None):
    total = {}
    for z in obj["zones"]:
        for r in z["resources"]:
            total[r["name"]] = total.get(r["name"], Fraction(0)) + parse_quantity(r["available"]).value
    total.update({k: parse_quantity(v).value for k, v in (extra or {}).items()})
    return total


def zr(name, cpu, memory, nic, hp=None):
    z = {"name": name, "type": "Node", "resources": [
        {"name": "cpu", "capacity": "30", "available": cpu},
        {"name": "memory", "capacity": "8Gi", "available": memory},
        {"name": NIC, "capacity": "30", "available": nic}]}
    if hp:
        z["resources"].append({"name": "hugepages-2Mi", "capacity": hp, "available": hp})
    return z


NODES = [
    (nrt("SingleNUMANodeContainerLevel", zr("node-0", "4", "8Gi", "10"), zr("node-1", "8", "8Gi", "10")), None),
    (nrt("SingleNUMANodeContainerLevel", zr("node-0", "2", "4Gi", "5", "128Mi"), zr("node-1", "4", "4Gi", "2", "128Mi")),
     {NIC_NO_NUMA: "4"}),
    (nrt("SingleNUMANodePodLevel", zr("node-0", "2", "4Gi", "5"), zr("node-1", "4", "4Gi", "2")), None),
    (nrt("SingleNUMANodePodLevel", zr("node-0", "2", "4Gi", "5"), zr("node-75", "4", "4Gi", "2")), None),
    (nrt("SingleNUMANodeContainerLevel", zr("node-0", "4", "8Gi", "10"), zr("node-1", "8", "8Gi", "10")), {EXT: "1"}),
]


def pod(*containers, init=()):
    """Containers as (requests, limits) pairs; limits None means requests only.

    Built as scheduler-plugins' own tests build them: plain objects, no API-server validation
    or defaulting (several upstream cases request extended resources without limits, which the
    API server would refuse)."""
    def c(i, rl, prefix):
        req, lim = rl
        resources = ResourceRequirements(requests=parse_resource_list(req, "requests"),
                                         limits=parse_resource_list(lim or {}, "limits"))
        return Container(name=f"{prefix}{i}", resources=resources)
    return Pod(name="p", uid="p", containers=[c(i, rl, "c") for i, rl in enumerate(containers)],
               init_containers=[c(i, rl, "i") for i, rl in enumerate(init)])


def same(r):
    return (r, r)


OK, NO_C, NO_P = "", "cannot align container", "cannot align pod"
CASES = [
    ("guaranteed, extended resource fit", [same(res("2", "2Gi", nic="3", **{EXT: "1"}))], 4, OK),
    ("guaranteed, extended resource without devices fit", [same(res("2", "2Gi", **{EXT: "1"}))], 4, OK),
    ("best effort fit", [same({})], 0, OK),
    ("best effort devices, pod scope, fit", [same(res(nic="5"))], 2, OK),
    ("best effort devices, pod scope, no fit", [same(res(nic="20"))], 2, NO_P),
    ("best effort devices, container scope, fit", [same(res(nic="5"))], 1, OK),
    ("best effort devices, container scope, no fit", [same(res(nic="20"))], 0, NO_C),
    ("best effort devices and extended, container scope", [same(res(nic="10", **{EXT: "1"}))], 4, OK),
    ("burstable cpu+memory fit, devices not, container", [(res("3", "3Gi", nic="11"), res("4", "4Gi", nic="11"))], 1, NO_C),
    ("burstable cpu+memory fit, devices not, pod", [(res("1", "1Gi", nic="6"), res("2", "2Gi", nic="6"))], 2, NO_P),
    ("burstable all fit, pod", [(res("1", "1Gi", nic="5"), res("2", "2Gi", nic="5"))], 2, OK),
    ("burstable cpu+memory over NUMA, pod: not checked", [(res("19", "5Gi", nic="5"), res("20", "6Gi", nic="5"))], 2, OK),
    ("burstable all fit, container", [(res("3", "3Gi", nic="5"), res("4", "4Gi", nic="5"))], 1, OK),
    ("burstable cpu+memory over NUMA, container: not checked", [(res("5", "5Gi", nic="5"), res("6", "6Gi", nic="5"))], 1, OK),
    ("guaranteed minimal fit", [same(res("2", "2Gi"))], 0, OK),
    ("guaranteed saturating a zone fit", [same(res("8", "8Gi"))], 0, OK),
    ("guaranteed zero quantity of a missing resource", [same(res("2", "2Gi", hp="0", nic="3"))], 0, OK),
    ("guaranteed fit", [same(res("2", "2Gi", nic="3"))], 1, OK),
    ("guaranteed hugepages fit", [same(res("2", "2Gi", hp="64Mi", nic="3"))], 1, OK),
    ("burstable fit", [same(res("4", nic="3"))], 1, OK),
    ("burstable devices not enough, container", [same(res("4", nic="11"))], 1, NO_C),
    ("burstable devices not enough, pod", [same(res("2", nic="6"))], 2, NO_P),
    ("burstable cpu fit, pod", [same(res("2", nic="5"))], 2, OK),
    ("burstable cpu over NUMA, pod", [same(res("20", nic="5"))], 2, OK),
    ("burstable cpu fit, container", [same(res("2", nic="5"))], 1, OK),
    ("burstable cpu over NUMA, container", [same(res("4", nic="5"))], 1, OK),
    ("burstable memory fit, devices not, container", [same(res(memory="2Gi", nic="11"))], 1, NO_C),
    ("burstable memory fit, devices not, pod", [same(res(memory="2Gi", nic="6"))], 2, NO_P),
    ("burstable memory fit, pod", [same(res(memory="2Gi", nic="5"))], 2, OK),
    ("burstable memory over NUMA, pod", [same(res(memory="5Gi", nic="5"))], 2, OK),
    ("burstable memory fit, container", [same(res(memory="4Gi", nic="5"))], 1, OK),
    ("burstable memory over NUMA, container", [same(res(memory="5Gi", nic="5"))], 1, OK),
    ("burstable requests only, devices not, container", [(res("4", "4Gi", nic="11"), None)], 1, NO_C),
    ("burstable requests only, devices not, pod", [(res("2", "2Gi", nic="6"), None)], 2, NO_P),
    ("burstable requests only fit, pod", [(res("2", "2Gi", nic="5"), None)], 2, OK),
    ("burstable requests only over NUMA, pod", [(res("20", "5Gi", nic="5"), None)], 2, OK),
    ("burstable requests only fit, container", [(res("4", "4Gi", nic="5"), None)], 1, OK),
    ("burstable requests only over NUMA, container", [(res("5", "5Gi", nic="5"), None)], 1, OK),
    ("burstable extended fit", [same(res("4", nic="3", **{EXT: "1"}))], 4, OK),
    ("guaranteed hugepages no fit", [same(res("2", "2Gi", hp="256Mi", nic="3"))], 1, NO_C),
    ("guaranteed cpu no fit", [same(res("9", "1Gi", nic="3"))], 0, NO_C),
    ("guaranteed zero of an unknown device fit", [same(res("2", "1Gi", **{"vendor/notexistingnic": "0"}))], 0, OK),
    ("guaranteed pod scope, 3 containers no fit", [same(res("3", "1Gi"))] * 3, 2, NO_P),
    ("guaranteed pod scope minimal fit", [same(res("1", "1Gi"))], 2, OK),
    ("guaranteed pod scope saturating, ids above 64 skipped", [same(res("2", "4Gi"))], 3, OK),
    ("guaranteed pod scope 3 containers fit", [same(res("1", "1Gi"))] * 3, 2, OK),
    ("guaranteed pod scope on the zone above 64 only: no fit", [same(res("1", "1Gi"))] * 3, 3, NO_P),
    ("guaranteed non-NUMA device fit", [same(res("2", "2Gi", hp="64Mi", **{NIC_NO_NUMA: "3"}))], 1, OK),
    ("guaranteed ephemeral-storage fit", [same(res("2", "2Gi", **{"ephemeral-storage": "100Mi"}))], 1, OK),
]


@pytest.mark.parametrize("name,containers,node,status", CASES, ids=[c[0] for c in CASES])
def test_upstream_cases(name, containers, node, status):
    obj, extra = NODES[node]
    verdict = filter_pod(pod(*containers), obj, allocatable(obj, extra))
    assert verdict.fits == (status == OK)
    assert verdict.status == status


def test_container_scope_subtracts_what_earlier_containers_took():
    obj = nrt("SingleNUMANodeContainerLevel", zr("node-0", "4", "4Gi", "0"), zr("node-1", "4", "4Gi", "0"))
    two = pod(same(res("1", "3Gi")), same(res("1", "3Gi")))
    three = pod(same(res("1", "3Gi")), same(res("1", "3Gi")), same(res("1", "3Gi")))
    assert filter_pod(two, obj, allocatable(obj)).fits
    assert filter_pod(three, obj, allocatable(obj)).status == "cannot align container"


def test_init_containers_are_checked_but_not_subtracted():
    obj = nrt("SingleNUMANodeContainerLevel", zr("node-0", "4", "4Gi", "0"))
    ok = pod(same(res("1", "3Gi")), init=[same(res("1", "4Gi"))])
    too_big = pod(same(res("1", "1Gi")), init=[same(res("1", "5Gi"))])
    assert filter_pod(ok, obj, allocatable(obj)).fits
    assert filter_pod(too_big, obj, allocatable(obj)).status == "cannot align init container"


def test_resource_missing_at_node_level_is_refused():
    obj = nrt("SingleNUMANodeContainerLevel", zr("node-0", "4", "4Gi", "1"))
    alloc = allocatable(obj)
    del alloc[NIC]
    verdict = filter_pod(pod(same(res("1", "1Gi", nic="1"))), obj, alloc)
    assert (verdict.fits, verdict.reason) == (False, NIC)


def test_native_resource_without_numa_affinity_leaves_no_candidate():
    # cpu is known at node level but no zone lists it: not host-level, so no NUMA node fits
    obj = nrt("SingleNUMANodeContainerLevel", {"name": "node-0", "type": "Node",
                                               "resources": [{"name": "memory", "capacity": "4Gi", "available": "4Gi"}]})
    verdict = filter_pod(pod(same(res("1", "1Gi"))), obj, {"cpu": Fraction(8), "memory": Fraction(4 << 30)})
    assert (verdict.fits, verdict.reason) == (False, "cpu")


def test_policy_and_scope_from_attributes_override_the_deprecated_field():
    obj = {"topologyPolicies": ["SingleNUMANodeContainerLevel"],
           "attributes": [{"name": "topologyManagerScope", "value": "pod"},
                          {"name": "topologyManagerPolicy", "value": "bogus"}]}
    assert topology_manager_of(obj) == ("single-numa-node", "pod")
    assert topology_manager_of({"attributes": [{"name": "topologyManagerPolicy", "value": "restricted"}]}) == ("restricted", "container")
    assert topology_manager_of({}) == ("none", "container")


def test_other_policies_pass_everything():
    obj = {"attributes": [{"name": "topologyManagerPolicy", "value": "restricted"}], "zones": []}
    assert filter_pod(pod(same(res("100", "100Gi"))), obj, {}).fits


def test_zones_other_than_numa_nodes_are_skipped():
    obj = {"zones": [{"name": "socket-0", "type": "Socket", "resources": []},
                     {"name": "node-x", "type": "Node", "resources": []},
                     {"name": "node-3", "type": "Node", "resources": [{"name": "memory", "capacity": "1Gi", "available": "1Gi"}]}]}
    assert [(z.numa_id, z.resources) for z in numa_zones(obj)] == [(3, {"memory": Fraction(1 << 30)})]


def test_pod_effective_request_is_max_of_app_sum_and_largest_init():
    p = pod(same(res("1", "1Gi")), same(res("1", "1Gi")), init=[same(res("3", "1Gi"))])
    assert pod_effective_request(p) == {"cpu": Fraction(3), "memory": Fraction(2 << 30)}
