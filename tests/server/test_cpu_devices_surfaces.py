"""The CPU and device managers through every server surface, over the real wire: PodResources v1 and
v1alpha1 on a real unix socket (exclusive CPUs, devices with their NUMA nodes, allocatable CPUs and
devices, pod-level CPUs under their gate), the NRT zones' `cpu` and device resources, kubelet's CPU
manager and device plugin series on a real HTTP scrape (and admission errors counted only where kubelet
counts them), the control service's CPU sets and devices. The node: a dual-socket machine (node 0 = CPUs
0-3,8-11, node 1 = 4-7,12-15), CPU 0 reserved, GPUs and NICs declared as device plugins."""
from __future__ import annotations

import json
from typing import Any, Optional

import grpc
import pytest

from memorymanager.server.nrt import from_host
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.v1 import api_pb2 as v1
from tests.helpers.paths import FIXTURES
from tests.server.serving import serving
from tests.server.test_metrics import scrape

MACHINE = str(FIXTURES / "machines" / "dev-dual-socket-2x8.json")
NODE0_CPUS, NODE1_CPUS = {0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}
KUBELET = {
    "topologyManagerPolicy": "restricted",
    "cpuManagerPolicy": "static",
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"cpu": "1", "memory": "924Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
}
GPU, NIC = "example.com/gpu", "example.com/nic"
DEVICES = {
    GPU: [{"id": "g0", "numaNodes": [1]}, {"id": "g1", "numaNodes": [1]}, {"id": "g2", "numaNodes": [0]},
          {"id": "g3", "numaNodes": [0], "healthy": False}],
    NIC: [{"id": "n0"}, {"id": "n1", "numaNodes": [0, 1]}],
}


def pod(name: str, cpu: str, memory: str = "1Gi", gpus: int = 0, nics: int = 0) -> str:
    limits = {"cpu": cpu, "memory": memory}
    if gpus:
        limits[GPU] = str(gpus)
    if nics:
        limits[NIC] = str(nics)
    return json.dumps({"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}})


def devices_of(entries: Any) -> list[tuple[str, tuple[str, ...], Optional[tuple[int, ...]]]]:
    """ContainerDevices as (resource, ids, NUMA ids or None when `topology` is unset)."""
    return [(d.resource_name, tuple(d.device_ids),
             tuple(n.ID for n in d.topology.nodes) if d.HasField("topology") else None) for d in entries]


def node_serving(tmp_path: Any, kubelet: Optional[dict] = None, **kwargs: Any) -> Any:
    return serving(tmp_path, KUBELET if kubelet is None else kubelet, machine_info=MACHINE, devices=DEVICES, **kwargs)


def test_podresources_reports_the_managers_cpus_and_devices_from_the_node_process(tmp_path):
    with node_serving(tmp_path, isolate=True) as (_, c):
        # before any pod: allocatable = every CPU but the reserved one; healthy devices, one entry per NUMA node
        allocatable = c.allocatable()
        assert list(allocatable.cpu_ids) == list(range(1, 16))
        assert devices_of(allocatable.devices) == [
            (GPU, ("g0",), (1,)), (GPU, ("g1",), (1,)), (GPU, ("g2",), (0,)),  # g3 is unhealthy
            (NIC, ("n0",), None), (NIC, ("n1",), (0,)), (NIC, ("n1",), (1,))]

        gpu_pod = c.admit(pod("train", "4", "2Gi", gpus=2))
        assert gpu_pod.admitted
        (placement,) = gpu_pod.placements
        assert list(placement.numa_nodes) == [1]  # both GPUs sit on node 1: the CPUs follow them
        assert list(placement.cpus) == [4, 5, 12, 13] and placement.cpuset_cpus == "4-5,12-13"
        assert [(d.resource, list(d.ids)) for d in placement.devices] == [(GPU, ["g0", "g1"])]
        assert c.admit(pod("web", "1500m")).admitted  # a fraction of a CPU: the shared pool
        nic_pod = c.admit(pod("net", "2", nics=1))
        assert nic_pod.admitted
        (nic,) = nic_pod.placements[0].devices
        nic_numa = {"n0": None, "n1": (0, 1)}[nic.ids[0]]

        listing = {p.name: p for p in c.list().pod_resources}
        (train,) = listing["train"].containers
        assert list(train.cpu_ids) == [4, 5, 12, 13]
        assert devices_of(train.devices) == [(GPU, ("g0",), (1,)), (GPU, ("g1",), (1,))]
        assert [(m.memory_type, [n.ID for n in m.topology.nodes]) for m in train.memory] == [("memory", [1])]
        (web,) = listing["web"].containers
        assert list(web.cpu_ids) == [] and list(web.devices) == []  # GetCPUs: exclusive CPUs only
        (net,) = listing["net"].containers
        assert len(net.cpu_ids) == 2 and set(net.cpu_ids).isdisjoint({0, 4, 5, 12, 13})
        expected_nic = [(NIC, (nic.ids[0],), None)] if nic_numa is None else \
            [(NIC, (nic.ids[0],), (numa,)) for numa in nic_numa]
        assert devices_of(net.devices) == expected_nic
        assert list(listing["train"].cpu_ids) == []  # no pod-level set without PodLevelResourceManagers

        assert c.get("train").pod_resources == listing["train"]
        alpha = {p.name: p for p in c.list_alpha().pod_resources}
        assert [(d.resource_name, list(d.device_ids)) for d in alpha["train"].containers[0].devices] == \
            [(GPU, ["g0"]), (GPU, ["g1"])]
        assert c.allocatable() == allocatable  # computed at start: admissions do not change it

        c.control.Remove(ctl.RemoveRequest(pod="train", namespace="default"))
        assert "train" not in {p.name for p in c.list().pod_resources}


def test_podresources_command_prints_cpus_and_devices_with_their_numa_nodes(tmp_path):
    import io

    import memorymanager.cli.app as cli

    with node_serving(tmp_path) as (server, c):
        assert c.admit(pod("train", "4", "2Gi", gpus=2)).admitted
        assert c.admit(pod("net", "2", nics=1)).admitted
        out = io.StringIO()
        assert cli.main(["podresources", "list", "--socket", server.socket_path], out=out, err=io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["default/train",
                         "  c  cpus: 4-5,12-13  devices: example.com/gpu g0 on [1]; example.com/gpu g1 on [1]  "
                         "memory: memory 2Gi on [1]"]
    assert lines[3].split("devices: ")[1].split("  memory")[0] in (
        "example.com/nic n0", "example.com/nic n1 on [0]; example.com/nic n1 on [1]")


def test_pod_level_cpu_ids_under_the_pod_level_resource_managers_gate(tmp_path):
    kubelet = {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "topologyManagerPolicy": "single-numa-node",
               "topologyManagerScope": "pod", "featureGates": {"PodLevelResourceManagers": True}}
    manifest = {"metadata": {"name": "p1"}, "spec": {
        "resources": {"requests": {"cpu": "6", "memory": "6Gi"}, "limits": {"cpu": "6", "memory": "6Gi"}},
        "containers": [
            {"name": "c1", "resources": {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "4", "memory": "2Gi"}}},
            {"name": "c2", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}
    with serving(tmp_path, kubelet, machine_info=str(FIXTURES / "machines" / "cpu-2s-ht.json")) as (server, c):
        answer = c.admit(json.dumps(manifest))
        assert answer.admitted
        (p1,) = c.list().pod_resources
        sim = server.host.node.simulated_node
        uid = server.host.node.active_pods()[0].uid
        assert list(p1.cpu_ids) == sim.cpu_manager.get_pod_cpus(uid).list() == [1, 2, 3, 17, 18, 19]
        by_name = {ct.name: list(ct.cpu_ids) for ct in p1.containers}
        assert by_name == {"c1": [1, 2, 17, 18], "c2": [3, 19]}
        assert {p.container: list(p.cpus) for p in answer.placements} == by_name


def test_nrt_zones_count_cpus_and_devices_as_nfd(tmp_path):
    with node_serving(tmp_path) as (server, c):
        assert c.admit(pod("train", "4", "2Gi", gpus=2)).admitted
        assert c.admit(pod("web", "1500m")).admitted  # Guaranteed, but not whole CPUs: none are exclusive
        zones = {z["name"]: {r["name"]: (int(r["capacity"]), int(r["allocatable"]), int(r["available"]))
                             for r in z["resources"]} for z in from_host(server.host, "n1")["zones"]}
    # cpu: capacity = allocatable + the zone's reserved CPUs (CPU 0 on node 0); the exclusive CPUs of
    # Guaranteed pods with whole CPUs are taken from their zone
    assert zones["node-0"]["cpu"] == (8, 7, 7)
    assert zones["node-1"]["cpu"] == (8, 8, 4)
    # devices: healthy ones on their NUMA node; a device on two nodes counts on both, one without topology nowhere
    assert zones["node-0"][GPU] == (1, 1, 1) and zones["node-1"][GPU] == (2, 2, 0)
    assert zones["node-0"][NIC] == (1, 1, 1) and zones["node-1"][NIC] == (1, 1, 1)


def kubelet_samples(server: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    _, samples, _ = scrape(server)
    return {(name, tuple(sorted(dict(labels).items()))): v for (name, labels), v in samples.items()
            if name.startswith(("kubelet_cpu_manager_", "kubelet_device_plugin_", "kubelet_container_aligned",
                                "kubelet_topology_manager_admission_errors", "kubelet_topology_manager_admission_requests"))}


def aligned(scope: str, boundary: str) -> tuple[tuple[str, str], ...]:
    return (("boundary", boundary), ("scope", scope))


def test_metrics_scrape_shows_the_cpu_manager_and_device_plugins(tmp_path):
    kubelet = dict(KUBELET, cpuManagerPolicyOptions={"full-pcpus-only": "true"})
    with node_serving(tmp_path, kubelet, metrics=True, isolate=True) as (server, c):
        start = kubelet_samples(server)
        assert start[("kubelet_cpu_manager_shared_pool_size_millicores", ())] == 15000
        assert start[("kubelet_cpu_manager_exclusive_cpu_allocation_count", ())] == 0
        assert not any(name == "kubelet_cpu_manager_allocation_per_numa" for name, _ in start)
        assert start[("kubelet_device_plugin_registration_total", (("resource_name", GPU),))] == 1
        assert start[("kubelet_device_plugin_registration_total", (("resource_name", NIC),))] == 1
        assert c.admit(pod("train", "4", "2Gi", gpus=2)).admitted
        assert c.admit(pod("web", "1500m")).admitted  # shared pool: no pinning request
        refused = c.admit(pod("odd", "3"))  # full-pcpus-only: 3 CPUs are not whole cores
        assert not refused.admitted and refused.reason == "SMTAlignmentError"
        after = kubelet_samples(server)
    assert after[("kubelet_cpu_manager_pinning_requests_total", ())] == 2
    assert after[("kubelet_cpu_manager_pinning_errors_total", ())] == 1
    assert after[("kubelet_cpu_manager_shared_pool_size_millicores", ())] == 11000
    assert after[("kubelet_cpu_manager_exclusive_cpu_allocation_count", ())] == 4
    assert after[("kubelet_cpu_manager_allocation_per_numa", (("numa_node", "1"),))] == 4
    assert ("kubelet_cpu_manager_allocation_per_numa", (("numa_node", "0"),)) not in after
    assert after[("kubelet_container_aligned_compute_resources_count", aligned("container", "physical_cpu"))] == 1
    assert after[("kubelet_container_aligned_compute_resources_failure_count",
                  aligned("container", "physical_cpu"))] == 1
    assert ("kubelet_container_aligned_compute_resources_count", aligned("container", "uncore_cache")) in after
    # the SMT refusal is an allocation error in the container scope: kubelet counts it
    assert after[("kubelet_topology_manager_admission_requests_total", ())] == 3
    assert after[("kubelet_topology_manager_admission_errors_total", ())] == 1


@pytest.mark.parametrize("policy, errors", [("none", 0), ("best-effort", 1)])
def test_admission_errors_are_counted_only_in_the_container_and_pod_scopes(tmp_path, policy, errors):
    """A pod the CPU manager cannot pin (16 CPUs, 15 allocatable): under the topology manager's `none`
    policy kubelet's Admit goes through the none scope, which counts no admission error."""
    kubelet = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}, "topologyManagerPolicy": policy}
    with node_serving(tmp_path, kubelet, metrics=True) as (server, c):
        answer = c.admit(pod("huge", "16"))
        assert not answer.admitted and "not enough cpus available" in answer.message
        samples = kubelet_samples(server)
    assert samples[("kubelet_topology_manager_admission_requests_total", ())] == 1
    assert samples[("kubelet_topology_manager_admission_errors_total", ())] == errors
    assert samples[("kubelet_cpu_manager_pinning_errors_total", ())] == 1


def test_control_machine_state_shows_the_cpu_sets(tmp_path):
    with node_serving(tmp_path) as (server, c):
        answer = c.admit(pod("train", "4", "2Gi", gpus=2))
        state = c.control.MachineState(ctl.MachineStateRequest(), timeout=60)
        uid = server.host.node.active_pods()[0].uid
    assert answer.placements[0].cpuset_cpus == "4-5,12-13"
    assert [(d.resource, list(d.ids)) for d in answer.placements[0].devices] == [(GPU, ["g0", "g1"])]
    assert state.reserved_cpus == "0" and state.allocatable_cpus == "1-15"
    assert state.default_cpu_set == "0-3,6-11,14-15"
    assert [(a.pod_uid, a.container, a.cpus) for a in state.cpu_assignments] == [(uid, "c", "4-5,12-13")]


def test_would_admit_carries_cpus_without_changing_the_node(tmp_path):
    with node_serving(tmp_path) as (_, c):
        answer = c.control.WouldAdmit(ctl.AdmitRequest(pod=pod("trial", "2")), timeout=60)
        assert answer.admitted and len(answer.placements[0].cpus) == 2
        assert answer.placements[0].cpuset_cpus
        assert c.list().pod_resources == []
        with pytest.raises(grpc.RpcError):
            c.get("trial")
        assert isinstance(c.allocatable(), v1.AllocatableResourcesResponse)


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from memorymanager.server.host import NodeHost  # noqa: E402
from memorymanager.server.podresources import ProviderData, allocatable_message, pod_resources  # noqa: E402
import memorymanager  # noqa: E402

_REQUESTS = st.lists(st.tuples(st.sampled_from(["1", "2", "3", "4", "500m", "1500m"]),
                               st.integers(0, 2), st.integers(0, 1), st.booleans()), min_size=1, max_size=6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_REQUESTS)
def test_reported_cpus_and_devices_partition_the_node(requests):
    """Whatever pods come and go, the CPUs and devices PodResources reports are the managers' own: exclusive
    CPUs held once, never reserved, outside the shared pool and within the allocatable ones; devices healthy,
    held once; and the NRT's available cpu per zone is its allocatable minus the exclusive CPUs there."""
    host = NodeHost(memorymanager.Node(MACHINE, KUBELET, devices=DEVICES))
    for i, (cpu, gpus, nics, remove) in enumerate(requests):
        host.admit(pod(f"p{i}", cpu, gpus=gpus, nics=nics))
        if remove and i and f"p{i - 1}" in host.node.pods():
            host.remove(f"p{i - 1}", namespace="default")
    allocatable = allocatable_message(host.allocatable(), ProviderData())
    listing = [pod_resources(v, ProviderData()) for v in host.pod_views()]
    sim = host.node.simulated_node
    held = [cpu for p in listing for ct in p.containers for cpu in ct.cpu_ids]
    assert len(held) == len(set(held))
    assert set(held) <= set(allocatable.cpu_ids) and 0 not in held
    assert set(held).isdisjoint(sim.cpu_manager.get_default_cpu_set().list())
    # one entry per device and NUMA node: a container's devices are the distinct IDs of its entries
    devices = [device for p in listing for ct in p.containers
               for device in {(d.resource_name, d.device_ids[0]) for d in ct.devices}]
    healthy = {(d.resource_name, d.device_ids[0]) for d in allocatable.devices}
    assert len(devices) == len(set(devices)) and set(devices) <= healthy
    for view, message in zip(host.pod_views(), listing):
        for ct in message.containers:
            held_by = sim.device_manager.get_devices(view.uid, ct.name) or {}
            assert {(d.resource_name, d.device_ids[0]) for d in ct.devices} == \
                {(r, i) for r, ids in held_by.items() for i in ids}
    in_use = {(r, i) for r, ids in sim.device_manager.allocated_devices().items() for i in ids}
    assert set(devices) <= in_use  # kubelet frees a removed pod's devices at its next allocation only
    zones = {z["name"]: {r["name"]: r for r in z["resources"]} for z in from_host(host, "n")["zones"]}
    for name, cpus in (("node-0", NODE0_CPUS), ("node-1", NODE1_CPUS)):
        cpu = zones[name]["cpu"]
        assert int(cpu["allocatable"]) - int(cpu["available"]) == len(cpus & set(held))


def test_the_cpu_managers_none_policy_reports_no_cpus_but_devices_still(tmp_path):
    kubelet = {"topologyManagerPolicy": "single-numa-node"}
    with node_serving(tmp_path, kubelet, metrics=True) as (server, c):
        allocatable = c.allocatable()
        answer = c.admit(pod("g", "2", gpus=1))
        (container,) = c.list().pod_resources[0].containers
        samples = kubelet_samples(server)
    assert list(allocatable.cpu_ids) == [] and len(allocatable.devices) == 6
    assert answer.admitted and list(answer.placements[0].cpus) == [] and answer.placements[0].cpuset_cpus == ""
    assert list(container.cpu_ids) == [] and devices_of(container.devices) == [(GPU, ("g2",), (0,))]
    assert samples[("kubelet_cpu_manager_shared_pool_size_millicores", ())] == 0
    assert samples[("kubelet_cpu_manager_pinning_requests_total", ())] == 0
    assert ("kubelet_container_aligned_compute_resources_count", aligned("container", "physical_cpu")) not in samples
