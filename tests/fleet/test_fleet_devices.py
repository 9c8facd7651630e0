"""Fleet nodes with the CPU manager's static policy and device plugins: a dual-socket HT machine
(fixtures/machines/cpu-2s-ht.json: 2 NUMA nodes x 8 cores x 2 threads, 32 GiB each) with one GPU per
NUMA node. The numa-aware filter asks about exclusive CPUs and GPUs per NUMA zone, the summary
accounts CPUs and devices, and bad device declarations are one clear error naming the group."""
from __future__ import annotations

import io
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memorymanager
from kubeinputs.pod import parse_pod
from memorymanager.cli.app import main
from memorymanager.fleet.engines import execute
from memorymanager.fleet.nrt_filter import filter_pod, numa_zones
from memorymanager.fleet.nrt_view import NodeNRT, node_nrt
from memorymanager.fleet.simulate import Simulation, SimulationObserver
from memorymanager.fleet.spec import load_fleet
from memorymanager.fleet.summary import build_summary
from memorymanager.fleet.trace import load_trace

MACHINES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "machines")
HT = os.path.abspath(os.path.join(MACHINES, "cpu-2s-ht.json"))
# CPUs 0 and 16 (core 0 of NUMA node 0) reserved; 1Gi of NUMA node 0's memory reserved (924Mi + 100Mi eviction)
KUBELET = ('{topologyManagerPolicy: single-numa-node, cpuManagerPolicy: static, memoryManagerPolicy: Static, '
           'reservedSystemCPUs: "0,16", kubeReserved: {memory: 924Mi}, '
           'reservedMemory: [{numaNode: 0, limits: {memory: 1Gi}}]}')
GPUS = "{nvidia.com/gpu: [{id: gpu0, numaNodes: [0]}, {id: gpu1, numaNodes: [1]}]}"


def fleet_text(placement: str, on_refusal: str = "retry", devices: str = GPUS) -> str:
    return f"""
nodes:
- name: plain
  count: 1
  machine: {HT}
  kubelet: {KUBELET}
- name: gpu
  count: 2
  machine: {HT}
  kubelet: {KUBELET}
  devices: {devices}
trace: t.jsonl
placement: {placement}
onRefusal: {on_refusal}
"""


def pod(name: str, cpu: str, memory: str, gpus: int = 0) -> dict:
    limits = {"cpu": cpu, "memory": memory, **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}}


# gpu-0 ends with NUMA node 1's 16 CPUs held by `hog` and gpu0 (NUMA node 0) held by `gpuhog`: it still has
# 12 free CPUs and one free GPU at node level, but not on one NUMA node. `train` needs 8 exclusive CPUs and a
# GPU on one NUMA node.
TRACE = [
    {"time": 0, "add": pod("hog", "16", "1Gi"), "nodeName": "gpu-0"},
    {"time": 1, "add": pod("gpuhog", "2", "1Gi", 1), "nodeName": "gpu-0"},
    {"time": 2, "add": pod("train", "8", "4Gi", 1)},
]


def write_fleet(tmp_path, placement: str, on_refusal: str = "retry", devices: str = GPUS, trace=TRACE) -> str:
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in trace))
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet_text(placement, on_refusal, devices))
    return str(path)


class Watch(SimulationObserver):
    def __init__(self) -> None:
        self.filtered_on: list[tuple[str, str, bool]] = []
        self.answers: dict[str, tuple[str, object]] = {}

    def filtered(self, node, ask, fits):
        self.filtered_on.append((ask.pod.name, node.name, fits))

    def kubelet_answered(self, node, pod, answer):
        self.answers[pod.name] = (node.name, answer)


def replay(path: str) -> tuple[Simulation, Watch, dict]:
    spec = load_fleet(path)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    watch = Watch()
    sim = Simulation(spec, spec.variants[0], observer=watch)
    result = sim.run(events)
    return sim, watch, build_summary(spec, [result], events=len(events), bound=False)


def test_numa_aware_places_cpus_and_a_gpu_only_where_one_numa_node_holds_both(tmp_path):
    sim, watch, summary = replay(write_fleet(tmp_path, "numa-aware"))
    # plain-0 has no GPU (NodeResourcesFit), gpu-0 has 12 CPUs and a GPU but on different NUMA nodes (the filter)
    assert [(n, fits) for name, n, fits in watch.filtered_on if name == "train"] == [("gpu-0", False), ("gpu-1", True)]
    node, answer = watch.answers["train"]
    assert node == "gpu-1" and answer.admitted
    placement = answer.placements["c"]
    assert placement.numa_nodes == (0,) and placement.devices == {"nvidia.com/gpu": ("gpu0",)}
    # whole cores of NUMA node 0 (core 0 reserved): 1-4 and their siblings 17-20
    assert placement.cpus == (1, 2, 3, 4, 17, 18, 19, 20)
    variant = summary["variants"][0]
    assert variant["pods"] == {"added": 3, "admitted": 3, "failed": 0, "unschedulable": 0, "deleted": 0}
    assert variant["disagreements"] == 0
    plain, gpu = variant["groups"]
    assert plain["cpus"] == {"total": 32, "reserved": 2, "allocatable": 30, "exclusive": 0, "shared": 32}
    assert plain["devices"] == {}
    # exclusive: gpu-0 16 + 2, gpu-1 8; the shared pool keeps the reserved CPUs
    assert gpu["cpus"] == {"total": 64, "reserved": 4, "allocatable": 60, "exclusive": 26, "shared": 38}
    assert gpu["devices"] == {"nvidia.com/gpu": {"capacity": 4, "allocatable": 4, "allocated": 2, "free": 2}}
    assert [row["cpu"] for row in gpu["numa"]] == [{"allocatable": 28, "used": 10, "free": 18, "stranded": 0},
                                                    {"allocatable": 32, "used": 16, "free": 16, "stranded": 0}]
    assert variant["smallestUnplacedCPUNeed"] == 0  # every pod ran: nothing is stranded


def test_first_fit_binds_where_kubelet_refuses_the_alignment(tmp_path):
    _, watch, summary = replay(write_fleet(tmp_path, "first-fit", on_refusal="fail"))
    node, answer = watch.answers["train"]
    assert node == "gpu-0" and not answer.admitted and answer.reason == "TopologyAffinityError"
    variant = summary["variants"][0]
    assert (variant["pods"]["failed"], variant["disagreements"]) == (1, 1)


def test_the_nrt_of_a_fleet_node_lists_cpu_and_gpus_per_numa_zone(tmp_path):
    sim, _, _ = replay(write_fleet(tmp_path, "numa-aware"))
    node = sim.by_name["gpu-0"]
    zones = {z["name"]: {r["name"]: (r["capacity"], r["allocatable"], r["available"]) for r in z["resources"]}
             for z in node.nrt()["zones"]}
    assert zones["node-0"]["cpu"] == ("16", "14", "12")  # reserved CPUs in capacity only; gpuhog holds 2
    assert zones["node-1"]["cpu"] == ("16", "16", "0")  # hog holds all 16
    assert zones["node-0"]["nvidia.com/gpu"] == ("1", "1", "0")
    assert zones["node-1"]["nvidia.com/gpu"] == ("1", "1", "1")
    assert node.nrt() == node_nrt("gpu-0", node.node)


def test_verdicts_are_kept_per_shape_with_cpu_and_devices(tmp_path):
    """Pods with the same memory but different CPU or GPU requests are different shapes: each gets its own
    verdict, the same the filter gives on the NRT asked afresh."""
    from memorymanager.fleet.fleetnode import FilterAsk

    sim, _, _ = replay(write_fleet(tmp_path, "numa-aware"))
    node = sim.by_name["gpu-0"]
    # a Burstable pod's cpu fits any NUMA node: NUMA node 1's free GPU takes it
    burstable_gpu = pod("e", "2", "2Gi", 1)
    burstable_gpu["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}
    cases = [(pod("a", "8", "2Gi", 1), False), (pod("b", "8", "2Gi"), True), (pod("c", "13", "2Gi"), False),
             (pod("d", "12", "2Gi"), True), (burstable_gpu, True), (pod("f", "1", "2Gi", 2), False)]
    for _ in range(2):  # the second round answers from the kept verdicts
        for manifest, expected in cases:
            p = parse_pod(manifest)
            ask = FilterAsk.of(p)
            assert node.filter_fits(ask) is expected, manifest["metadata"]["name"]
            assert filter_pod(p, node.nrt(), node.allocatable).fits is expected


def test_the_none_cpu_policy_publishes_no_cpu_and_the_filter_leaves_cpu_out(tmp_path):
    devices_only = fleet_text("numa-aware").replace("cpuManagerPolicy: static, ", "").replace(
        'reservedSystemCPUs: "0,16", ', "")
    (tmp_path / "t.jsonl").write_text(json.dumps({"time": 0, "add": pod("g", "4", "1Gi", 1)}) + "\n")
    (tmp_path / "fleet.yaml").write_text(devices_only)
    sim, watch, summary = replay(str(tmp_path / "fleet.yaml"))
    node = sim.by_name["gpu-0"]
    assert not node.lists_cpu
    assert all("cpu" not in {r["name"] for r in z["resources"]} for z in node.nrt()["zones"])
    assert watch.answers["g"][0] == "gpu-0" and watch.answers["g"][1].admitted
    gpu = summary["variants"][0]["groups"][1]
    assert gpu["cpus"] == {"total": 64, "reserved": 0, "allocatable": 0, "exclusive": 0, "shared": 64}
    assert all("cpu" not in row for row in gpu["numa"])


def test_synthetic_machines_take_threads_per_core_for_the_static_policy(tmp_path):
    (tmp_path / "t.jsonl").write_text(json.dumps({"time": 0, "add": pod("p", "2", "1Gi")}) + "\n")
    (tmp_path / "fleet.yaml").write_text("""
nodes:
- name: s
  count: 1
  machine: {numaNodes: 2, memoryPerNode: 4Gi, coresPerNode: 2, threadsPerCore: 2}
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", topologyManagerPolicy: single-numa-node}
trace: t.jsonl
""")
    spec = load_fleet(str(tmp_path / "fleet.yaml"))
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    summary = build_summary(spec, execute(spec, events), events=1, bound=False)
    assert summary["variants"][0]["groups"][0]["cpus"] == {
        "total": 8, "reserved": 1, "allocatable": 7, "exclusive": 2, "shared": 6}


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("devices, message", [
    ("{nvidia.com/gpu: [{id: g, numaNodes: [0]}, {id: g, numaNodes: [1]}]}",
     "nodes[1].devices.nvidia.com/gpu[1].id: group 'gpu': duplicate device id \"g\" (also [0])"),
    ("{nvidia.com/gpu: [{id: g, numaNodes: [2]}]}",
     "nodes[1].devices.nvidia.com/gpu[0].numaNodes[0]: group 'gpu': NUMA node 2 is not on this machine "
     "(its NUMA nodes: 0, 1)"),
    ("{gpu: [{id: g}]}", "nodes[1].devices.gpu: group 'gpu': the ResourceName \"gpu\" is invalid"),
    ("{nvidia.com/gpu: [{id: g, numa: [0]}]}", "nodes[1].devices.nvidia.com/gpu[0].numa: group 'gpu': unknown key; did you mean \"numaNodes\"?"),
    ("{nvidia.com/gpu: [{numaNodes: [0]}]}", "nodes[1].devices.nvidia.com/gpu[0].id: group 'gpu': required key is missing"),
    ("{nvidia.com/gpu: [{id: g, healthy: maybe}]}", "nodes[1].devices.nvidia.com/gpu[0].healthy: group 'gpu'"),
    ("[gpu0]", "nodes[1].devices: group 'gpu': expected a map"),
    ("missing.yaml", "nodes[1].devices: group 'gpu': no such file: "),
])
def test_bad_device_declarations_are_one_clear_line(tmp_path, devices, message):
    code, _, err = run_cli("fleet", write_fleet(tmp_path, "numa-aware", devices=devices), "--no-progress")
    assert code == 2
    assert message in err, err
    assert "Traceback" not in err and err.count("\n") == 1


def test_devices_from_a_file_next_to_the_fleet(tmp_path):
    (tmp_path / "gpus.yaml").write_text("nvidia.com/gpu:\n- {id: gpu0, numaNodes: [0]}\n- {id: gpu1, numaNodes: [1]}\n")
    spec = load_fleet(write_fleet(tmp_path, "numa-aware", devices="gpus.yaml"))
    assert spec.groups[1].devices == {"nvidia.com/gpu": [{"id": "gpu0", "numaNodes": [0]},
                                                         {"id": "gpu1", "numaNodes": [1]}]}
    (tmp_path / "gpus.yaml").write_text("nvidia.com/gpu:\n- {id: gpu0, numaNodes: [0]}\n- {id: gpu0, numaNodes: [1]}\n")
    code, _, err = run_cli("fleet", str(tmp_path / "fleet.yaml"), "--no-progress")
    assert code == 2 and "gpus.yaml" in err and "group 'gpu'" in err and "duplicate device id" in err, err


# ----- the NRT kept pod by pod, with CPUs and devices -------------------------------------------------

SHAPES = st.tuples(st.sampled_from(["1", "2", "3", "500m", "1500m"]), st.sampled_from(["256Mi", "1Gi", "3Gi"]),
                   st.integers(0, 2), st.booleans())
OPS = st.lists(st.one_of(st.tuples(st.just("add"), st.lists(SHAPES, min_size=1, max_size=2)),
                         st.tuples(st.just("delete"), st.integers(0, 20))), min_size=1, max_size=10)


def manifest(name: str, containers: list[tuple[str, str, int, bool]]) -> dict:
    spec = []
    for i, (cpu, memory, gpus, burstable) in enumerate(containers):
        limits = {"cpu": cpu, "memory": memory, **({"example.com/gpu": str(gpus)} if gpus else {})}
        resources: dict = {"limits": limits}
        if burstable:
            resources["requests"] = {"cpu": "100m", "memory": "128Mi", **({"example.com/gpu": str(gpus)} if gpus else {})}
        spec.append({"name": f"c{i}", "resources": resources})
    return {"metadata": {"name": name, "uid": name}, "spec": {"containers": spec}}


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(numa=st.integers(1, 3), policy=st.sampled_from(["single-numa-node", "best-effort"]), ops=OPS)
def test_kept_with_cpus_and_devices_equals_the_whole_object(numa, policy, ops):
    machine = memorymanager.synthetic_machine(numa, 4 << 30, cores_per_node=2, threads_per_core=2)
    devices = {"example.com/gpu": [{"id": f"g{n}{k}", "numaNodes": [n]} for n in range(numa) for k in range(2)]
               + [{"id": "loose"}, {"id": "sick", "numaNodes": [0], "healthy": False}]}
    node = memorymanager.Node(machine, {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
                                        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
                                        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
                              devices=devices)
    view = NodeNRT("n", node)
    assert view.nrt() == node_nrt("n", node)
    running: list = []
    for i, (op, arg) in enumerate(ops):
        if op == "add":
            p = parse_pod(manifest(f"p{i}", arg))
            if node.admit(p).admitted:
                view.added(p)
                running.append(p)
        elif running:
            p = running.pop(arg % len(running))
            node.remove(p.uid)
            view.removed(p)
        assert view.nrt() == node_nrt("n", node), (op, arg)
        assert view.numa_zones() == numa_zones(view.nrt())  # what the filter reads, without the round trip


def test_the_gpu_fleet_example():
    """fixtures/fleets/gpus.yaml: with CPUs pinned, the third 8-CPU + GPU pod has no NUMA node left that
    holds both (unschedulable, no kubelet refusal); without pinning (`cpuManagerPolicy: none`) all run."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "fleets", "gpus.yaml")
    spec = load_fleet(path)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    summary = build_summary(spec, execute(spec, events), events=len(events), bound=False)
    pinned, unpinned = summary["variants"]
    assert (pinned["pods"]["admitted"], pinned["pods"]["unschedulable"], pinned["disagreements"]) == (4, 1, 0)
    assert pinned["groups"][1]["devices"]["nvidia.com/gpu"]["allocated"] == 3
    assert (unpinned["pods"]["admitted"], unpinned["pods"]["unschedulable"], unpinned["disagreements"]) == (5, 0, 0)
    assert unpinned["groups"][1]["cpus"]["exclusive"] == 0
    # stranded CPUs: the unschedulable pod needs 8 exclusive CPUs on one NUMA node; gpu-0 keeps 12 free on node 0
    # (not stranded), gpu-1 6 on node 0 (stranded) and 8 on node 1 (not stranded: 8 is enough)
    assert pinned["smallestUnplacedCPUNeed"] == 8
    assert [(row["cpu"]["free"], row["cpu"]["stranded"]) for row in pinned["groups"][1]["numa"]] == [(18, 6), (8, 0)]
    assert [row["cpu"]["stranded"] for row in pinned["groups"][0]["numa"]] == [0, 0]  # plain-0: 14 and 16 free
    assert unpinned["smallestUnplacedCPUNeed"] == 0 and all("cpu" not in row for row in unpinned["groups"][1]["numa"])


@pytest.mark.parametrize("scope, gates, containers, pod_level, need", [
    ("container", {}, [("4", True), ("2", True)], None, 4),  # the largest container's exclusive CPUs
    ("pod", {}, [("4", True), ("2", True)], None, 6),  # the pod's
    ("container", {}, [("1500m", True)], None, 0),  # fractional: the shared pool
    ("container", {}, [("4", False)], None, 0),  # Burstable: none
    ("container", {"PodLevelResourceManagers": True}, [("2", True)], "6", 6),  # a pod-level CPU set
    ("container", {}, [("2", True)], "6", 0),  # pod-level resources without the gate: the CPU manager skips it
])
def test_the_exclusive_cpu_need_of_a_pod_that_did_not_run(scope, gates, containers, pod_level, need):
    from kubeinputs.kubelet_config import parse_kubelet_config
    from memorymanager.fleet.simulate import _cpu_need

    def resources(cpu, exclusive):
        return {"requests": {"cpu": cpu, "memory": "1Gi"}, **({"limits": {"cpu": cpu, "memory": "1Gi"}} if exclusive else {})}

    spec: dict = {"containers": [{"name": f"c{i}", "resources": resources(c, e)} for i, (c, e) in enumerate(containers)]}
    if pod_level:
        spec["resources"] = {"requests": {"cpu": pod_level, "memory": "6Gi"}, "limits": {"cpu": pod_level, "memory": "6Gi"}}
    kubelet = parse_kubelet_config({"cpuManagerPolicy": "static", "topologyManagerScope": scope,
                                    "featureGates": gates}, "k")
    assert _cpu_need(parse_pod({"metadata": {"name": "p"}, "spec": spec}), kubelet) == need


def test_the_gpu_fleet_gives_one_summary_on_any_worker_count():
    """The groups' devices reach worker processes with the spec: the summary is byte-identical."""
    from memorymanager.fleet.summary import dumps

    path = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "fleets", "gpus.yaml")
    spec = load_fleet(path)
    events = load_trace(spec.trace, spec.templates, spec.node_names())
    texts = [dumps(build_summary(spec, execute(spec, events, workers=w), events=len(events), bound=False)) for w in (1, 2)]
    assert texts[0] == texts[1] and '"nvidia.com/gpu"' in texts[0]
