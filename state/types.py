"""The memory manager's state types, with kubelet's fields and JSON names.

Go distinguishes nil from empty slices and maps, and that difference reaches the
checkpoint's checksum (`"cells":[]` and `"cells":null` hash differently), so here
None stands for nil and [] / {} for empty, everywhere.
"""
from __future__ import annotations

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
        """A deep copy; like kubelet's Clone, a nil `cells` becomes an empty list (a nil memory map
        and nil tables stay nil). Cost: O(tables + cells), built field by field (no deepcopy)."""
        memory_map = self.memory_map
        if memory_map is not None:
            memory_map = {resource: clone_memory_table(table) for resource, table in memory_map.items()}
        return NUMANodeState(
            self.number_of_assignments, memory_map, list(self.cells) if self.cells is not None else []
        )


def clone_memory_table(table: Optional[MemoryTable]) -> Optional[MemoryTable]:
    """A copy of a memory table (None stays None). Cost: O(1)."""
    if table is None:
        return None
    return MemoryTable(table.total_mem_size, table.system_reserved, table.allocatable, table.reserved, table.free)


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


def clone_machine_state(machine_state: Optional[NUMANodeMap]) -> NUMANodeMap:
    """A deep copy of a NUMA node map (kubelet's NUMANodeMap.Clone; a nil map gives an empty one).
    Cost: O(nodes * tables)."""
    if machine_state is None:
        return {}
    return {nid: (node.clone() if node is not None else None) for nid, node in machine_state.items()}


def clone_block(block: Block) -> Block:
    """A copy of a block that shares nothing with it. Cost: O(len(numa_affinity))."""
    affinity = list(block.numa_affinity) if block.numa_affinity is not None else None
    return Block(numa_affinity=affinity, type=block.type, size=block.size)


def clone_blocks(blocks: Optional[list[Block]]) -> list[Block]:
    """`append([]Block{}, blocks...)`: a copy, never nil. Cost: O(blocks)."""
    return [clone_block(b) for b in blocks or ()]


def clone_assignments(assignments: Optional[ContainerMemoryAssignments]) -> ContainerMemoryAssignments:
    """kubelet's ContainerMemoryAssignments.Clone: nil maps become empty, nil block lists []."""
    return {
        pod: {container: clone_blocks(blocks) for container, blocks in (containers or {}).items()}
        for pod, containers in (assignments or {}).items()
    }


def clone_pod_assignments(pod_assignments: Optional[PodMemoryAssignments]) -> PodMemoryAssignments:
    """A deep copy of pod-level assignments (a nil map gives an empty one; nil block lists stay nil)."""
    return {
        pod: PodEntry(memory_blocks=None if entry.memory_blocks is None else clone_blocks(entry.memory_blocks))
        for pod, entry in (pod_assignments or {}).items()
    }
