"""The CPU hints as a family: generateCPUTopologyHints on machines with 17+ NUMA nodes holding CPUs.

kubelet's loop keeps a mask when (a) every CPU the container may re-use lies in it and (b) the
free CPUs inside it plus the re-usable ones reach the request. Both rules are monotone: adding a
NUMA node to a kept mask keeps it. So the kept masks are, in `topologymanager.hint_family` terms:

* X = the kept single nodes (listed one by one);
* the monotone part over U = every NUMA node with CPUs: a mask of two or more nodes is kept iff
  the free CPUs of the nodes left out add up to at most capacity = (all free CPUs + re-usable
  CPUs - request); a node holding re-usable CPUs weighs capacity + 1, so it can never be left out.

The preferred width is the fewest nodes whose CPUs (free or not) reach the request, as in the
list path. GB200 trays (CPUs on 2 of 34 or 64 NUMA nodes) never come here: kubelet's loop only
walks the NUMA nodes that have CPUs.

Worked example: 20 NUMA nodes of 4 CPUs, all free, a request of 6 CPUs: no single node holds
6, every pair does; the narrowest fit is 2 nodes:

>>> from cpumanager.topology import CPUInfo, CPUTopology
>>> topo = CPUTopology(80, 80, 20, {c: CPUInfo(c // 4, c // 4, c, c // 4) for c in range(80)})
>>> fam = family_hints(topo, list(range(20)), CPUSet.parse("0-79"), CPUSet(), 6)
>>> fam.preferred_width, fam.count(), fam.best_hint()
(2, 1048555, TopologyHint([0, 1], preferred=True))

The family is 2^20 - 1 - 20 masks; every question the topology manager asks it costs a few steps.
"""
from __future__ import annotations

from typing import Sequence, Union

from kubeinputs.cpuset import CPUSet
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily

from cpumanager.listed_hints import (LISTED_MAX_NODES, listed_hints, min_affinity_size, numa_counts,
                                     reusable_positions)
from cpumanager.topology import CPUTopology


class CPUHintFamily(HintFamily):
    """The CPU manager's hints for one request on one machine state (real NUMA ids)."""


def family_hints(topo: CPUTopology, numa_nodes: Sequence[int], available: CPUSet, reusable: CPUSet,
                 request: int) -> Union[CPUHintFamily, list[TopologyHint]]:
    """generateCPUTopologyHints as a family ([] when no mask can hold the request)."""
    needed = reusable_positions(topo, numa_nodes, reusable)
    if needed is None or not numa_nodes:
        return []
    free = numa_counts(topo, numa_nodes, available)
    totals = [topo.numa_masks[numa].bit_count() for numa in numa_nodes]
    preferred_width = min_affinity_size(totals, request)
    capacity = sum(free) + reusable.size() - request
    if capacity < 0:
        return []
    all_nodes = 0
    for numa in numa_nodes:
        all_nodes |= 1 << numa
    weights = {}
    explicit = []
    short = request - reusable.size()
    for p, numa in enumerate(numa_nodes):
        bit = 1 << p
        weights[numa] = (capacity + 1,) if needed & bit else (free[p],)
        if needed & ~bit == 0 and free[p] >= short:
            explicit.append(1 << numa)
    family = CPUHintFamily(all_nodes, explicit, all_nodes, weights, (capacity,), preferred_width)
    if len(numa_nodes) <= LISTED_MAX_NODES:
        snapshot = (tuple(numa_nodes), available, reusable, request)
        family.relist = lambda: listed_hints(topo, snapshot[0], snapshot[1], snapshot[2], snapshot[3])
    if not family:
        return []
    return family
