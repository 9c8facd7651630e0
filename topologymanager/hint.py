"""TopologyHint: one NUMA placement a hint provider can accept.

A hint's affinity is a NUMA bitmask held as a plain int (bit i = NUMA node i), or
None for "any NUMA node / no preference" (kubelet's nil bitmask).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional

from topologymanager import bitmask


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """kubelet's `TopologyHint{NUMANodeAffinity, Preferred}`.

    The zero value `TopologyHint()` = `{nil, false}` is what the affinity store
    returns for an unknown container.
    """

    numa_node_affinity: Optional[int] = None
    preferred: bool = False

    @classmethod
    def of(cls, nodes: Optional[Iterable[int]], preferred: bool) -> "TopologyHint":
        """A hint for a list of NUMA ids (None = any node); ids are range-checked."""
        if nodes is None:
            return cls(None, preferred)
        return cls(bitmask.new_bitmask(*nodes), preferred)

    def nodes(self) -> Optional[list[int]]:
        """The NUMA ids of the affinity, ascending; None for the nil affinity."""
        if self.numa_node_affinity is None:
            return None
        return bitmask.get_bits(self.numa_node_affinity)

    def is_equal(self, other: "TopologyHint") -> bool:
        """Same preferred flag and both affinities nil or equal (kubelet's IsEqual)."""
        return self.preferred == other.preferred and self.numa_node_affinity == other.numa_node_affinity

    def __repr__(self) -> str:
        return f"TopologyHint({self.nodes()}, preferred={self.preferred})"


# Up to this many NUMA nodes a provider's hint objects are memoised per node set (2 x 2^12 objects at most).
MAX_MEMOISED_NODES = 12


@lru_cache(maxsize=16)
def hint_objects(numa_nodes: tuple[int, ...]) -> tuple[tuple[TopologyHint, ...], tuple[TopologyHint, ...]]:
    """(not preferred, preferred): the hints {mask, False} and {mask, True} of every position mask of these
    NUMA nodes (position p = numa_nodes[p]), by position mask. Hints are frozen, so the hint providers share
    them instead of building 2^n new ones per call. Cost: O(2^n) the first time for a node set, O(1) after."""
    real = [0]
    for node_id in numa_nodes:
        bit = 1 << node_id
        real += [mask | bit for mask in real]
    return tuple(TopologyHint(m, False) for m in real), tuple(TopologyHint(m, True) for m in real)


@lru_cache(maxsize=32)
def hints_by_width(numa_nodes: tuple[int, ...], preferred_width: int) -> tuple[TopologyHint, ...]:
    """By position mask (as `hint_objects`): the hint preferred exactly when the mask has `preferred_width`
    nodes, the providers' rule for a listed mask. Memoised per node set and width, O(2^n) once."""
    not_preferred, preferred = hint_objects(numa_nodes)
    return tuple(preferred[m] if m.bit_count() == preferred_width else not_preferred[m]
                 for m in range(len(preferred)))
