"""The node's state and hints as JSON data, in the shapes the scenarios and the CLI show.

State values come out exactly as the checkpoint file writes them (`machineState`,
`entries`, `podEntries`, block lists: Go's encoding/json over the state's Go types);
a hint comes out as the scenario format's `{numaAffinity: [..] | null, preferred}`.
The runner's observations and `memorymanager checkpoint inspect` both use them.
"""
from __future__ import annotations

import json
from typing import Optional

from kubeinputs import gojson
from state.go_descriptors import BLOCKS, CONTAINER_MEMORY_ASSIGNMENTS, NUMA_NODE_MAP, POD_MEMORY_ASSIGNMENTS
from state.types import (Block, ContainerMemoryAssignments, MemoryTable, NUMANodeMap, NUMANodeState,
                         PodMemoryAssignments)
from topologymanager.hint import TopologyHint


def _to_obj(value, gotype) -> object:
    """The value as Python JSON data, exactly as the checkpoint writes it."""
    return json.loads(gojson.marshal(value, gotype))


# The renderings below build that data directly (the runner renders the state after steps, so this is
# per-step work). They take that path only when every text in the value is ASCII, which a JSON round trip
# gives back unchanged and whose byte order, by which Go sorts map keys, is Python's string order; any
# other value goes through the codec. Tests check both against each other.


def _ints(values: Optional[list[int]]) -> Optional[list[int]]:
    """A []int as JSON data."""
    return None if values is None else [int(v) for v in values]


def _table_obj(t: Optional[MemoryTable]) -> Optional[dict]:
    """A *MemoryTable as JSON data."""
    if t is None:
        return None
    return {"total": int(t.total_mem_size), "systemReserved": int(t.system_reserved),
            "allocatable": int(t.allocatable), "reserved": int(t.reserved), "free": int(t.free)}


def _node_obj(node: Optional[NUMANodeState]) -> Optional[dict]:
    """A *NUMANodeState as JSON data."""
    if node is None:
        return None
    tables = node.memory_map
    return {"numberOfAssignments": int(node.number_of_assignments),
            "memoryMap": None if tables is None else {name: _table_obj(tables[name]) for name in sorted(tables)},
            "cells": _ints(node.cells)}


def machine_state_to_obj(machine_state: Optional[NUMANodeMap]) -> Optional[dict]:
    """The checkpoint's `machineState` object (string keys, sorted as Go sorts them)."""
    if machine_state is None:
        return None
    if not all(node is None or node.memory_map is None or all(name.isascii() for name in node.memory_map)
               for node in machine_state.values()):
        return _to_obj(machine_state, NUMA_NODE_MAP)  # type: ignore[return-value]
    keyed = sorted(((str(k), node) for k, node in machine_state.items()), key=lambda item: item[0])
    return {key: _node_obj(node) for key, node in keyed}


def blocks_to_obj(blocks: Optional[list[Block]]) -> Optional[list]:
    """A block list as the checkpoint writes it."""
    if blocks is None:
        return None
    if not all(b.type.isascii() for b in blocks):
        return _to_obj(blocks, BLOCKS)  # type: ignore[return-value]
    return [{"numaAffinity": _ints(b.numa_affinity), "type": b.type, "size": int(b.size)} for b in blocks]


def assignments_to_obj(assignments: Optional[ContainerMemoryAssignments]) -> Optional[dict]:
    """The checkpoint's `entries` object."""
    if assignments is None:
        return None
    if not all(pod.isascii() and (containers is None or all(name.isascii() for name in containers))
               for pod, containers in assignments.items()):
        return _to_obj(assignments, CONTAINER_MEMORY_ASSIGNMENTS)  # type: ignore[return-value]
    return {pod: None if (containers := assignments[pod]) is None
            else {name: blocks_to_obj(containers[name]) for name in sorted(containers)}
            for pod in sorted(assignments)}


def pod_assignments_to_obj(pod_assignments: Optional[PodMemoryAssignments]) -> Optional[dict]:
    """The checkpoint's `podEntries` object (`memoryBlocks` left out when empty, as omitempty does)."""
    if pod_assignments is None:
        return None
    if not all(pod.isascii() for pod in pod_assignments):
        return _to_obj(pod_assignments, POD_MEMORY_ASSIGNMENTS)  # type: ignore[return-value]
    return {pod: {"memoryBlocks": blocks_to_obj(blocks)} if (blocks := pod_assignments[pod].memory_blocks) else {}
            for pod in sorted(pod_assignments)}


def hint_to_obj(hint: TopologyHint) -> dict:
    """A hint in the scenario format: `{numaAffinity: [..] | null, preferred: bool}`."""
    return {"numaAffinity": hint.nodes(), "preferred": hint.preferred}
