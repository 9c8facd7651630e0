"""Go type descriptors of the memory manager's state types (package `state` in kubelet).

The checkpoint's bytes and its checksum depend on Go's view of each state type: its type
name, JSON tags, `omitempty`, pointer/map/slice shape. The generic descriptor kinds live in
`kubeinputs.gotypes`; this module describes kubelet's own state structs with them.
"""
from __future__ import annotations

from kubeinputs.gotypes import (
    CHECKSUM, INT, INT_SLICE, RESOURCE_NAME, STRING, UINT64,
    GoField, GoMap, GoPtr, GoSlice, GoStruct,
)
from state.types import Block, MemoryTable, NUMANodeState, PodEntry

MEMORY_TABLE = GoStruct(
    "state.MemoryTable",
    (
        GoField("TotalMemSize", "total", "total_mem_size", UINT64),
        GoField("SystemReserved", "systemReserved", "system_reserved", UINT64),
        GoField("Allocatable", "allocatable", "allocatable", UINT64),
        GoField("Reserved", "reserved", "reserved", UINT64),
        GoField("Free", "free", "free", UINT64),
    ),
    MemoryTable,
)

NUMA_NODE_STATE = GoStruct(
    "state.NUMANodeState",
    (
        GoField("NumberOfAssignments", "numberOfAssignments", "number_of_assignments", INT),
        GoField("MemoryMap", "memoryMap", "memory_map", GoMap(RESOURCE_NAME, GoPtr(MEMORY_TABLE))),
        GoField("Cells", "cells", "cells", INT_SLICE),
    ),
    NUMANodeState,
)

NUMA_NODE_MAP = GoMap(INT, GoPtr(NUMA_NODE_STATE), "state.NUMANodeMap")


def _zero_block() -> Block:
    """The zero Block: nil affinity, empty type, size 0."""
    return Block(numa_affinity=None, type="", size=0)


BLOCK = GoStruct(
    "state.Block",
    (
        GoField("NUMAAffinity", "numaAffinity", "numa_affinity", INT_SLICE),
        GoField("Type", "type", "type", RESOURCE_NAME),
        GoField("Size", "size", "size", UINT64),
    ),
    _zero_block,
)

BLOCKS = GoSlice(BLOCK)

CONTAINER_MEMORY_ASSIGNMENTS = GoMap(STRING, GoMap(STRING, BLOCKS), "state.ContainerMemoryAssignments")

POD_ENTRY = GoStruct(
    "state.PodEntry",
    (GoField("MemoryBlocks", "memoryBlocks", "memory_blocks", BLOCKS, omitempty=True),),
    PodEntry,
)

POD_MEMORY_ASSIGNMENTS = GoMap(STRING, POD_ENTRY, "state.PodMemoryAssignments")
