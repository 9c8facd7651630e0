"""Machines built in code: a cadvisor MachineInfo with identical NUMA nodes, for examples,
benchmarks and what-ifs where no real machine file is at hand.

>>> m = synthetic_machine(2, 4 << 30, hugepages_2mi=512)
>>> [(n.node_id, n.memory, n.distances) for n in m.topology]
[(0, 4294967296, [10, 20]), (1, 4294967296, [20, 10])]
>>> m.topology[0].hugepages
[HugePagesInfo(page_size=2048, num_pages=512)]
"""
from __future__ import annotations

from kubeinputs.errors import InputError, expect_int
from kubeinputs.machine import UINT64_MAX, HugePagesInfo, MachineInfo, Node

LOCAL_DISTANCE = 10
REMOTE_DISTANCE = 20
MAX_NUMA_NODES = 64  # kubelet's NUMA bitmasks are 64 bits wide
MAX_CORES_PER_NODE = 1 << 16
MAX_THREADS_PER_CORE = 8  # SMT8 is the widest shipped (POWER)
MAX_CPUS = 1 << 16  # CPUs listed in all (a cpuset is a bitmask)


def synthetic_machine(
    numa_nodes: int,
    memory_per_node: int,
    *,
    hugepages_2mi: int = 0,
    hugepages_1gi: int = 0,
    cores_per_node: int = 8,
    threads_per_core: int = 0,
    numa_nodes_per_socket: int = 1,
) -> MachineInfo:
    """`numa_nodes` identical nodes of `memory_per_node` bytes, each with the given numbers of 2Mi
    and 1Gi pages (a page size with 0 pages is left out), distance 10 to itself and 20 elsewhere.

    CPUs: by default only their count (`num_cores`: `cores_per_node` per node) and no CPU topology, which
    is all the memory manager reads. With `threads_per_core` n >= 1 every node lists `cores_per_node`
    physical cores of n threads (what the CPU manager reads), numbered as Linux numbers them: the first
    thread of every core of the machine, then the second ones (on 2 nodes of 2 cores x 2 threads, node 0
    holds CPUs 0,1,4,5); `numa_nodes_per_socket` nodes share one socket (package).

    Arguments are checked first (an InputError, a ValueError, names the one that is wrong): 1 to
    64 NUMA nodes (kubelet's masks hold ids 0 to 63), integer sizes from 0 that fit cadvisor's
    uint64 for a node and for the machine, hugepages no larger than the node's memory, at most 8
    threads per core and 65,536 CPUs listed.

    >>> m = synthetic_machine(2, 4 << 30, cores_per_node=2, threads_per_core=2)
    >>> m.num_cores, [core["thread_ids"] for core in m.topology[0].cores]
    (8, [[0, 4], [1, 5]])
    """
    _check_sizes(numa_nodes, memory_per_node, hugepages_2mi, hugepages_1gi, cores_per_node)
    expect_int(threads_per_core, "threads_per_core", minimum=0, maximum=MAX_THREADS_PER_CORE)
    expect_int(numa_nodes_per_socket, "numa_nodes_per_socket", minimum=1, maximum=MAX_NUMA_NODES)
    total_cores = numa_nodes * cores_per_node
    if threads_per_core and total_cores * threads_per_core > MAX_CPUS:
        raise InputError("threads_per_core", f"{total_cores * threads_per_core} CPUs in all; at most {MAX_CPUS}")
    topology = []
    for node_id in range(numa_nodes):
        pages = []
        if hugepages_1gi:
            pages.append(HugePagesInfo(page_size=1 << 20, num_pages=hugepages_1gi))
        if hugepages_2mi:
            pages.append(HugePagesInfo(page_size=2048, num_pages=hugepages_2mi))
        distances = [LOCAL_DISTANCE if other == node_id else REMOTE_DISTANCE for other in range(numa_nodes)]
        cores = None
        if threads_per_core:
            socket = node_id // numa_nodes_per_socket
            cores = [{"core_id": core, "socket_id": socket, "caches": None, "uncore_caches": None,
                      "thread_ids": [core + t * total_cores for t in range(threads_per_core)]}
                     for core in range(node_id * cores_per_node, (node_id + 1) * cores_per_node)]
        topology.append(Node(node_id=node_id, memory=memory_per_node, hugepages=pages, distances=distances, cores=cores))
    if not threads_per_core:
        return MachineInfo(num_cores=total_cores, memory_capacity=numa_nodes * memory_per_node, topology=topology)
    sockets = -(-numa_nodes // numa_nodes_per_socket)
    return MachineInfo(num_cores=total_cores * threads_per_core, memory_capacity=numa_nodes * memory_per_node,
                       topology=topology, extra={"num_sockets": sockets})


def _check_sizes(numa_nodes: object, memory_per_node: object, hugepages_2mi: object, hugepages_1gi: object,
                 cores_per_node: object) -> None:
    """Refuse what no cadvisor reports: sizes that are not integers, negative or past uint64, more NUMA
    nodes than kubelet's masks hold, hugepages larger than the node's memory they are part of."""
    expect_int(numa_nodes, "numa_nodes", minimum=1, maximum=MAX_NUMA_NODES)
    expect_int(memory_per_node, "memory_per_node", minimum=0, maximum=UINT64_MAX // numa_nodes)
    expect_int(hugepages_2mi, "hugepages_2mi", minimum=0, maximum=UINT64_MAX >> 21)
    expect_int(hugepages_1gi, "hugepages_1gi", minimum=0, maximum=UINT64_MAX >> 30)
    expect_int(cores_per_node, "cores_per_node", minimum=0, maximum=MAX_CORES_PER_NODE)
    pages = (hugepages_2mi << 21) + (hugepages_1gi << 30)
    if pages > memory_per_node:
        raise InputError("hugepages_2mi, hugepages_1gi", f"{pages} bytes of hugepages per node are more than memory_per_node "
                                          f"{memory_per_node}: hugepages are part of a node's memory")
