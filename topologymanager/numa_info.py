"""The machine's NUMA nodes and distances as the topology manager sees them (kubelet's numa_info.go).

Built from cadvisor's topology (a list of nodes with `.node_id` and `.distances`);
this module does not import the memory manager, it only reads those two attributes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from kubeinputs.machine import Node
from topologymanager import bitmask
from topologymanager.errors import NUMAInfoError

DISTANCES_ERROR = "error getting NUMA distances from cadvisor"


@dataclass
class NUMAInfo:
    """kubelet's NUMAInfo: node ids in cadvisor order and each node's distance row.

    `distances[i][j]` is the distance from node i to node j: rows are indexed by
    NUMA id, not by position. A row is None when prefer-closest is off (kubelet
    keeps the map entry with a nil row).
    """

    nodes: list[int] = field(default_factory=list)
    distances: dict[int, Optional[list[int]]] = field(default_factory=dict)

    def default_affinity_mask(self) -> int:
        """The mask of every NUMA node of the machine."""
        return bitmask.new_bitmask(*self.nodes)

    def narrowest(self, m1: int, m2: int) -> int:
        """m1 if it is narrower than m2, else m2 (ties go to m2)."""
        return m1 if bitmask.is_narrower_than(m1, m2) else m2

    def closest(self, m1: int, m2: int) -> int:
        """The narrower mask; between masks of equal size, the one with the smaller average
        distance; between equal averages, the numerically smaller mask."""
        if m1.bit_count() != m2.bit_count():
            return self.narrowest(m1, m2)
        d1 = self.calculate_average_for(m1)
        d2 = self.calculate_average_for(m2)
        if d1 == d2:
            return m1 if m1 < m2 else m2
        return m1 if d1 < d2 else m2

    def calculate_average_for(self, mask: int) -> float:
        """Average distance over all ordered pairs (i, j) of nodes in `mask`, i == j included."""
        return calculate_average_for(self.distances, mask)


def calculate_average_for(distances: dict[int, Optional[list[int]]], mask: int) -> float:
    """kubelet's NUMADistances.CalculateAverageFor, with the same float64 arithmetic.

    0 for the empty mask. A missing or too-short row raises NUMAInfoError where Go
    would panic with an index out of range.
    """
    if mask == 0:
        return 0.0
    bits = bitmask.get_bits(mask)
    total = 0.0
    n = 0.0
    for i in bits:
        row = distances.get(i)
        for j in bits:
            if row is None or j >= len(row):
                have = "no distance row" if row is None else f"a row of {len(row)} entries"
                raise NUMAInfoError(
                    f"no NUMA distance from node {i} to node {j} ({have} for node {i}; "
                    f"rows are indexed by NUMA id; kubelet would panic here: index out of range)"
                )
            total += float(row[j])
            n += 1.0
    return total / n


def new_numa_info(topology: Iterable[Node], prefer_closest: bool) -> NUMAInfo:
    """kubelet's NewNUMAInfo: node ids in the order given; distance rows only with prefer-closest.

    With prefer-closest, a node without distances is `error getting NUMA distances from cadvisor`.
    """
    nodes: list[int] = []
    distances: dict[int, Optional[list[int]]] = {}
    for index, node in enumerate(topology or []):
        try:
            node_id = node.node_id
            node_distances = node.distances
        except AttributeError:
            raise NUMAInfoError(f"topology[{index}]: not a NUMA node (needs .node_id and .distances): {node!r}") from None
        if isinstance(node_id, bool) or not isinstance(node_id, int) or not 0 <= node_id < bitmask.MAX_BITS:
            raise NUMAInfoError(f"topology[{index}]: NUMA node id must be an integer in 0-63, got {node_id!r}")
        nodes.append(node_id)
        row: Optional[list[int]] = None
        if prefer_closest:
            if node_distances is None:
                raise NUMAInfoError(DISTANCES_ERROR)
            row = list(node_distances)
            for value in row:
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise NUMAInfoError(
                        f"topology[{index}]: NUMA node {node_id} distances must be non-negative integers, got {value!r}"
                    )
        distances[node_id] = row
    return NUMAInfo(nodes=nodes, distances=distances)
