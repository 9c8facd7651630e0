"""The listed CPU hints: every NUMA mask kubelet's generateCPUTopologyHints walks, with per-mask sums
built by doubling, and the helpers the hint family shares (CPUs per NUMA node, the nodes of the
re-usable CPUs, the narrowest width, isHintSocketAligned)."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from kubeinputs.cpuset import CPUSet
from topologymanager import bitmask
from topologymanager.hint import MAX_MEMOISED_NODES, TopologyHint, hints_by_width

from cpumanager.topology import CPUTopology

# With align-by-socket (whose preferred flags the family cannot describe) the list is built up
# to this many NUMA nodes with CPUs (2^24 masks); beyond, BoundedWorkError.
LISTED_MAX_NODES = 24

def numa_counts(topo: CPUTopology, numa_nodes: Sequence[int], cpus: CPUSet) -> list[int]:
    """How many of `cpus` each NUMA node holds (by position in `numa_nodes`). A CPU the machine lacks
    counts for NUMA node 0, the zero CPUInfo kubelet reads for it."""
    position = {numa: p for p, numa in enumerate(numa_nodes)}
    counts = [0] * len(numa_nodes)
    known = cpus.mask & topo.all_mask
    for numa, mask in topo.numa_masks.items():
        counts[position[numa]] += (known & mask).bit_count()
    unknown = (cpus.mask & ~topo.all_mask).bit_count()
    if unknown and 0 in position:
        counts[position[0]] += unknown
    return counts


def reusable_positions(topo: CPUTopology, numa_nodes: Sequence[int], reusable: CPUSet) -> Optional[int]:
    """The position mask of the NUMA nodes holding reusable CPUs; None when one of them has no CPU of
    the machine (no mask can then contain it: kubelet gives no hint at all)."""
    position = {numa: p for p, numa in enumerate(numa_nodes)}
    result = 0
    for cpu in reusable:
        numa = topo.info(cpu).numa_node_id
        if numa not in position:
            return None
        result |= 1 << position[numa]
    return result


def min_affinity_size(totals: Sequence[int], request: int) -> int:
    """The fewest NUMA nodes whose CPUs (free or not) reach the request; all of them if none do.
    (kubelet keeps the minimum over its mask loop; the k largest nodes are the best k.)"""
    n = len(totals)
    acc = 0
    for k, value in enumerate(sorted(totals, reverse=True), start=1):
        acc += value
        if acc >= request:
            return min(k, n)
    return n


def is_hint_socket_aligned(topo: CPUTopology, mask: int, min_affinity: int) -> bool:
    """isHintSocketAligned: the mask's NUMA nodes span as few sockets as `min_affinity` NUMA nodes need."""
    if topo.num_sockets == 0:
        return False  # kubelet would divide by zero (no CPU at all: never reached)
    numa_per_socket = topo.num_numa_nodes // topo.num_sockets
    if numa_per_socket == 0:
        return False
    min_sockets = (min_affinity + numa_per_socket - 1) // numa_per_socket
    return len(topo.details().sockets_in_numa_nodes(*bitmask.get_bits(mask))) == min_sockets


def listed_hints(topo: CPUTopology, numa_nodes: Sequence[int], available: CPUSet, reusable: CPUSet, request: int,
                 align_by_socket: bool = False) -> list[TopologyHint]:
    """The enumerating path: every mask, with per-mask sums built by doubling."""
    n = len(numa_nodes)
    if n == 0:
        return []
    needed = reusable_positions(topo, numa_nodes, reusable)
    totals = [(topo.numa_masks[numa]).bit_count() for numa in numa_nodes]
    min_affinity = min_affinity_size(totals, request)
    if needed is None:
        return []
    free = _subset_sums(numa_counts(topo, numa_nodes, available))
    short = request - reusable.size()
    order = _mask_order(n)
    if needed == 0:
        passing = [m for m in order if free[m] >= short]
    else:
        passing = [m for m in order if m & needed == needed and free[m] >= short]
    if not align_by_socket and n <= MAX_MEMOISED_NODES:  # shared hint objects: no 2^n new ones per call
        return list(map(hints_by_width(tuple(numa_nodes), min_affinity).__getitem__, passing))
    real = _real_masks(tuple(numa_nodes))
    if not align_by_socket:
        return [TopologyHint(real[m], m.bit_count() == min_affinity) for m in passing]
    return [TopologyHint(real[m], is_hint_socket_aligned(topo, real[m], min_affinity)
                         or m.bit_count() == min_affinity) for m in passing]


def _subset_sums(values: Sequence[int]) -> list[int]:
    """sums[mask] over positions, for every mask, built by doubling. Cost: O(2^k)."""
    sums = [0]
    for value in values:
        sums += [s + value for s in sums]
    return sums


@lru_cache(maxsize=8)
def _mask_order(n: int) -> tuple[int, ...]:
    """Every non-empty position mask of n positions in IterateBitMasks order (memoised per n)."""
    return tuple(bitmask.iterate_bit_masks(range(n)))


@lru_cache(maxsize=16)
def _real_masks(numa_nodes: tuple[int, ...]) -> tuple[int, ...]:
    """real[position mask] = the NUMA-id mask (memoised per node set)."""
    return tuple(_subset_sums([1 << numa for numa in numa_nodes]))
