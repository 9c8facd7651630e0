"""TopologyHint: one NUMA placement a hint provider can accept.

A hint's affinity is a NUMA bitmask held as a plain int (bit i = NUMA node i), or
None for "any NUMA node / no preference" (kubelet's nil bitmask).
"""
from __future__ import annotations

from dataclasses import dataclass
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
