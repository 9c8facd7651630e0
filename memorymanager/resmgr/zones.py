"""Topology zones from the memory manager's machine state, built by the NRT export's own zone
builder (`memorymanager.server.nrt_zones.node_zones`), so both publish the same form.

One zone per NUMA node, named `node-<id>`, type `Node`, with one resource per memory
resource of the node (capacity = total, allocatable = kubelet's allocatable, available =
free: exact here, where the NRT export estimates it from PodResources as NFD does) and the
attribute `memory set` = the node's id, then the node's CPU attributes when the caller gives some
(`cpuset`, `shared cpuset`, `reserved cpuset`). Optionally one sub-zone per container with
assigned memory, type `allocation for container`, under the zone of the lowest node of its memory
set, holding the bytes it was assigned, its `cpuset` (its cpuset.cpus, when it has one, as
nri-plugins' balloons shows a container) and its memory set. The NRT `costs` have no place in the
seed's `TopologyZone` and are left out.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

from kubeinputs.cpuset import cpuset_string
from kubeinputs.quantity import BINARY_SI, Quantity, parse_quantity
from memorymanager.server.nrt_zones import ZoneAmounts, node_zones, zone_name
from state.types import NUMANodeState

from memorymanager.resmgr.types import (
    CONTAINER_ALLOCATION_ZONE_TYPE,
    CPUS_ATTRIBUTE,
    MEMSET_ATTRIBUTE,
    TopologyZone,
    ZoneAttribute,
    ZoneResource,
)

def node_zone_name(numa_node: int) -> str:
    """`node-<id>`, the NRT name of a NUMA node zone."""
    return zone_name(numa_node)


def _q(value: int) -> Quantity:
    """Bytes as a binary-SI quantity (`2972Mi`), as the seed's memory zones print them."""
    return Quantity.from_int(value, BINARY_SI)


def _binary(text: str) -> Quantity:
    """A quantity of the NRT form (decimal SI) in the binary-SI form of memory."""
    return _q(parse_quantity(text).as_int64())


def numa_zones(
    machine_state: Mapping[int, NUMANodeState],
    containers: Sequence[tuple[str, Sequence[int], Mapping[str, int], str]] = (),
    node_attributes: Optional[Mapping[int, Sequence[ZoneAttribute]]] = None,
) -> list[TopologyZone]:
    """The zones of a machine state; `containers` are (zone name, NUMA nodes, bytes per resource,
    cpuset.cpus) of the container sub-zones to add (none by default); `node_attributes` more
    attributes of the node zones, by NUMA node."""
    amounts = {
        numa: {name: ZoneAmounts(t.total_mem_size, t.allocatable, t.free)
               for name, t in (machine_state[numa].memory_map or {}).items() if t is not None}
        for numa in machine_state
    }
    zones: list[TopologyZone] = []
    built = node_zones({numa: None for numa in machine_state}, amounts)  # one per node, by id
    for numa, zone in zip(sorted(machine_state), built):
        resources = tuple(
            ZoneResource(r["name"], _binary(r["capacity"]), _binary(r["allocatable"]), _binary(r["available"]))
            for r in zone["resources"]
        )
        attributes = (ZoneAttribute(MEMSET_ATTRIBUTE, str(numa)), *(node_attributes or {}).get(numa, ()))
        zones.append(TopologyZone(zone["name"], zone["type"], "", resources, attributes))
    for name, nodes, memory, cpus in containers:
        if not nodes:
            continue
        resources = tuple(ZoneResource(r, _q(size), _q(size), _q(0)) for r, size in sorted(memory.items()))
        cpuset = (ZoneAttribute(CPUS_ATTRIBUTE, cpus),) if cpus else ()
        zones.append(TopologyZone(name, CONTAINER_ALLOCATION_ZONE_TYPE, node_zone_name(min(nodes)), resources,
                                  (*cpuset, ZoneAttribute(MEMSET_ATTRIBUTE, cpuset_string(nodes)))))
    return zones
