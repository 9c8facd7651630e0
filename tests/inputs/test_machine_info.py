"""cadvisor MachineInfo JSON parsing, writing back, hugepage resource names and the fixture machines."""
from tests.helpers.paths import FIXTURES as FIXTURES_ROOT
import copy
import json
from pathlib import Path

import pytest

from kubeinputs.errors import InputError
from kubeinputs.machine import (hugepage_resource_name, load_machine_info, machine_hugepage_capacity,
                                   machine_info_to_obj, parse_machine_info)

FIXTURES = FIXTURES_ROOT / "machines"
GI = 1 << 30

# The kubelet-interfaces example document (cadvisor field names), copied here.
CADVISOR_DOC = {
    "timestamp": "2025-01-01T00:00:00Z", "vendor_id": "GenuineIntel",
    "num_cores": 8, "num_physical_cores": 4, "num_sockets": 2, "cpu_frequency_khz": 2600000,
    "memory_capacity": 137438953472, "swap_capacity": 0, "memory_by_type": {},
    "nvm": {"memory_mode_capacity": 0, "app direct_mode_capacity": 0, "avg_power_budget": 0},
    "hugepages": [{"page_size": 1048576, "num_pages": 2}, {"page_size": 2048, "num_pages": 1024}],
    "machine_id": "0123456789abcdef0123456789abcdef", "system_uuid": "4C4C4544-0000-0000-0000-000000000000",
    "boot_id": "5d1e0c9e-0000-0000-0000-000000000000", "filesystems": [], "disk_map": {}, "network_devices": [],
    "topology": [
        {"node_id": 0, "memory": 68719476736,
         "hugepages": [{"page_size": 1048576, "num_pages": 2}, {"page_size": 2048, "num_pages": 512}],
         "cores": [{"core_id": 0, "thread_ids": [0, 4], "caches": [{"id": 0, "size": 49152, "type": "Data", "level": 1}],
                    "uncore_caches": None, "socket_id": 0},
                   {"core_id": 1, "thread_ids": [1, 5], "caches": None, "uncore_caches": None, "socket_id": 0}],
         "caches": [{"id": 0, "size": 31457280, "type": "Unified", "level": 3}], "distances": [10, 21]},
        {"node_id": 1, "memory": 68719476736,
         "hugepages": [{"page_size": 1048576, "num_pages": 0}, {"page_size": 2048, "num_pages": 512}],
         "cores": [{"core_id": 0, "thread_ids": [2, 6], "caches": None, "uncore_caches": None, "socket_id": 1},
                   {"core_id": 1, "thread_ids": [3, 7], "caches": None, "uncore_caches": None, "socket_id": 1}],
         "caches": None, "distances": [21, 10]},
    ],
    "cloud_provider": "Unknown", "instance_type": "Unknown", "instance_id": "None",
}


def test_parse_cadvisor_document():
    mi = parse_machine_info(CADVISOR_DOC)
    assert (mi.num_cores, mi.memory_capacity) == (8, 137438953472)
    assert [n.node_id for n in mi.topology] == [0, 1]
    node0 = mi.topology[0]
    assert node0.memory == 64 * GI
    assert [(h.page_size, h.num_pages) for h in node0.hugepages] == [(1048576, 2), (2048, 512)]
    assert node0.distances == [10, 21]
    assert node0.cores[0]["thread_ids"] == [0, 4]
    assert mi.extra["vendor_id"] == "GenuineIntel"


def test_round_trip_to_cadvisor_json():
    mi = parse_machine_info(copy.deepcopy(CADVISOR_DOC))
    obj = machine_info_to_obj(mi)
    assert obj == CADVISOR_DOC
    assert list(obj) == list(CADVISOR_DOC)  # cadvisor's field order


def test_minimal_document_and_defaults():
    mi = parse_machine_info({"topology": [
        {"node_id": 0, "memory": 4 * GI, "cores": [{"core_id": 0, "thread_ids": [0, 1]}]},
        {"node_id": 1, "memory": 4 * GI, "cores": None},
    ]})
    assert mi.num_cores == 2  # thread ids counted
    assert mi.memory_capacity == 8 * GI  # sum of node memory
    assert mi.topology[1].cores is None and mi.topology[1].distances is None and mi.topology[1].hugepages == []
    obj = machine_info_to_obj(mi)
    assert obj["topology"][1] == {"node_id": 1, "memory": 4 * GI, "hugepages": [], "cores": None, "caches": None,
                                  "distances": None}


def doc_with_node(**node):
    return {"topology": [{"node_id": 0, "memory": GI, **node}]}


@pytest.mark.parametrize("doc,where,reason", [
    (doc_with_node(memory=-1), "m.topology[0].memory", "must be >= 0, got -1"),
    (doc_with_node(memory=1.5), "m.topology[0].memory", "expected an integer, got number 1.5"),
    (doc_with_node(memory="4Gi"), "m.topology[0].memory", "expected an integer, got string '4Gi'"),
    (doc_with_node(memory=True), "m.topology[0].memory", "expected an integer, got boolean True"),
    (doc_with_node(hugepages=[{"page_size": 2048, "num_pages": -1}]), "m.topology[0].hugepages[0].num_pages",
     "must be >= 0, got -1"),
    (doc_with_node(hugepages=[{"page_size": 0, "num_pages": 1}]), "m.topology[0].hugepages[0].page_size",
     "must be >= 1, got 0"),
    (doc_with_node(hugepages=[{"pagesize": 2048, "num_pages": 1}]), "m.topology[0].hugepages[0].pagesize",
     'unknown key; did you mean "page_size"?'),
    (doc_with_node(hugepages=[{"num_pages": 1}]), "m.topology[0].hugepages[0].page_size", "Required value"),
    (doc_with_node(distance=[10]), "m.topology[0].distance", 'unknown key; did you mean "distances"?'),
    (doc_with_node(distances=[10, -1]), "m.topology[0].distances[1]", "must be >= 0, got -1"),
    (doc_with_node(cores=[{"core_id": 0, "threads": [0]}]), "m.topology[0].cores[0].threads",
     'unknown key; did you mean "thread_ids"?'),
    (doc_with_node(cores=[{"core_id": 0, "thread_ids": ["0"]}]), "m.topology[0].cores[0].thread_ids[0]",
     "expected an integer, got string '0'"),
    (doc_with_node(caches=[{"id": 0, "sise": 1}]), "m.topology[0].caches[0].sise", 'unknown key; did you mean "size"?'),
    ({"topology": [{"memory": GI}]}, "m.topology[0].node_id", "Required value"),
    ({"topology": [{"node_id": 0, "memory": GI}, {"node_id": 0, "memory": GI}]}, "m.topology[1].node_id",
     "duplicate node_id 0 (also topology[0])"),
    ({"topology": [{"node_id": 0}]}, "m.topology[0].memory", "Required value"),
    ({"topologie": []}, "m.topologie", 'unknown key; did you mean "topology"?'),
    ({"numcores": 1}, "m.numcores", 'unknown key; did you mean "num_cores"?'),
    ({"topology": {"node_id": 0}}, "m.topology", "expected a list, got map"),
    ({"topology": [], "memory_capacity": -5}, "m.memory_capacity", "must be >= 0, got -5"),
    ([], "m", "expected a map (cadvisor MachineInfo JSON), got list"),
])
def test_bad_machine_info(doc, where, reason):
    with pytest.raises(InputError) as err:
        parse_machine_info(doc, "m")
    assert (err.value.where, err.value.reason) == (where, reason)


@pytest.mark.parametrize("page_size_kib,name", [
    (2048, "hugepages-2Mi"), (1048576, "hugepages-1Gi"), (64, "hugepages-64Ki"), (32768, "hugepages-32Mi"),
    (16777216, "hugepages-16Gi"), (512, "hugepages-512Ki"), (1, "hugepages-1Ki"), (3, "hugepages-3Ki"),
])
def test_hugepage_resource_name(page_size_kib, name):
    assert hugepage_resource_name(page_size_kib) == name


def test_machine_hugepage_capacity():
    mi = parse_machine_info(CADVISOR_DOC)
    assert machine_hugepage_capacity(mi) == {"hugepages-1Gi": 2 * GI, "hugepages-2Mi": 1024 * 2 * 1024 * 1024}
    without_machine_level = {k: v for k, v in CADVISOR_DOC.items() if k != "hugepages"}
    mi = parse_machine_info(without_machine_level)
    assert machine_hugepage_capacity(mi) == {"hugepages-1Gi": 2 * GI, "hugepages-2Mi": 2 * GI}


FIXTURE_SHAPES = {
    "one-node.json": (1, 8, 8 * GI),
    "two-nodes.json": (2, 8, 8 * GI),
    "two-nodes-hugepages.json": (2, 8, 16 * GI),
    "four-nodes.json": (4, 16, 16 * GI),
    "four-nodes-distances.json": (4, 16, 16 * GI),
    "eight-nodes.json": (8, 32, 32 * GI),
    "eight-nodes-distances.json": (8, 32, 32 * GI),
    "nine-nodes.json": (9, 36, 36 * GI),
    "sixteen-nodes-hugepages.json": (16, 64, 64 * GI),
    "cxl-memory-only.json": (3, 8, 16 * GI),
}


@pytest.mark.parametrize("name", sorted(FIXTURE_SHAPES))
def test_fixture_machines(name):
    path = FIXTURES / name
    mi = load_machine_info(path)
    nodes, cores, capacity = FIXTURE_SHAPES[name]
    assert (len(mi.topology), mi.num_cores, mi.memory_capacity) == (nodes, cores, capacity)
    assert [n.node_id for n in mi.topology] == list(range(nodes))
    assert sum(n.memory for n in mi.topology) == mi.memory_capacity
    assert machine_info_to_obj(mi) == json.loads(path.read_text())
    for node in mi.topology:
        assert node.distances is not None and len(node.distances) == nodes
        assert node.distances[node.node_id] == 10
        assert all(node.distances[j] == mi.topology[j].distances[node.node_id] for j in range(nodes))


def test_fixture_hugepages_and_memory_only_node():
    mi = load_machine_info(FIXTURES / "two-nodes-hugepages.json")
    assert [hugepage_resource_name(h.page_size) for h in mi.topology[0].hugepages] == ["hugepages-1Gi", "hugepages-2Mi"]
    cxl = load_machine_info(FIXTURES / "cxl-memory-only.json")
    assert [n.cores is None for n in cxl.topology] == [False, False, True]
    distances = load_machine_info(FIXTURES / "four-nodes-distances.json")
    assert distances.topology[0].distances == [10, 12, 20, 22]


def test_load_errors_name_the_file(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"topology": [{"node_id": 0, "memory": -1}]}))
    with pytest.raises(InputError) as err:
        load_machine_info(path)
    assert str(err.value) == f"{path}: topology[0].memory: must be >= 0, got -1"


# -- synthetic machines refuse what no cadvisor reports (issue 18, item 4) -----------------------------------
@pytest.mark.parametrize("args,kwargs,message", [
    ((2, -5), {}, "memory_per_node: must be >= 0, got -5"),
    ((2, 1 << 64), {}, "memory_per_node: must be <= 9223372036854775807, got 18446744073709551616"),
    ((0, 1 << 30), {}, "numa_nodes: must be >= 1, got 0"),
    ((65, 1 << 30), {}, "numa_nodes: must be <= 64, got 65"),
    ((2, True), {}, "memory_per_node: expected an integer, got boolean True"),
    ((2, 1.5e9), {}, "memory_per_node: expected an integer, got number 1500000000.0"),
    ((2, 1 << 30), {"hugepages_2mi": -1}, "hugepages_2mi: must be >= 0, got -1"),
    ((2, 1 << 30), {"hugepages_1gi": 2}, "hugepages_2mi, hugepages_1gi: 2147483648 bytes of hugepages per node are "
                                         "more than memory_per_node 1073741824: hugepages are part of a node's memory"),
    ((2, 1 << 30), {"cores_per_node": -1}, "cores_per_node: must be >= 0, got -1"),
])
def test_synthetic_machine_refuses_absurd_sizes(args, kwargs, message):
    from kubeinputs.synthetic_machine import synthetic_machine

    with pytest.raises(InputError) as err:
        synthetic_machine(*args, **kwargs)
    assert str(err.value) == message


def test_a_negative_machine_is_refused_at_the_front_door():
    """synthetic_machine(2, -5) used to give node 0 2^64 - 100Mi - 5 free bytes and admit a 1000Gi pod."""
    import memorymanager

    with pytest.raises(memorymanager.Error, match="memory_per_node: must be >= 0"):
        memorymanager.synthetic_machine(2, -5)


def test_a_null_core_is_gos_zero_core():
    """cadvisor's JSON decoding turns a null in `cores` into a zero Core; the reader did not look at it and
    the thread check then crashed on it."""
    from kubeinputs.machine import node_cores, parse_machine_info

    mi = parse_machine_info({"num_cores": 2, "topology": [{"node_id": 0, "memory": 1, "cores": [
        None, {"core_id": 1, "thread_ids": [0, 1]}]}]})
    assert [c.thread_ids for c in node_cores(mi.topology[0])] == [(), (0, 1)]
