"""The simulated node with the CPU manager and the device manager wired in as kubelet wires them
(cm/container_manager_linux.go): creation, registration and start order, container lifecycle,
restart from the three checkpoints, in-memory forks, and the Python API's surface of both."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memorymanager
from kubeinputs.cpuset import CPUSet
from kubeinputs.devices import Device
from kubeinputs.kubelet_config import parse_kubelet_config
from memorymanager.node.simulated_node import KubeletStartError, SimulatedNode, combined_hints
from tests.fuzz.harness import budget
from topologymanager.hint import TopologyHint

# 2 NUMA nodes of 4 cores x 2 threads: node 0 holds CPUs 0-3,8-11, node 1 CPUs 4-7,12-15
MACHINE = memorymanager.synthetic_machine(2, 16 << 30, cores_per_node=4, threads_per_core=2)
STATIC = {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "memoryManagerPolicy": "Static",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
          "topologyManagerPolicy": "single-numa-node"}
GPUS = {"nvidia.com/gpu": [{"id": "g0", "numaNodes": [0]}, {"id": "g1", "numaNodes": [1]}]}


def pod(name: str, cpu: str = "2", memory: str = "1Gi", gpus: int = 0, init: bool = False) -> dict:
    limits: dict = {"cpu": cpu, "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    spec: dict = {"containers": [{"name": "app", "resources": {"limits": limits}}]}
    if init:
        spec["initContainers"] = [{"name": "init", "resources": {"limits": dict(limits)}}]
    return {"metadata": {"name": name}, "spec": spec}


def test_providers_are_created_registered_and_started_in_kubelets_order() -> None:
    """Device manager, CPU manager, memory manager are the topology manager's providers in that order; the
    injected hints are one more provider after them."""
    node = memorymanager.Node(MACHINE, STATIC, devices=GPUS)
    node.admit(pod("a", gpus=1), hints={"app": {"example.com/x": [([0], True)]}})
    sim = node.simulated_node
    providers = [getattr(p, "inner", p) for p in sim.topology_manager.scope.hint_providers]
    assert providers[:3] == [sim.device_manager, sim.cpu_manager, sim.memory_manager]
    assert len(providers) == 4  # the injected hints' slot


@pytest.mark.parametrize("kubelet,message", [
    # the CPU manager is created before the memory manager: its error comes first
    ({**STATIC, "cpuManagerPolicyOptions": {"nope": "true"}, "memoryManagerPolicy": "static"},
     'new static policy error: unknown CPU Manager Policy option: "nope"'),
    # ... but the memory manager is created (and refuses) before either is started
    ({**STATIC, "memoryManagerPolicy": "static"}, 'unknown policy: "static"'),
    # reservedSystemCPUs are checked against the machine before any manager exists (server.go)
    ({**STATIC, "reservedSystemCPUs": "0,99", "cpuManagerPolicy": "none"},
     "reserved-cpus: 0,99 is not a subset of online-cpus: 0-15"),
])
def test_start_errors_come_in_kubelets_order(kubelet, message) -> None:
    with pytest.raises(KubeletStartError) as err:
        memorymanager.Node(MACHINE, kubelet).start()
    assert message in str(err.value)


def test_a_cpu_checkpoint_error_is_the_cpu_managers_start_error(tmp_path) -> None:
    (tmp_path / "cpu_manager_state").write_text('{"policyName":"none","defaultCpuSet":"","checksum":1}')
    with pytest.raises(KubeletStartError, match="^start cpu manager error: could not restore state from checkpoint"):
        memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path).start()


def test_placements_carry_cpus_and_devices_and_hints_every_provider() -> None:
    node = memorymanager.Node(MACHINE, STATIC, devices=GPUS)
    hints = node.hints(pod("a", gpus=1))["app"]
    assert list(hints) == ["nvidia.com/gpu", "cpu", "memory"]  # registration order
    assert hints["cpu"] == [TopologyHint.of([0], True), TopologyHint.of([1], True), TopologyHint.of([0, 1], False)]
    placed = node.admit(pod("a", gpus=1)).placements["app"]
    assert (placed.numa_nodes, placed.cpus, placed.cpuset_cpus, placed.devices, placed.cpuset_mems) == (
        (0,), (1, 9), "1,9", {"nvidia.com/gpu": ("g0",)}, "0")
    shared = node.admit(pod("b", cpu="500m")).placements["app"]  # fractional: the shared pool
    assert (shared.cpus, shared.cpuset_cpus) == ((), "0,2-8,10-15")


def test_a_node_without_cpu_manager_or_devices_places_as_before() -> None:
    node = memorymanager.Node(MACHINE, {k: v for k, v in STATIC.items() if k != "cpuManagerPolicy"})
    placed = node.admit(pod("a")).placements["app"]
    assert (placed.cpus, placed.cpuset_cpus, placed.devices) == ((), "", {})
    assert repr(placed) == "Placement(numa_nodes=(0,), preferred=True, memory={'memory': 1073741824}, cpuset_mems='0')"
    assert list(node.hints(pod("b"))["app"]) == ["memory"]


def test_combined_hints_keep_the_memory_managers_answer_when_others_have_none() -> None:
    memory = {"memory": [TopologyHint.of([0], True)]}
    assert combined_hints([{}, None, memory]) is memory
    assert combined_hints([{}, None, None]) is None
    assert combined_hints([{"nvidia.com/gpu": []}, None, None]) == {"nvidia.com/gpu": []}


def test_removal_releases_cpus_and_inactive_pods_release_devices() -> None:
    node = memorymanager.Node(MACHINE, STATIC, devices=GPUS)
    node.admit(pod("a", cpu="6", gpus=1))
    sim = node.simulated_node
    node.remove("a", "app")  # one container: its CPUs go back, the device stays (the pod is active)
    assert sim.cpu_manager.get_default_cpu_set() == CPUSet.parse("0-15")
    assert sim.device_manager.allocated_devices() == {"nvidia.com/gpu": {"g0"}}
    node.remove("a")
    assert sim.device_manager.allocated_devices() == {"nvidia.com/gpu": {"g0"}}  # lazily, as kubelet
    assert node.admit(pod("b", gpus=2), ).admitted is False  # single-numa-node: no node has 2 GPUs
    sim.remove_stale_state()
    assert sim.device_manager.allocated_devices() == {}


def test_restart_restores_all_three_checkpoints(tmp_path) -> None:
    node = memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path, devices=GPUS)
    before = node.admit(pod("a", gpus=1)).placements["app"]
    assert sorted(os.listdir(tmp_path)) == ["cpu_manager_state", "device-plugins", "memory_manager_state"]
    assert os.listdir(tmp_path / "device-plugins") == ["kubelet_internal_checkpoint"]
    node.restart()
    again = node.admit(pod("a", gpus=1)).placements["app"]  # kubelet re-admits its running pods
    assert again == before
    # the CPU config is a restart field: kubelet refuses the old file
    with pytest.raises(KubeletStartError, match='configured policy "none" differs from state checkpoint policy "static"'):
        node.restart(cpuManagerPolicy="none")


def test_would_admit_touches_no_checkpoint(tmp_path) -> None:
    node = memorymanager.Node(MACHINE, STATIC, state_dir=tmp_path, devices=GPUS)
    node.admit(pod("a", gpus=1))
    files = {p: open(os.path.join(tmp_path, p), "rb").read()
             for p in ("cpu_manager_state", "memory_manager_state", "device-plugins/kubelet_internal_checkpoint")}
    assert node.would_admit(pod("b", cpu="4", gpus=1)).placements["app"].devices == {"nvidia.com/gpu": ("g1",)}
    for path, blob in files.items():
        assert open(os.path.join(tmp_path, path), "rb").read() == blob, path
    assert node.simulated_node.device_manager.allocated_devices() == {"nvidia.com/gpu": {"g0"}}


def test_the_runners_throwaway_folder_defers_the_cpu_checkpoint(tmp_path) -> None:
    """write_behind holds the CPU manager's writes like the memory manager's; the file is kubelet's at the end."""
    config = parse_kubelet_config(STATIC)
    deferred = SimulatedNode(MACHINE, config, str(tmp_path / "a"))
    deferred.write_behind = True
    durable = SimulatedNode(MACHINE, config, str(tmp_path / "b"))
    for node in (deferred, durable):
        node.start()
    from kubeinputs.pod import parse_pod
    for i in range(3):
        for node in (deferred, durable):
            node.admit(parse_pod(pod(f"p{i}")))
    deferred.end_write_behind()
    assert (tmp_path / "a" / "cpu_manager_state").read_bytes() == (tmp_path / "b" / "cpu_manager_state").read_bytes()


@pytest.mark.parametrize("devices,where,reason", [
    (5, "devices", "expected a map of resource name to a list of devices"),
    ({"nvidia.com/gpu": None}, "devices.nvidia.com/gpu", "got None"),
    ({"nvidia.com/gpu": [{"id": "g0", "numaNodes": None}]}, "devices.nvidia.com/gpu[0].numaNodes", "got None"),
    ({"nvidia.com/gpu": [{"id": "g0"}, {"id": "g0"}]}, "devices.nvidia.com/gpu[1].id", 'duplicate device id "g0"'),
    ({"nvidia.com/gpu": [{"id": "g0", "numaNodes": [7]}]}, "devices.nvidia.com/gpu[0].numaNodes[0]",
     "NUMA node 7 is not on this machine"),
    ({"gpu": [{"id": "g0"}]}, "devices.gpu", 'the ResourceName "gpu" is invalid'),
    ("no-such-file.yaml", "devices", "no such file"),
])
def test_devices_argument_is_checked_at_the_front_door(devices, where, reason) -> None:
    with pytest.raises(memorymanager.InputError) as err, budget(20):
        memorymanager.Node(MACHINE, STATIC, devices=devices)
    assert (err.value.where, reason in err.value.reason) == (where, True), str(err.value)


def test_devices_from_a_file_or_as_device_objects(tmp_path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_text("nvidia.com/gpu:\n- {id: g0, numaNodes: [1]}\n")
    for devices in (path, str(path), {"nvidia.com/gpu": [Device("g0", (1,))]}):
        node = memorymanager.Node(MACHINE, STATIC, devices=devices)
        assert node.admit(pod("a", gpus=1)).placements["app"].numa_nodes == (1,)


def test_fractional_and_negative_device_requests_are_the_api_servers_errors() -> None:
    node = memorymanager.Node(MACHINE, STATIC, devices=GPUS)
    with pytest.raises(memorymanager.InputError, match="must be an integer"):
        node.admit({"metadata": {"name": "a"}, "spec": {"containers": [
            {"name": "app", "resources": {"limits": {"nvidia.com/gpu": "500m"}}}]}})
    with pytest.raises(memorymanager.InputError, match="must be greater than or equal to 0"):
        node.admit({"metadata": {"name": "a"}, "spec": {"containers": [
            {"name": "app", "resources": {"limits": {"nvidia.com/gpu": "-1"}}}]}})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["admit", "remove"]), st.integers(0, 5), st.sampled_from(["1", "2", "3", "4"]),
                          st.integers(0, 1), st.booleans()), min_size=1, max_size=12))
def test_no_cpu_or_device_is_given_twice_and_restart_changes_nothing(tmp_path_factory, ops) -> None:
    """Through the node: exclusive + shared + reserved CPUs are every CPU, no CPU and no device is held by two
    containers, and a restart from the checkpoints gives the same state."""
    folder = tmp_path_factory.mktemp("state")
    node = memorymanager.Node(MACHINE, {**STATIC, "topologyManagerPolicy": "best-effort"}, state_dir=folder, devices=GPUS)
    for op, i, cpu, gpus, init in ops:
        if op == "admit" and f"p{i}" not in node.pods():  # a running pod's spec does not change
            node.admit(pod(f"p{i}", cpu=cpu, gpus=gpus, init=init))
        elif f"p{i}" in node.pods():
            node.remove(f"p{i}")
    sim = node.simulated_node
    cm, dm = sim.cpu_manager, sim.device_manager
    exclusive = [cpus for pod_ in sim.active_pods() for c in pod_.all_containers()
                 if (cpus := cm.get_cpus(pod_.uid, c.name)) is not None and c not in pod_.init_containers]
    flat = [cpu for cpus in exclusive for cpu in cpus]
    assert len(flat) == len(set(flat))
    state = cm.state()
    everything = state.get_default_cpu_set().union(*(s for cs in state.get_cpu_assignments().values() for s in cs.values()))
    assert everything == CPUSet.parse("0-15")
    held = [d for p in sim.active_pods() for c in p.containers for ids in (dm.get_devices(p.uid, c.name) or {}).values()
            for d in ids]
    assert len(held) == len(set(held))
    # the device manager frees an inactive pod's devices in memory first and writes its file later (as kubelet):
    # compare once both sides dropped what belongs to no active pod
    sim.remove_stale_state()
    before = (state.get_default_cpu_set(), state.get_cpu_assignments(), dm.allocated_devices())
    node.restart()
    node.simulated_node.remove_stale_state()
    state = node.simulated_node.cpu_manager.state()
    assert (state.get_default_cpu_set(), state.get_cpu_assignments(),
            node.simulated_node.device_manager.allocated_devices()) == before
