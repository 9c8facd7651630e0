"""The memory manager's state types, with kubelet's fields and JSON names.

Go distinguishes nil from empty slices and maps, and that difference reaches the
checkpoint's checksum (`"cells":[]` and `"cells":null` hash differently), so here
None stands for nil and [] / {} for empty, everywhere.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Optional

MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"


def is_memory_resource(name: str) -> bool:
    """`memory` or any `hugepages-<size>`: the resources the memory manager manages."""
    return name == MEMORY or name.startswith(HUGEPAGES_PREFIX)


@dataclass
class MemoryTable:
    """One resource on one NUMA node (kubelet's `MemoryTable`), sizes in bytes.

    total = systemReserved + allocatable (+ hugepages, for `memory`); allocatable = reserved + free.
    JSON: total, systemReserved, allocatable, reserved, free.
    """

    total_mem_size: int = 0
    system_reserved: int = 0
    allocatable: int = 0
    reserved: int = 0
    free: int = 0


@dataclass
class NUMANodeState:
    """One NUMA node (kubelet's `NUMANodeState`).

    `cells` is the NUMA group the node belongs to: [id] alone, or every node of a
    multi-NUMA allocation. JSON: numberOfAssignments, memoryMap, cells.
    """

    number_of_assignments: int = 0
    memory_map: Optional[dict[str, Optional[MemoryTable]]] = None
    cells: Optional[list[int]] = None

    def clone(self) -> "NUMANodeState":
        """A deep copy; like kubelet's Clone, a nil `cells` becomes an empty list."""
        return NUMANodeState(
            number_of_assignments=self.number_of_assignments,
            memory_map=copy.deepcopy(self.memory_map),
            cells=list(self.cells) if self.cells is not None else [],
        )


# NUMA id -> node state (kubelet's `NUMANodeMap`, JSON keys are decimal strings).
NUMANodeMap = dict[int, Optional[NUMANodeState]]


@dataclass
class Block:
    """A piece of memory of one type on a set of NUMA nodes (kubelet's `Block`).

    JSON: numaAffinity, type, size.
    """

    numa_affinity: Optional[list[int]]
    type: str
    size: int


# pod UID -> container name -> blocks (kubelet's `ContainerMemoryAssignments`).
ContainerMemoryAssignments = dict[str, dict[str, Optional[list[Block]]]]


@dataclass
class PodEntry:
    """Pod-level memory blocks (KEP-5526 pod-level resource managers). JSON: memoryBlocks (omitempty)."""

    memory_blocks: Optional[list[Block]] = None


# pod UID -> pod entry (kubelet's `PodMemoryAssignments`).
PodMemoryAssignments = dict[str, PodEntry]


def clone_machine_state(machine_state: NUMANodeMap) -> NUMANodeMap:
    """A deep copy of a NUMA node map (kubelet's NUMANodeMap.Clone)."""
    return {nid: (node.clone() if node is not None else None) for nid, node in machine_state.items()}
