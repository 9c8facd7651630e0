"""Topology zones from the memory manager's machine state: the one builder for NRT-shaped
exports of this project.

One zone per NUMA node, named `node-<id>`, type `Node`, with one resource per memory
resource of the node (capacity = total, allocatable = kubelet's allocatable, available =
free) and the attribute `memory set` = the node's id. Optionally one sub-zone per container
with assigned memory, type `allocation for container`, under the zone of the lowest node of
its memory set, holding the bytes it was assigned and its memory set.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from kubeinputs.cpuset import cpuset_string
from kubeinputs.quantity import BINARY_SI, Quantity
from state.types import NUMANodeState

from memorymanager.resmgr.types import (
    CONTAINER_ALLOCATION_ZONE_TYPE,
    MEMSET_ATTRIBUTE,
    TopologyZone,
    ZoneAttribute,
    ZoneResource,
)

NODE_ZONE_TYPE = "Node"


def node_zone_name(numa_node: int) -> str:
    """`node-<id>`, the NRT name of a NUMA node zone."""
    return f"node-{numa_node}"


def _q(value: int) -> Quantity:
    return Quantity.from_int(value, BINARY_SI)


def numa_zones(
    machine_state: Mapping[int, NUMANodeState],
    containers: Sequence[tuple[str, Sequence[int], Mapping[str, int]]] = (),
) -> list[TopologyZone]:
    """The zones of a machine state; `containers` are (zone name, NUMA nodes, bytes per
    resource) of the container sub-zones to add (none by default)."""
    zones: list[TopologyZone] = []
    for numa in sorted(machine_state):
        tables = machine_state[numa].memory_map or {}
        resources = tuple(
            ZoneResource(name, _q(t.total_mem_size), _q(t.allocatable), _q(t.free))
            for name, t in sorted(tables.items()) if t is not None
        )
        zones.append(TopologyZone(node_zone_name(numa), NODE_ZONE_TYPE, "", resources,
                                  (ZoneAttribute(MEMSET_ATTRIBUTE, str(numa)),)))
    for name, nodes, memory in containers:
        if not nodes:
            continue
        resources = tuple(ZoneResource(r, _q(size), _q(size), _q(0)) for r, size in sorted(memory.items()))
        zones.append(TopologyZone(name, CONTAINER_ALLOCATION_ZONE_TYPE, node_zone_name(min(nodes)), resources,
                                  (ZoneAttribute(MEMSET_ATTRIBUTE, cpuset_string(nodes)),)))
    return zones
