"""The one builder of NUMA-node zones in the NodeResourceTopology (v1alpha2) form, shared by
the NRT export (`nrt_aggregator`) and the resource manager's topology zones: per node `node-N`,
type `Node`, `costs` from the node's distances (left out when there are none, as Go's
`omitempty` does) and the resources sorted by name (the updater's order comes from a Go map)
with their capacity, allocatable and available amounts printed as `resource.NewQuantity(n,
DecimalSI)` prints them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from kubeinputs.quantity import Quantity


def zone_name(numa: int) -> str:
    """The updater's zone name of a NUMA node."""
    return f"node-{numa}"


def quantity(value: int) -> str:
    """resource.NewQuantity(value, DecimalSI).String()."""
    return str(Quantity.from_int(int(value)))


@dataclass
class ZoneAmounts:
    """One resource of one NUMA zone: capacity >= allocatable >= available (available may go
    below zero for CPUs and devices, as in NFD)."""

    capacity: int
    allocatable: int
    available: int


def node_zones(distances: Mapping[int, Optional[Sequence[int]]],
               amounts: Mapping[int, Mapping[str, ZoneAmounts]]) -> list[dict[str, Any]]:
    """The zones of `distances`' nodes (by id): `node-N`, type `Node`, `costs` named by the
    distance vector's index (when there is one) and the resources with their three amounts."""
    out = []
    for numa in sorted(distances):
        zone: dict[str, Any] = {"name": zone_name(numa), "type": "Node"}
        if distances[numa]:
            zone["costs"] = [{"name": zone_name(j), "value": int(d)} for j, d in enumerate(distances[numa] or [])]
        zone["resources"] = [
            {"name": name, "capacity": quantity(a.capacity), "allocatable": quantity(a.allocatable),
             "available": quantity(a.available)}
            for name, a in sorted(amounts.get(numa, {}).items())
        ]
        out.append(zone)
    return out
