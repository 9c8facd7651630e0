"""Reading NUMA topology from sysfs the way cadvisor does (fake trees, tmp trees, and this machine's /sys)."""
from tests.helpers.paths import FIXTURES as FIXTURES_ROOT
from pathlib import Path

import pytest

from kubeinputs.errors import InputError
from kubeinputs.machine import machine_info_to_obj, parse_machine_info
from kubeinputs.sysfs import read_machine_info

FIXTURES = FIXTURES_ROOT / "sysfs"
GI = 1 << 30


def test_two_nodes_with_hugepages():
    mi = read_machine_info(FIXTURES / "two-nodes-hugepages")
    assert [n.node_id for n in mi.topology] == [0, 1]
    assert [n.memory for n in mi.topology] == [8 * GI, 8 * GI]
    # folders sorted by name: hugepages-1048576kB before hugepages-2048kB
    assert [(h.page_size, h.num_pages) for h in mi.topology[0].hugepages] == [(1048576, 2), (2048, 512)]
    assert [(h.page_size, h.num_pages) for h in mi.topology[1].hugepages] == [(1048576, 1), (2048, 256)]
    assert [n.distances for n in mi.topology] == [[10, 21], [21, 10]]
    assert [(c["core_id"], c["socket_id"], c["thread_ids"]) for c in mi.topology[0].cores] == [(0, 0, [0, 4]), (1, 0, [1, 5])]
    assert [(c["core_id"], c["socket_id"], c["thread_ids"]) for c in mi.topology[1].cores] == [(0, 1, [2, 6]), (1, 1, [3, 7])]
    assert (mi.num_cores, mi.memory_capacity) == (8, 16 * GI)
    assert mi.extra["hugepages"] == [{"page_size": 1048576, "num_pages": 3}, {"page_size": 2048, "num_pages": 768}]


def test_memory_only_node_and_offline_cpu():
    mi = read_machine_info(FIXTURES / "memory-only-node")
    assert [n.node_id for n in mi.topology] == [0, 1, 2]
    assert mi.topology[2].cores is None  # CPU-less (CXL) node is still a NUMA node
    assert mi.topology[2].memory == 16 * GI
    assert [c["thread_ids"] for c in mi.topology[1].cores] == [[2]]  # cpu3 is offline
    assert mi.num_cores == 3
    assert mi.topology[2].distances == [14, 24, 10]


def test_result_is_valid_cadvisor_json():
    for tree in ("two-nodes-hugepages", "memory-only-node"):
        mi = read_machine_info(FIXTURES / tree)
        assert machine_info_to_obj(parse_machine_info(machine_info_to_obj(mi))) == machine_info_to_obj(mi)


def make_node(root: Path, node_id: int, *, meminfo_kb=None, distance=None, hugepages=(), cpus=()):
    node = root / "devices" / "system" / "node" / f"node{node_id}"
    node.mkdir(parents=True)
    if meminfo_kb is not None:
        (node / "meminfo").write_text(f"Node {node_id} MemTotal:  {meminfo_kb} kB\nNode {node_id} MemFree: 1 kB\n")
    if distance is not None:
        (node / "distance").write_text(distance)
    for size, count in hugepages:
        folder = node / "hugepages" / f"hugepages-{size}kB"
        folder.mkdir(parents=True)
        (folder / "nr_hugepages").write_text(count)
    for cpu_id, core_id, package, online in cpus:
        topo = node / f"cpu{cpu_id}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{core_id}\n")
        (topo / "physical_package_id").write_text(f"{package}\n")
        if online is not None:
            (node / f"cpu{cpu_id}" / "online").write_text(online)
    return node


def test_nodes_in_lexical_order(tmp_path):
    for node_id in (0, 1, 2, 10, 11):
        make_node(tmp_path, node_id, meminfo_kb=1024)
    (tmp_path / "devices" / "system" / "node" / "online").write_text("0-2,10-11\n")
    mi = read_machine_info(tmp_path)
    assert [n.node_id for n in mi.topology] == [0, 1, 10, 11, 2]


def test_missing_files_give_cadvisor_defaults(tmp_path):
    make_node(tmp_path, 0)
    mi = read_machine_info(tmp_path)
    node = mi.topology[0]
    assert (node.memory, node.hugepages, node.distances, node.cores) == (0, [], None, None)
    assert "hugepages" not in mi.extra


def test_cpus_in_lexical_order_and_all_offline(tmp_path):
    make_node(tmp_path, 0, cpus=[(10, 0, 0, "1\n"), (2, 1, 0, None), (1, 0, 0, None)])
    make_node(tmp_path, 1, cpus=[(3, 0, 1, "0\n")])
    mi = read_machine_info(tmp_path)
    assert [c["thread_ids"] for c in mi.topology[0].cores] == [[1, 10], [2]]
    assert mi.topology[1].cores == []  # CPUs exist but all offline: an empty list, not null


def test_missing_node_folder_is_a_clear_error(tmp_path):
    with pytest.raises(InputError) as err:
        read_machine_info(tmp_path)
    assert str(err.value).startswith(str(tmp_path / "devices" / "system" / "node"))
    assert "not found" in str(err.value)
    (tmp_path / "devices" / "system" / "node").mkdir(parents=True)
    with pytest.raises(InputError, match="no NUMA node folders"):
        read_machine_info(tmp_path)


@pytest.mark.parametrize("kwargs,message", [
    ({"hugepages": [(2048, "many\n")]}, "expected a number"),
    ({"distance": "10 x\n"}, "expected space-separated numbers"),
    ({"cpus": [(0, "a", 0, None)]}, "expected a number"),
])
def test_malformed_files(tmp_path, kwargs, message):
    make_node(tmp_path, 0, meminfo_kb=1024, **kwargs)
    with pytest.raises(InputError, match=message):
        read_machine_info(tmp_path)


def test_meminfo_without_memtotal(tmp_path):
    node = make_node(tmp_path, 0)
    (node / "meminfo").write_text("Node 0 MemFree: 1 kB\n")
    with pytest.raises(InputError, match="no MemTotal line"):
        read_machine_info(tmp_path)


@pytest.mark.skipif(not Path("/sys/devices/system/node/node0").is_dir(), reason="no NUMA sysfs on this machine")
def test_smoke_real_sysfs():
    mi = read_machine_info()
    assert mi.topology, "at least one NUMA node"
    assert len({n.node_id for n in mi.topology}) == len(mi.topology)
    assert mi.num_cores >= 1 and mi.memory_capacity > 0
    assert all(n.memory > 0 for n in mi.topology if n.cores)
    assert parse_machine_info(machine_info_to_obj(mi)).num_cores == mi.num_cores


def test_cpu_topology_and_caches_as_cadvisor_reads_them():
    """Two CCX L3 caches on node 0 are its cores' uncore caches; node 1's L3 spans the whole node: a node cache."""
    mi = read_machine_info(FIXTURES / "two-ccx-per-node")
    node0, node1 = mi.topology
    assert [(c["core_id"], c["socket_id"], c["thread_ids"]) for c in node0.cores][:3] == [
        (0, 0, [0, 8]), (1, 0, [1, 9]), (2, 0, [10, 2])]  # cpu folders in lexical order: cpu10 before cpu2
    assert [[u["id"] for u in c["uncore_caches"]] for c in node0.cores] == [[0], [0], [1], [1]]
    assert node0.cores[0]["caches"] == [{"id": 0, "size": 32 << 10, "type": "Data", "level": 1},
                                        {"id": 0, "size": 32 << 10, "type": "Instruction", "level": 1},
                                        {"id": 0, "size": 512 << 10, "type": "Unified", "level": 2}]
    assert node0.caches is None and all(c["uncore_caches"] is None for c in node1.cores)
    assert node1.caches == [{"id": 2, "size": 16 << 20, "type": "Unified", "level": 3}]
    assert machine_info_to_obj(parse_machine_info(machine_info_to_obj(mi))) == machine_info_to_obj(mi)


def test_the_cpu_manager_reads_the_uncore_caches_of_a_sysfs_tree():
    """Node.from_host on the tree: with prefer-align-cpus-by-uncorecache a 4-CPU container takes one CCX."""
    import memorymanager

    node = memorymanager.Node.from_host({"cpuManagerPolicy": "static", "reservedSystemCPUs": "4",
                                         "cpuManagerPolicyOptions": {"prefer-align-cpus-by-uncorecache": "true"}},
                                        sysfs_root=FIXTURES / "two-ccx-per-node")
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "4", "memory": "1Gi"}}}]}}
    assert node.admit(pod).placements["c"].cpuset_cpus == "0-1,8-9"


def test_unreadable_cache_information_is_left_out(tmp_path):
    """cadvisor ignores a node whose cache files cannot be read (some kernels have none): no error."""
    make_node(tmp_path, 0, meminfo_kb=1024, cpus=[(0, 0, 0, None)])
    index = tmp_path / "devices" / "system" / "cpu" / "cpu0" / "cache" / "index0"
    index.mkdir(parents=True)
    for name, text in (("id", "0"), ("size", "32K"), ("level", "1"), ("type", "Data")):  # no shared_cpu_map
        (index / name).write_text(text + "\n")
    core = read_machine_info(tmp_path).topology[0].cores[0]
    assert (core["caches"], core["uncore_caches"]) == (None, None)
