"""NFD v0.19.0's own cases for its resource monitor, as tables: the aggregator's two cases
(`noderesourcesaggregator_test.go`: a node with no pods, then one pod taking CPUs, a device and
memory), the scanner's cases (`podresourcesscanner_test.go`: with and without topology,
devices, CPUs, Guaranteed QoS, whole CPUs, a watched namespace, the fingerprint) and its
`isWatchable` cases. Messages and pods are rebuilt here; expected values are NFD's."""
from __future__ import annotations

from typing import Any

import pytest

from kubeinputs.machine import parse_machine_info
from memorymanager.node.api import read_pod
from memorymanager.server import podfingerprint
from memorymanager.server.nrt_aggregator import ResourcesAggregator
from memorymanager.server.nrt_scanner import (ContainerResources, PodResources, ResourceInfo, ScanError,
                                              ScanOptions, has_integral_cpus, is_watchable, scan)
from memorymanager.server.protos.v1 import api_pb2 as v1

# ----- the aggregator -------------------------------------------------------------------------------

# NFD's test topology: two NUMA nodes of six two-thread cores, even CPUs on node 0, odd on node 1
_CORES = {0: [(0, 12), (10, 22), (14, 2), (16, 4), (18, 6), (20, 8)],
          1: [(1, 13), (11, 23), (15, 3), (17, 5), (19, 7), (21, 9)]}
MACHINE = parse_machine_info({"topology": [
    {"node_id": node, "memory": 1 << 30, "distances": [10, 20] if node == 0 else [20, 10],
     "cores": [{"core_id": i, "thread_ids": list(threads)} for i, threads in enumerate(cores)]}
    for node, cores in _CORES.items()]}, "nfd-topology")
CAPACITY = {0: {"memory": 2048}, 1: {"memory": 2048, "hugepages-2Mi": 2048}}


def topo(*nodes: int) -> v1.TopologyInfo:
    return v1.TopologyInfo(nodes=[v1.NUMANode(ID=n) for n in nodes])


def device(name: str, ids: list[str], *nodes: int) -> v1.ContainerDevices:
    return v1.ContainerDevices(resource_name=name, device_ids=ids, topology=topo(*nodes) if nodes else None)


def block(kind: str, size: int, *nodes: int) -> v1.ContainerMemory:
    return v1.ContainerMemory(memory_type=kind, size=size, topology=topo(*nodes))


ALLOCATABLE_MEMORY = [block("memory", 1024, 0), block("memory", 1024, 1), block("hugepages-2Mi", 1024, 1)]


def zone_table(zones: list[dict]) -> dict[str, Any]:
    """name -> (costs, {resource: (available, allocatable, capacity)})."""
    return {z["name"]: ({c["name"]: c["value"] for c in z.get("costs", [])},
                        {r["name"]: (int(r["available"]), int(r["allocatable"]), int(r["capacity"]))
                         for r in z["resources"]})
            for z in zones}


COSTS = {"node-0": {"node-0": 10, "node-1": 20}, "node-1": {"node-0": 20, "node-1": 10}}


def test_aggregate_without_pods():
    allocatable = v1.AllocatableResourcesResponse(
        devices=[device("fake.io/net", [f"netAAA-{i}"], 0) for i in range(4)]
        + [device("fake.io/net", [f"netBBB-{i}"], 1) for i in range(2)]
        + [device("fake.io/gpu", ["gpuAAA"], 1)],
        cpu_ids=list(range(2, 24)),  # CPUs 0 and 1 are reserved
        memory=ALLOCATABLE_MEMORY)
    zones = ResourcesAggregator(MACHINE, allocatable, CAPACITY).aggregate([])
    assert zone_table(zones) == {
        "node-0": (COSTS["node-0"], {"cpu": (11, 11, 12), "fake.io/net": (4, 4, 4), "memory": (1024, 1024, 2048)}),
        "node-1": (COSTS["node-1"], {"cpu": (11, 11, 12), "fake.io/gpu": (1, 1, 1), "fake.io/net": (2, 2, 2),
                                     "hugepages-2Mi": (1024, 1024, 2048), "memory": (1024, 1024, 2048)}),
    }


def test_aggregate_with_a_pod():
    allocatable = v1.AllocatableResourcesResponse(
        devices=[device("fake.io/net", ["netAAA"], 0), device("fake.io/net", ["netBBB"], 1),
                 device("fake.io/gpu", ["gpuAAA"], 1)],
        cpu_ids=list(range(1, 24)),  # CPU 0 is reserved
        memory=ALLOCATABLE_MEMORY)
    pod = PodResources("test-pod-0", "default", (ContainerResources("test-cnt-0", (
        ResourceInfo("cpu", ("5", "7")),
        ResourceInfo("fake.io/net", ("netBBB",)),
        ResourceInfo("memory", ("512",), (1,)),
        ResourceInfo("hugepages-2Mi", ("512",), (1,)),
    )),))
    zones = ResourcesAggregator(MACHINE, allocatable, CAPACITY).aggregate([pod])
    assert zone_table(zones) == {
        "node-0": (COSTS["node-0"], {"cpu": (11, 11, 12), "fake.io/net": (1, 1, 1), "memory": (1024, 1024, 2048)}),
        "node-1": (COSTS["node-1"], {"cpu": (10, 12, 12), "fake.io/gpu": (1, 1, 1), "fake.io/net": (0, 1, 1),
                                     "hugepages-2Mi": (512, 1024, 2048), "memory": (512, 1024, 2048)}),
    }


# ----- the scanner ----------------------------------------------------------------------------------


def spec(name: str, namespace: str, *containers: dict[str, str]) -> Any:
    """A pod whose containers have these limits (requests equal, as the API server defaults them)."""
    return read_pod({"metadata": {"name": name, "namespace": namespace}, "spec": {"containers": [
        {"name": f"test-cnt-{i}", "resources": {"limits": limits}} for i, limits in enumerate(containers)]}})


def listed(namespace: str, *containers: v1.ContainerResources) -> v1.ListPodResourcesResponse:
    return v1.ListPodResourcesResponse(pod_resources=[
        v1.PodResources(name="test-pod-0", namespace=namespace, containers=list(containers))])


def ctr(i: int = 0, cpus: tuple[int, ...] = (), devices: tuple[v1.ContainerDevices, ...] = (),
        memory: tuple[v1.ContainerMemory, ...] = ()) -> v1.ContainerResources:
    return v1.ContainerResources(name=f"test-cnt-{i}", cpu_ids=list(cpus), devices=list(devices), memory=list(memory))


DEV_A = device("fake.io/resource", ["devA"], 0)
DEV_A_NO_TOPOLOGY = device("fake.io/resource", ["devA"])
GUARANTEED_2 = {"cpu": "2", "memory": "100", "fake.io/resource": "1"}
GUARANTEED_1500M = {"cpu": "1500m", "memory": "100", "fake.io/resource": "1"}
DEVICE_ONLY = {"fake.io/resource": "1"}

# (case, watched namespace, listing, pod spec limits, expected pods as (container, resources))
SCANS = [
    ("topology of devices and memory", "*",
     listed("default", ctr(cpus=(0, 1), devices=(DEV_A,), memory=(block("hugepages-2Mi", 512, 1), block("memory", 512, 0)))),
     [{"cpu": "2", "memory": "512", "hugepages-2Mi": "2Mi", "fake.io/resource": "1"}],  # 2Mi: the API refuses 512
     [("test-cnt-0", [("cpu", ["0", "1"], []), ("fake.io/resource", ["devA"], [0]),
                      ("hugepages-2Mi", ["512"], [1]), ("memory", ["512"], [0])])]),
    ("no topology", "*", listed("default", ctr(cpus=(0, 1), devices=(DEV_A_NO_TOPOLOGY,))), [GUARANTEED_2],
     [("test-cnt-0", [("cpu", ["0", "1"], []), ("fake.io/resource", ["devA"], [])])]),
    ("no devices", "*", listed("default", ctr(cpus=(0, 1))), [{"cpu": "2", "memory": "100"}],
     [("test-cnt-0", [("cpu", ["0", "1"], [])])]),
    ("no cpus", "*", listed("default", ctr(devices=(DEV_A_NO_TOPOLOGY,))), [{"memory": "100", "fake.io/resource": "1"}],
     [("test-cnt-0", [("fake.io/resource", ["devA"], [])])]),
    ("not guaranteed, a device, no cpus", "*", listed("default", ctr(devices=(DEV_A_NO_TOPOLOGY,))), [DEVICE_ONLY],
     [("test-cnt-0", [("fake.io/resource", ["devA"], [])])]),
    ("fractional cpus: ids not counted", "*", listed("default", ctr(cpus=(0, 1), devices=(DEV_A_NO_TOPOLOGY,))),
     [GUARANTEED_1500M], [("test-cnt-0", [("fake.io/resource", ["devA"], [])])]),
    ("namespace watched: empty listing", "pod-res-test", v1.ListPodResourcesResponse(), [], []),
    ("namespace watched: another namespace", "pod-res-test",
     listed("default", ctr(cpus=(0, 1), devices=(DEV_A_NO_TOPOLOGY,))), [{"cpu": "1", "memory": "100"}], []),
    ("namespace watched: its pod", "pod-res-test", listed("pod-res-test", ctr(cpus=(0, 1), devices=(DEV_A_NO_TOPOLOGY,))),
     [GUARANTEED_2], [("test-cnt-0", [("cpu", ["0", "1"], []), ("fake.io/resource", ["devA"], [])])]),
    ("namespace watched: another namespace, no devices", "pod-res-test", listed("default", ctr(cpus=(0, 1))),
     [{"cpu": "2", "memory": "100"}], []),
    ("namespace watched: another namespace, no cpus", "pod-res-test",
     listed("default", ctr(devices=(DEV_A_NO_TOPOLOGY,))), [GUARANTEED_2], []),
    ("namespace watched: a device, no cpus", "pod-res-test", listed("pod-res-test", ctr(devices=(DEV_A_NO_TOPOLOGY,))),
     [DEVICE_ONLY], [("test-cnt-0", [("fake.io/resource", ["devA"], [])])]),
    ("namespace watched: fractional cpus", "pod-res-test",
     listed("pod-res-test", ctr(cpus=(0, 1), devices=(DEV_A_NO_TOPOLOGY,))), [GUARANTEED_1500M],
     [("test-cnt-0", [("fake.io/resource", ["devA"], [])])]),
    ("one container with whole cpus: every container's ids count", "pod-res-test",
     listed("pod-res-test", ctr(0, cpus=(0, 1), devices=(DEV_A_NO_TOPOLOGY,)), ctr(1, devices=(DEV_A_NO_TOPOLOGY,))),
     [GUARANTEED_2, GUARANTEED_1500M],
     [("test-cnt-0", [("cpu", ["0", "1"], []), ("fake.io/resource", ["devA"], [])]),
      ("test-cnt-1", [("fake.io/resource", ["devA"], [])])]),
]


def as_table(response) -> list:
    assert all(p.name == "test-pod-0" for p in response.pod_resources)
    return [(c.name, [(r.name, list(r.data), list(r.numa_node_ids)) for r in c.resources])
            for p in response.pod_resources for c in p.containers]


@pytest.mark.parametrize("case,namespace,listing,limits,expected", SCANS, ids=[c[0] for c in SCANS])
def test_scan(case, namespace, listing, limits, expected):
    pods = {}
    if listing.pod_resources:
        p = listing.pod_resources[0]
        pods[(p.namespace, p.name)] = spec(p.name, p.namespace, *limits)
    fingerprint = namespace == "*"  # NFD's first block fingerprints, its namespace block does not
    response = scan(listing, lambda ns, name: pods.get((ns, name)), ScanOptions(namespace, fingerprint))
    assert as_table(response) == expected
    if fingerprint and listing.pod_resources:
        assert response.attributes == (
            (podfingerprint.ATTRIBUTE, podfingerprint.sign([(p.namespace, p.name) for p in listing.pod_resources])),)
    else:
        assert response.attributes == ()


def test_scan_of_an_empty_listing_has_no_fingerprint():
    assert scan(v1.ListPodResourcesResponse(), lambda ns, name: None) == scan(v1.ListPodResourcesResponse())
    assert scan(v1.ListPodResourcesResponse()).attributes == ()


def test_fingerprint_covers_pods_the_scan_does_not_count():
    listing = v1.ListPodResourcesResponse(pod_resources=[
        v1.PodResources(name="a", namespace="other", containers=[ctr()]),
        v1.PodResources(name="b", namespace="pod-res-test", containers=[ctr(cpus=(0,))])])
    response = scan(listing, None, ScanOptions("pod-res-test"))
    assert [p.name for p in response.pod_resources] == ["b"]
    assert response.attributes[0][1] == podfingerprint.sign([("other", "a"), ("pod-res-test", "b")])


# ----- isWatchable ------------------------------------------------------------------------------------


def test_watchable_when_the_pod_is_known():
    pod = spec("test-pod", "default", {"cpu": "1", "memory": "100"})
    assert is_watchable(v1.PodResources(name="test-pod", namespace="default"), pod, ScanOptions()) == (True, True)


def test_a_pod_the_lookup_does_not_know_fails_the_scan():
    listing = v1.ListPodResourcesResponse(pod_resources=[v1.PodResources(name="missing-pod", namespace="default")])
    with pytest.raises(ScanError, match="missing-pod"):
        scan(listing, lambda ns, name: None)


@pytest.mark.parametrize("cpu,whole", [("1", True), ("1000m", True), ("0", True), ("1500m", False),
                                       ("2.0001", False), ("100u", False), ("3", True)])
def test_whole_cpus_as_nfd_tests_them(cpu, whole):
    pod = spec("p", "default", {"cpu": cpu, "memory": "1Gi"})
    assert has_integral_cpus(pod.containers[0]) == whole
    if cpu != "0":  # a zero cpu limit is no Guaranteed pod
        assert is_watchable(v1.PodResources(name="p", namespace="default"), pod, ScanOptions()) == (True, whole)


def test_a_burstable_pod_without_devices_is_not_watchable():
    pod = read_pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}}]}})
    assert is_watchable(v1.PodResources(name="p", namespace="default", containers=[ctr(cpus=(1,))]), pod,
                        ScanOptions()) == (False, False)
    with_device = v1.PodResources(name="p", namespace="default", containers=[ctr(devices=(DEV_A,))])
    assert is_watchable(with_device, pod, ScanOptions()) == (True, False)


def test_without_pod_specs_a_pod_counts_when_it_reports_something():
    empty = v1.PodResources(name="p", namespace="default", containers=[ctr()])
    assert is_watchable(empty, None, ScanOptions()) == (False, True)
    for reported in (ctr(cpus=(3,)), ctr(devices=(DEV_A,)), ctr(memory=(block("memory", 1, 0),))):
        assert is_watchable(v1.PodResources(name="p", namespace="default", containers=[reported]), None,
                            ScanOptions()) == (True, True)


def test_zero_sized_blocks_and_empty_containers_are_dropped():
    listing = listed("default", ctr(0, memory=(block("memory", 0, 0),)), ctr(1, memory=(block("memory", 5, 1, 0),)))
    response = scan(listing, None)
    assert as_table(response) == [("test-cnt-1", [("memory", ["5"], [1, 0])])]  # NUMA nodes as listed


# ----- beyond NFD's tables: behaviours docs/nrt.md states ---------------------------------------------


def test_excluded_resources_are_left_out_and_their_ids_skipped():
    allocatable = v1.AllocatableResourcesResponse(devices=[device("fake.io/net", ["n0"], 0)], cpu_ids=[2, 3],
                                                  memory=ALLOCATABLE_MEMORY)
    pod = PodResources("p", "default", (ContainerResources("c", (ResourceInfo("fake.io/net", ("n0",)),)),))
    zones = zone_table(ResourcesAggregator(MACHINE, allocatable, CAPACITY, exclude={"fake.io/net"}).aggregate([pod]))
    assert "fake.io/net" not in zones["node-0"][1] and zones["node-0"][1]["cpu"] == (1, 1, 12)


def test_zones_are_numbered_by_position_as_nfd_ranges_over_its_node_slice():
    holes = parse_machine_info({"topology": [
        {"node_id": 0, "memory": 1 << 30, "distances": [10, 20], "cores": [{"core_id": 0, "thread_ids": [0]}]},
        {"node_id": 2, "memory": 1 << 30, "distances": [20, 10], "cores": [{"core_id": 0, "thread_ids": [1]}]}]}, "m")
    allocatable = v1.AllocatableResourcesResponse(cpu_ids=[0, 1], memory=[block("memory", 100, 0), block("memory", 100, 2)])
    zones = zone_table(ResourcesAggregator(holes, allocatable, {}).aggregate([]))
    # node 2's resources are on no zone; zone 1 finds no node of id 1: no allocatable, no costs
    assert zones == {"node-0": ({"node-0": 10, "node-1": 20}, {"cpu": (1, 1, 1), "memory": (100, 100, 100)}),
                     "node-1": ({}, {"cpu": (0, 0, 0)})}


def test_memory_capacity_falls_back_to_allocatable_without_hugepages():
    from memorymanager.server.nrt_aggregator import memory_capacity
    import memorymanager

    assert memory_capacity(memorymanager.synthetic_machine(2, 4 << 30)) == {}
    with_pages = memory_capacity(memorymanager.synthetic_machine(1, 4 << 30, hugepages_2mi=4))
    assert with_pages == {0: {"memory": 4 << 30, "hugepages-2Mi": 4 * (2 << 20)}}
