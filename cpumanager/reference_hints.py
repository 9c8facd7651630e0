"""`reference_generate_cpu_topology_hints`: kubelet's generateCPUTopologyHints loop, literally (the oracle).

Every NUMA mask over the NUMA nodes that have CPUs, in IterateBitMasks order; per mask the CPUs
are counted one by one. Differential tests check the production path (`hints.py`, and the
hint family on 17+ NUMA nodes) against it.
"""
from __future__ import annotations

from kubeinputs.cpuset import CPUSet
from topologymanager import bitmask
from topologymanager.hint import TopologyHint

from cpumanager.topology import CPUTopology


def reference_is_hint_socket_aligned(topo: CPUTopology, hint: TopologyHint, min_affinity_size: int) -> bool:
    """isHintSocketAligned: the hint's NUMA nodes span as few sockets as the narrowest fit needs."""
    if topo.num_sockets == 0:
        return False  # kubelet would divide by zero (no CPU at all: never reached)
    numa_per_socket = topo.num_numa_nodes // topo.num_sockets
    if numa_per_socket == 0:
        return False
    min_sockets = (min_affinity_size + numa_per_socket - 1) // numa_per_socket
    bits = bitmask.get_bits(hint.numa_node_affinity or 0)
    return len(topo.details().sockets_in_numa_nodes(*bits)) == min_sockets


def reference_generate_cpu_topology_hints(topo: CPUTopology, available: CPUSet, reusable: CPUSet, request: int,
                                          align_by_socket: bool = False) -> list[TopologyHint]:
    """generateCPUTopologyHints: every mask whose CPUs can hold the request (reusable CPUs all inside
    the mask, counted with the available ones); preferred when as narrow as the narrowest mask
    whose CPUs (free or not) could hold it, or, with align-by-socket, socket-aligned."""
    numa_nodes = topo.details().numa_nodes()
    min_affinity_size = len(numa_nodes)
    found: list[int] = []
    for mask in bitmask.iterate_bit_masks(numa_nodes):
        cpus_in_mask = topo.details().cpus_in_numa_nodes(*bitmask.get_bits(mask)).size()
        if cpus_in_mask >= request and mask.bit_count() < min_affinity_size:
            min_affinity_size = mask.bit_count()
        num_matching = 0
        skip = False
        for cpu in reusable.list():
            if not bitmask.is_set(mask, topo.info(cpu).numa_node_id):
                skip = True
                break
            num_matching += 1
        if skip:
            continue
        for cpu in available.list():
            if bitmask.is_set(mask, topo.info(cpu).numa_node_id):
                num_matching += 1
        if num_matching < request:
            continue
        found.append(mask)
    hints = []
    for mask in found:
        hint = TopologyHint(mask, False)
        if align_by_socket and reference_is_hint_socket_aligned(topo, hint, min_affinity_size):
            hints.append(TopologyHint(mask, True))
            continue
        hints.append(TopologyHint(mask, mask.bit_count() == min_affinity_size))
    return hints
