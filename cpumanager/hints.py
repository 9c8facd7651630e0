"""The static policy's NUMA hints: generateCPUTopologyHints and isHintSocketAligned (policy_static.go).

kubelet walks every mask over the NUMA nodes that have CPUs (IterateBitMasks order: single
nodes, then pairs in lexicographic order, ...). A mask is a hint when the CPUs the container
may re-use all lie inside it and, counted with the free CPUs inside it, cover the request. A
hint is preferred when it has as few NUMA nodes as the narrowest mask whose CPUs - free or not -
could hold the request (with align-by-socket, also when its NUMA nodes span as few sockets as
that narrowest fit needs).

Worked example, two NUMA nodes of 4 CPUs, CPUs 0-2 of node 0 taken, a request of 2 CPUs:
node 0 alone has 1 free CPU (not a hint), node 1 has 4 (a preferred hint: one node could hold 2),
both nodes have 5 (a hint, not preferred):

>>> from cpumanager.topology import CPUInfo, CPUTopology
>>> topo = CPUTopology(8, 8, 2, {c: CPUInfo(c // 4, c // 4, c, c // 4) for c in range(8)})
>>> generate_cpu_topology_hints(topo, CPUSet.parse("3-7"), CPUSet(), 2)
[TopologyHint([1], preferred=True), TopologyHint([0, 1], preferred=False)]

The production path counts CPUs per NUMA node once and builds per-mask sums by doubling
(sum[mask] = sum[mask without its highest node] + value[that node]), then filters all masks
with list comprehensions: O(2^n) for n NUMA nodes with CPUs instead of kubelet's O(2^n * CPUs).
From FAMILY_MIN_NODES NUMA nodes with CPUs the hints are a `hint_family.CPUHintFamily` (the same
hints, searched instead of listed). `reference_hints.py` is the literal loop (the oracle).
"""
from __future__ import annotations

from typing import Union

from kubeinputs.cpuset import CPUSet
from topologymanager.errors import BoundedWorkError
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily

from cpumanager.hint_family import family_hints
from cpumanager.listed_hints import LISTED_MAX_NODES, listed_hints
from cpumanager.topology import CPUTopology

# From this many NUMA nodes with CPUs on, hints are a family (hint_family.py); below, a list.
FAMILY_MIN_NODES = 17
Hints = Union[list[TopologyHint], HintFamily]


def generate_cpu_topology_hints(topo: CPUTopology, available: CPUSet, reusable: CPUSet, request: int,
                                align_by_socket: bool = False) -> Hints:
    """generateCPUTopologyHints (see module doc): a list, or a hint family from FAMILY_MIN_NODES NUMA
    nodes with CPUs on. Raises BoundedWorkError where neither can answer (align-by-socket past
    LISTED_MAX_NODES NUMA nodes)."""
    numa_nodes = topo.details().numa_nodes()
    n = len(numa_nodes)
    if n >= FAMILY_MIN_NODES:
        if not align_by_socket:
            return family_hints(topo, numa_nodes, available, reusable, request)
        if n > LISTED_MAX_NODES:
            raise BoundedWorkError(
                f"kubelet would enumerate 2^{n} NUMA masks here; with align-by-socket the CPU hints are not a "
                "hint family, and this machine is too large to list them"
            )
    return listed_hints(topo, numa_nodes, available, reusable, request, align_by_socket)
