"""The CPU manager's placement applied through the backend: `cpuset.cpus` in the container changes
(exclusive CPUs, else the shared pool, which every shared container follows as it shrinks and grows),
the EXCLUSIVE_CPUS / SHARED_CPUS exports as topology-aware writes them, and the `cpuset` zone attributes."""
from __future__ import annotations

import memorymanager
from memorymanager import resmgr as r

from tests.resmgr.helpers import STATIC, container, make_policy

# 2 NUMA nodes of 4 cores x 2 threads: node 0 holds CPUs 0-3,8-11, node 1 CPUs 4-7,12-15; CPU 0 reserved
MACHINE = memorymanager.synthetic_machine(2, 8 << 30, cores_per_node=4, threads_per_core=2)
CPU_STATIC = {**STATIC, "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
POOL = "0,2-8,10-15"  # the shared pool once CPUs 1 and 9 are exclusive


def U(cid: str, cpus: object = None, mems: object = None) -> r.ContainerUpdate:
    return r.ContainerUpdate(cid, cpus, mems)  # type: ignore[arg-type]


def start(tmp_path, **extra: object):
    return make_policy(str(tmp_path), {**CPU_STATIC, **extra}, machine=MACHINE)


def test_exclusive_and_shared_cpusets_in_the_changes(tmp_path) -> None:
    policy, owner = start(tmp_path)
    # exclusive CPUs: the container's own; nobody shares a pool yet
    assert owner.create_container(container("a", "1Gi", cpu="2")) == (U("a-app", "1,9", "0"), [])
    # a fractional CPU: the shared pool, as kubelet's CPU manager leaves it
    assert owner.create_container(container("b", "1Gi", cpu="500m")) == (U("b-app", POOL, "0"), [])
    # more exclusive CPUs: the pool shrinks, and the shared container follows it (cpus only)
    assert owner.create_container(container("c", "1Gi", cpu="2")) == (
        U("c-app", "2,10", "0"), [U("b-app", "0,3-8,11-15")])
    # released: the pool grows back
    assert owner.stop_container(policy.cache.lookup("c-app")) == [U("b-app", POOL)]
    # not Guaranteed: the shared pool and no memory pinning
    burst = container("d", "2Gi", requests={"cpu": "1", "memory": "1Gi"})
    assert owner.create_container(burst) == (U("d-app", POOL), [])
    assert owner.lock.retakes == 0 and policy.cache.pending() == []


def test_exports_follow_topology_aware(tmp_path) -> None:
    policy, owner = start(tmp_path)
    a, b = container("a", "1Gi", cpu="2"), container("b", "1Gi", cpu="500m")
    best_effort = r.Container("e-app", {"metadata": {"name": "e"}, "spec": {"containers": [{"name": "app"}]}}, "app")
    for c in (a, b, best_effort):
        owner.create_container(c)
    assert policy.backend.export_resource_data(a) == {"EXCLUSIVE_CPUS": "1,9", "MEMS": "0"}
    assert policy.backend.export_resource_data(b) == {"SHARED_CPUS": POOL, "MEMS": "0"}
    assert policy.backend.export_resource_data(best_effort) == {}  # no CPU request: no shared portion
    assert (tmp_path / "containers" / "a-app" / "resources.sh").read_text() == 'EXCLUSIVE_CPUS="1,9"\nMEMS="0"\n'


def test_zone_cpu_attributes(tmp_path) -> None:
    policy, owner = start(tmp_path, containerZones=True)
    owner.create_container(container("a", "1Gi", cpu="2"))
    zones = {z.name: z for z in policy.get_topology_zones()}
    assert [(a.name, a.value) for a in zones["node-0"].attributes] == [
        ("memory set", "0"), ("cpuset", "1-3,8-11"), ("shared cpuset", "0,2-3,8,10-11"), ("reserved cpuset", "0")]
    assert [(a.name, a.value) for a in zones["node-1"].attributes] == [
        ("memory set", "1"), ("cpuset", "4-7,12-15"), ("shared cpuset", "4-7,12-15")]
    sub = zones["default/a/app"]
    assert sub.type == "allocation for container" and sub.parent == "node-0"
    assert [(a.name, a.value) for a in sub.attributes] == [("cpuset", "1,9"), ("memory set", "0")]


def test_no_cpu_attributes_when_the_cpu_manager_pins_nothing(tmp_path) -> None:
    policy, owner = make_policy(str(tmp_path), {**STATIC, "containerZones": True}, machine=MACHINE)
    assert owner.create_container(container("a", "1Gi", cpu="2")) == (U("a-app", None, "0"), [])
    assert [[a.name for a in z.attributes] for z in policy.get_topology_zones()] == [
        ["memory set"], ["memory set"], ["memory set"]]
    assert policy.backend.export_resource_data(policy.cache.lookup("a-app")) == {"MEMS": "0"}


def test_restart_keeps_exclusive_cpus(tmp_path) -> None:
    policy, owner = start(tmp_path)
    owner.create_container(container("x", "1Gi", cpu="2"))  # 1,9
    owner.create_container(container("a", "1Gi", cpu="2"))  # 2,10
    owner.create_container(container("b", "1Gi", cpu="500m"))
    owner.stop_container(policy.cache.lookup("x-app"))  # 1,9 free again: placing a anew would take them
    again, owner2 = start(tmp_path)
    pool = "0-1,3-9,11-15"
    assert owner2.synchronize(list(again.cache)) == [U("a-app", "2,10", "0"), U("b-app", pool, "0")]
    assert [(c.id, c.cpus) for c in again.cache] == [("a-app", "2,10"), ("b-app", pool)]


def test_exclusive_cpus_kept_without_memory_pinning(tmp_path) -> None:
    """Under the memory manager's None policy a container holds no memory, yet its exclusive CPUs are kept
    through a restart and Synchronize (re-adopted, not admitted anew)."""
    policy, owner = start(tmp_path, memoryManagerPolicy="None", reservedMemory=[])
    assert policy.active_policy() == "kubelet-none"
    owner.create_container(container("x", "1Gi", cpu="2"))  # 1,9
    owner.create_container(container("a", "1Gi", cpu="2"))  # 2,10
    owner.stop_container(policy.cache.lookup("x-app"))  # 1,9 free again: placing a anew would take them
    again, owner2 = start(tmp_path, memoryManagerPolicy="None", reservedMemory=[])
    assert owner2.synchronize(list(again.cache)) == [U("a-app", "2,10")]


def test_cpu_metrics_follow_nri_plugins_system_collector(tmp_path) -> None:
    """cpu_allocation / cpu_container_count per CPU (nri-plugins pkg/resmgr/policy/metrics.go): each container
    counts on every CPU of its cpuset.cpus, its milli-CPU request spread over them (integer division)."""
    from prometheus_client import generate_latest

    policy, owner = start(tmp_path)
    owner.create_container(container("a", "1Gi", cpu="2"))  # exclusive 1,9: 1000m each
    owner.create_container(container("b", "1Gi", cpu="500m"))  # the shared pool (14 CPUs): 500 // 14 = 35m each
    cpus = policy.collector.cpus
    assert sorted(cpus) == list(range(16))  # every CPU of the machine, the reserved one too
    assert (cpus[1].allocation, cpus[1].container_count) == (1000, 1)
    assert (cpus[9].allocation, cpus[9].container_count) == (1000, 1)
    pool = (0, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15)  # POOL, the reserved CPU 0 in it
    assert {(cpus[c].allocation, cpus[c].container_count) for c in pool} == {(35, 1)}
    text = generate_latest(policy.registry).decode()
    assert 'cpu_allocation{cpu_id="9"} 1000.0' in text and 'cpu_container_count{cpu_id="0"} 1.0' in text
    owner.stop_container(policy.cache.lookup("a-app"))  # released: the pool grows to 16 CPUs, 500 // 16 = 31m
    assert {(m.allocation, m.container_count) for m in policy.collector.cpus.values()} == {(31, 1)}
    assert 'mem_node_usage{node_id="0"}' in generate_latest(policy.registry).decode()  # the memory side stays


def test_no_cpu_pinning_no_cpu_allocation(tmp_path) -> None:
    """Under the CPU manager's none policy kubelet sets no cpuset: every CPU is reported, with nothing on it."""
    policy, owner = make_policy(str(tmp_path), dict(STATIC), machine=MACHINE)
    owner.create_container(container("a", "1Gi", cpu="2"))
    assert {(m.allocation, m.container_count) for m in policy.collector.cpus.values()} == {(0, 0)}
    assert len(policy.collector.cpus) == 16
