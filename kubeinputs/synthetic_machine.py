"""Machines built in code: a cadvisor MachineInfo with identical NUMA nodes, for examples,
benchmarks and what-ifs where no real machine file is at hand.

>>> m = synthetic_machine(2, 4 << 30, hugepages_2mi=512)
>>> [(n.node_id, n.memory, n.distances) for n in m.topology]
[(0, 4294967296, [10, 20]), (1, 4294967296, [20, 10])]
>>> m.topology[0].hugepages
[HugePagesInfo(page_size=2048, num_pages=512)]
"""
from __future__ import annotations

from kubeinputs.errors import expect_int
from kubeinputs.machine import HugePagesInfo, MachineInfo, Node

LOCAL_DISTANCE = 10
REMOTE_DISTANCE = 20
MAX_NUMA_NODES = 64
UINT64_MAX = (1 << 64) - 1
MAX_CORES = (1 << 31) - 1  # cadvisor's NumCores is an int


def synthetic_machine(
    numa_nodes: int,
    memory_per_node: int,
    *,
    hugepages_2mi: int = 0,
    hugepages_1gi: int = 0,
    cores_per_node: int = 8,
) -> MachineInfo:
    """`numa_nodes` identical nodes of `memory_per_node` bytes, each with the given numbers of 2Mi
    and 1Gi pages (a page size with 0 pages is left out), distance 10 to itself and 20 elsewhere.

    Arguments are checked first (an InputError, a ValueError, names the one that is wrong): 1 to
    64 NUMA nodes (kubelet's masks hold ids 0 to 63), byte sizes that fit cadvisor's uint64 for
    a node and for the machine, at least one core per node."""
    expect_int(numa_nodes, "numa_nodes", minimum=1, maximum=MAX_NUMA_NODES)
    expect_int(memory_per_node, "memory_per_node", minimum=1, maximum=UINT64_MAX // numa_nodes)
    expect_int(hugepages_2mi, "hugepages_2mi", minimum=0, maximum=UINT64_MAX // (2 << 20))
    expect_int(hugepages_1gi, "hugepages_1gi", minimum=0, maximum=UINT64_MAX // (1 << 30))
    expect_int(cores_per_node, "cores_per_node", minimum=1, maximum=MAX_CORES // numa_nodes)
    topology = []
    for node_id in range(numa_nodes):
        pages = []
        if hugepages_1gi:
            pages.append(HugePagesInfo(page_size=1 << 20, num_pages=hugepages_1gi))
        if hugepages_2mi:
            pages.append(HugePagesInfo(page_size=2048, num_pages=hugepages_2mi))
        distances = [LOCAL_DISTANCE if other == node_id else REMOTE_DISTANCE for other in range(numa_nodes)]
        topology.append(Node(node_id=node_id, memory=memory_per_node, hugepages=pages, distances=distances))
    return MachineInfo(num_cores=numa_nodes * cores_per_node, memory_capacity=numa_nodes * memory_per_node, topology=topology)
