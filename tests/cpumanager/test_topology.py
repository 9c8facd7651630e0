"""topology.Discover from cadvisor MachineInfo, and the CPUDetails questions (kubelet's topology_test.go shape)."""
import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.errors import InputError
from kubeinputs.machine import machine_num_sockets, parse_machine_info
from cpumanager.errors import CPUManagerError
from cpumanager.topology import CPUInfo, discover


def core(core_id, threads, socket, uncore=None):
    """A cadvisor core; `uncore` the id of its L3 (None: cadvisor reports none)."""
    caches = None if uncore is None else [{"id": uncore, "size": 32 << 20, "type": "Unified", "level": 3}]
    return {"core_id": core_id, "thread_ids": threads, "socket_id": socket, "caches": None, "uncore_caches": caches}


def machine(nodes, num_cores=None, num_sockets=None):
    """A cadvisor MachineInfo of these nodes (node id -> cores)."""
    doc = {"topology": [{"node_id": n, "memory": 1 << 30, "cores": cores} for n, cores in nodes.items()]}
    if num_cores is not None:
        doc["num_cores"] = num_cores
    if num_sockets is not None:
        doc["num_sockets"] = num_sockets
    return parse_machine_info(doc)


CASES = {
    "single socket HT": (
        machine({0: [core(0, [0, 4], 0), core(1, [1, 5], 0), core(2, [2, 6], 0), core(3, [3, 7], 0)]}, 8, 1),
        dict(num_cpus=8, num_cores=4, num_sockets=1, num_numa_nodes=1, num_uncore_cache=1),
        {0: CPUInfo(0, 0, 0, 0), 4: CPUInfo(0, 0, 0, 0), 3: CPUInfo(0, 0, 3, 0), 7: CPUInfo(0, 0, 3, 0)},
    ),
    "dual socket HT, no uncore reported: the socket is the cache": (
        machine({0: [core(0, [0, 4], 0), core(1, [1, 5], 0)], 1: [core(0, [2, 6], 1), core(1, [3, 7], 1)]}, 8, 2),
        dict(num_cpus=8, num_cores=4, num_sockets=2, num_numa_nodes=2, num_uncore_cache=2),
        {2: CPUInfo(1, 1, 2, 1), 6: CPUInfo(1, 1, 2, 1), 5: CPUInfo(0, 0, 1, 0)},
    ),
    "AMD: one socket, two NUMA nodes, four L3 caches": (
        machine({0: [core(i, [i, i + 8], 0, i // 2) for i in range(4)],
                 1: [core(i, [i, i + 8], 0, i // 2) for i in range(4, 8)]}, 16, 1),
        dict(num_cpus=16, num_cores=8, num_sockets=1, num_numa_nodes=2, num_uncore_cache=4),
        {3: CPUInfo(0, 0, 3, 1), 11: CPUInfo(0, 0, 3, 1), 12: CPUInfo(1, 0, 4, 2)},
    ),
    "core id is the lowest thread id, not cadvisor's core_id": (
        machine({0: [core(7, [9, 3], 0)]}, 2, 1),
        dict(num_cpus=2, num_cores=1, num_sockets=1, num_numa_nodes=1, num_uncore_cache=1),
        {9: CPUInfo(0, 0, 3, 0), 3: CPUInfo(0, 0, 3, 0)},
    ),
    "CPU-less NUMA nodes (CXL, HBM) count no NUMA node for the CPU manager": (
        machine({0: [core(0, [0], 0)], 1: [], 2: [core(0, [1], 0)]}, 2, 1),
        dict(num_cpus=2, num_cores=2, num_sockets=1, num_numa_nodes=2, num_uncore_cache=1),
        {1: CPUInfo(2, 0, 1, 0)},
    ),
    "num_sockets left out: the distinct socket ids": (
        machine({0: [core(0, [0], 0)], 1: [core(0, [1], 3)]}, 2),
        dict(num_cpus=2, num_cores=2, num_sockets=2, num_numa_nodes=2, num_uncore_cache=2),
        {1: CPUInfo(1, 3, 1, 3)},
    ),
    "num_cores is cadvisor's, even when the cores list fewer CPUs": (
        machine({0: [core(0, [0, 1], 0)]}, 4, 1),
        dict(num_cpus=4, num_cores=1, num_sockets=1, num_numa_nodes=1, num_uncore_cache=1),
        {1: CPUInfo(0, 0, 0, 0)},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_discover(name):
    mi, counts, details = CASES[name]
    topo = discover(mi)
    assert {k: getattr(topo, k) for k in counts} == counts
    for cpu, info in details.items():
        assert topo.cpu_details[cpu] == info


@pytest.mark.parametrize("doc,message", [
    ({"num_cores": 0, "topology": [{"node_id": 0, "memory": 1}]}, "could not detect number of cpus"),
    ({"num_cores": 2, "topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": []}]}]},
     "no cpus provided"),
])
def test_discover_errors(doc, message):
    with pytest.raises(CPUManagerError) as err:
        discover(parse_machine_info(doc))
    assert str(err.value) == message


@pytest.mark.parametrize("doc,where,reason", [
    ({"topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [1, 1]}]}]},
     "topology[0].cores[0].thread_ids[1]", "logical CPU 1 is listed twice (also topology[0].cores[0].thread_ids[0])"),
    ({"topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [0]}]},
                   {"node_id": 1, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [0]}]}]},
     "topology[1].cores[0].thread_ids[0]", "logical CPU 0 is listed twice (also topology[0].cores[0].thread_ids[0])"),
    ({"topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [0], "socket_id": "0"}]}]},
     "topology[0].cores[0].socket_id", "expected an integer, got string '0'"),
    ({"topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [0],
                                                           "uncore_caches": [{"id": "x"}]}]}]},
     "topology[0].cores[0].uncore_caches[0].id", "expected an integer, got string 'x'"),
    ({"topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [0],
                                                           "uncore_caches": [{"id": 0, "lvl": 3}]}]}]},
     "topology[0].cores[0].uncore_caches[0].lvl", 'unknown key; did you mean "level"?'),
    ({"topology": [{"node_id": 0, "memory": 1, "cores": [{"core_id": 0, "thread_ids": [0]}]}], "num_sockets": -1},
     "num_sockets", "must be >= 0, got -1"),
])
def test_machine_cores_are_read_strictly(doc, where, reason):
    with pytest.raises(InputError) as err:
        parse_machine_info(doc)
    assert (err.value.where, err.value.reason) == (where, reason)


def test_num_sockets_given_wins():
    assert machine_num_sockets(machine({0: [core(0, [0], 0)]}, 1, 4)) == 4


def test_details_questions():
    # dual socket, 2 NUMA nodes per socket, 1 thread per core; NUMA n = CPUs 2n, 2n+1; L3 per socket
    mi = machine({n: [core(2 * n, [2 * n], n // 2, n // 2), core(2 * n + 1, [2 * n + 1], n // 2, n // 2)]
                  for n in range(4)}, 8, 2)
    details = discover(mi).details().keep_only(CPUSet.parse("1-6"))
    assert details.numa_nodes() == [0, 1, 2, 3] and details.sockets() == [0, 1]
    assert str(details.cpus_in_numa_nodes(0, 3)) == "1,6"
    assert details.sockets_in_numa_nodes(2) == [1] and details.numa_nodes_in_sockets(0) == [0, 1]
    assert details.cores_in_sockets(1) == [4, 5, 6] and details.uncore_in_numa_nodes(1, 2) == [0, 1]
    assert details.cores_needed_in_uncore_cache(2, 1) == [4, 5] and details.cores_needed_in_uncore_cache(9, 0) == [1, 2, 3]
    topo = discover(mi)
    assert topo.cpu_core_id(5) == 5
    with pytest.raises(CPUManagerError, match="unknown CPU ID: 42"):
        topo.cpu_core_id(42)
