"""Parity cases from kubelet v1.37's topology/topology_test.go Test_Discover not in test_topology.py: cores
reporting an empty uncore-cache list, and the dual Xeon Gold 6230 (two NUMA nodes per socket, cadvisor core ids
that are not the CPU manager's). Machines and expected details are kubelet's; names are ours."""
from cpumanager.topology import CPUInfo, discover
from tests.cpumanager.helpers import cadvisor_machine


def core(core_id, threads, socket, uncore):
    """A cadvisor core; `uncore`: its L3 id, or [] for an empty uncore-cache list."""
    caches = [] if uncore == [] else [{"id": uncore, "size": 32 << 20, "type": "Unified", "level": 3}]
    return {"core_id": core_id, "thread_ids": threads, "socket_id": socket, "caches": None, "uncore_caches": caches}


def test_an_empty_uncore_cache_list_means_the_socket():
    topo = discover(cadvisor_machine({0: [core(i, [i, i + 4], 0, []) for i in range(4)]}, 8, 1))
    assert (topo.num_cpus, topo.num_sockets, topo.num_cores, topo.num_numa_nodes, topo.num_uncore_cache) == \
        (8, 1, 4, 1, 1)
    assert topo.cpu_details == {c: CPUInfo(0, 0, c % 4, 0) for c in range(8)}


def test_dual_xeon_gold_6230_two_numa_nodes_per_socket():
    # cadvisor's core ids repeat per socket and skip numbers; the CPU manager's core id is the lowest thread id
    ids = [0, 1, 2, 8, 9, 16, 17, 18, 24, 25, 3, 4, 10, 11, 12, 19, 20, 26, 27, 28]
    nodes = {n: [core(ids[(n % 2) * 10 + i], [n * 10 + i, n * 10 + i + 40], n // 2, 0) for i in range(10)]
             for n in range(4)}
    topo = discover(cadvisor_machine(nodes, 80, 2))
    assert (topo.num_cpus, topo.num_sockets, topo.num_cores, topo.num_numa_nodes, topo.num_uncore_cache) == \
        (80, 2, 40, 4, 1)
    assert topo.cpu_details == {c: CPUInfo((c % 40) // 10, (c % 40) // 20, c % 40, 0) for c in range(80)}
