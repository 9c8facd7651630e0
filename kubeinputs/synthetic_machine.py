"""Machines built in code: a cadvisor MachineInfo with identical NUMA nodes, for examples,
benchmarks and what-ifs where no real machine file is at hand.

>>> m = synthetic_machine(2, 4 << 30, hugepages_2mi=512)
>>> [(n.node_id, n.memory, n.distances) for n in m.topology]
[(0, 4294967296, [10, 20]), (1, 4294967296, [20, 10])]
>>> m.topology[0].hugepages
[HugePagesInfo(page_size=2048, num_pages=512)]
"""
from __future__ import annotations

from kubeinputs.machine import HugePagesInfo, MachineInfo, Node

LOCAL_DISTANCE = 10
REMOTE_DISTANCE = 20


def synthetic_machine(
    numa_nodes: int,
    memory_per_node: int,
    *,
    hugepages_2mi: int = 0,
    hugepages_1gi: int = 0,
    cores_per_node: int = 8,
) -> MachineInfo:
    """`numa_nodes` identical nodes of `memory_per_node` bytes, each with the given numbers of 2Mi
    and 1Gi pages (a page size with 0 pages is left out), distance 10 to itself and 20 elsewhere."""
    if numa_nodes < 1:
        raise ValueError("a machine has at least one NUMA node")
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
