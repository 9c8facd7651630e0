"""What calculateHints reads of a machine state, by position: the one reader of the listed hints
(`hints.py`) and of the hint family (`hint_family.py`), with the reference loop's errors for a
missing node or table."""
from __future__ import annotations

from dataclasses import dataclass

from state.types import NUMANodeMap, NUMANodeState

from memorymanager.machine_state import memory_table, node_state
from memorymanager.reusable_memory import ReusableLookup


@dataclass(frozen=True, slots=True)
class HintInputs:
    """What calculate_hints' mask filters read, by position (bit p = numa_nodes[p])."""

    numa_nodes: list[int]
    nodes: list[NUMANodeState]
    resources: list[str]
    sizes: list[int]  # requested bytes, by resource index
    free: list[list[int]]  # free bytes, by resource index then position
    allocatable: list[list[int]]  # allocatable bytes, by resource index then position
    in_group: int  # single nodes to skip: part of a multi-NUMA group
    assigned: int  # nodes holding memory
    single_cell: int  # ... whose group is just themselves
    reusable: ReusableLookup


def hint_inputs(
    machine_state: NUMANodeMap, numa_nodes: list[int], requested: dict[str, int], reusable: ReusableLookup
) -> HintInputs:
    """Nodes and tables by position, read node then resource: a missing one raises the reference loop's error."""
    resources = list(requested)
    nodes: list[NUMANodeState] = []
    free: list[list[int]] = [[] for _ in resources]
    allocatable: list[list[int]] = [[] for _ in resources]
    for node_id in numa_nodes:
        nodes.append(node_state(machine_state, node_id))
        for i, resource in enumerate(resources):
            table = memory_table(machine_state, node_id, resource)
            free[i].append(table.free)
            allocatable[i].append(table.allocatable)
    in_group, assigned, single_cell = group_positions(nodes)
    return HintInputs(numa_nodes, nodes, resources, [requested[r] for r in resources], free, allocatable,
                      in_group, assigned, single_cell, reusable)


def group_positions(nodes: list[NUMANodeState]) -> tuple[int, int, int]:
    """Position masks of nodes in a multi-NUMA group, holding memory, and holding it alone: for the group checks."""
    in_group = assigned = single_cell = 0
    for p, node in enumerate(nodes):
        cells = node.cells or []
        if len(cells) > 1:
            in_group |= 1 << p
        if node.number_of_assignments > 0:
            assigned |= 1 << p
            if len(cells) == 1:
                single_cell |= 1 << p
    return in_group, assigned, single_cell
