"""The static policy's machine state: built from machine info, replayed from assignments, compared.

kubelet keeps these in policy_static.go (getDefaultMachineState, the replay inside
validateState, areMachineStatesEqual). Sizes are bytes held in Go uint64s; where an
invalid configuration would make Go wrap around, the default state wraps too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional

from state.types import HUGEPAGES_PREFIX, MEMORY, Block, MemoryTable, NUMANodeMap, NUMANodeState

from kubeinputs.machine import MachineInfo, hugepage_resource_name
from memorymanager.policy import MemoryManagerError
from memorymanager.reserved_memory import SystemReservedMemory

UINT64_MASK = (1 << 64) - 1


def node_state(machine_state: NUMANodeMap, node_id: int) -> NUMANodeState:
    """The node's state; a missing or null node (a Go nil dereference) is a clear error."""
    node = machine_state.get(node_id)
    if node is None:
        raise MemoryManagerError(
            f"[memorymanager] NUMA node {node_id} is missing from the memory manager machine state "
            "(kubelet would crash here)"
        )
    return node


def memory_table(machine_state: NUMANodeMap, node_id: int, resource: str) -> MemoryTable:
    """The node's table for `resource`.

    A requested hugepage size that machine info does not list on every NUMA node
    makes kubelet dereference a missing table and crash; here it is an error that
    names the node and the resource.
    """
    node = node_state(machine_state, node_id)
    table = (node.memory_map or {}).get(resource)
    if table is None:
        raise MemoryManagerError(
            f'[memorymanager] NUMA node {node_id} has no "{resource}" in the memory manager machine state; '
            "machine info must list every requested hugepage size on every NUMA node (kubelet would crash here)"
        )
    return table


def resource_system_reserved(system_reserved: SystemReservedMemory, node_id: int, resource: str) -> int:
    """Reserved bytes of `resource` on `node_id` (0 when not configured)."""
    return system_reserved.get(node_id, {}).get(resource, 0)


def get_default_machine_state(machine_info: MachineInfo, system_reserved: SystemReservedMemory) -> NUMANodeMap:
    """The machine state of an empty node: per NUMA node, hugepage tables and the regular memory table.

    allocatable = free = total - reserved for each hugepage size; regular memory's
    allocatable also excludes every hugepage size's total on that node.
    """
    state: NUMANodeMap = {}
    hugepages_total: dict[int, int] = {}
    for node in machine_info.topology:
        node_id = node.node_id
        tables: dict[str, Optional[MemoryTable]] = {}
        state[node_id] = NUMANodeState(number_of_assignments=0, memory_map=tables, cells=[node_id])
        for hugepage in node.hugepages or []:
            name = hugepage_resource_name(hugepage.page_size)
            reserved = resource_system_reserved(system_reserved, node_id, name)
            total = (hugepage.num_pages * hugepage.page_size * 1024) & UINT64_MASK
            allocatable = (total - reserved) & UINT64_MASK
            tables[name] = MemoryTable(
                total_mem_size=total, system_reserved=reserved, allocatable=allocatable, reserved=0, free=allocatable
            )
            hugepages_total[node_id] = hugepages_total.get(node_id, 0) + total
        reserved = resource_system_reserved(system_reserved, node_id, MEMORY)
        allocatable = (node.memory - reserved - hugepages_total.get(node_id, 0)) & UINT64_MASK
        tables[MEMORY] = MemoryTable(
            total_mem_size=node.memory, system_reserved=reserved, allocatable=allocatable, reserved=0, free=allocatable
        )
    return state


@dataclass(frozen=True)
class AllocatableTerms:
    """How one NUMA node's allocatable bytes of one resource come about (getDefaultMachineState):
    `total` (the node's MemTotal, or a hugepage pool) - `hugepages` (regular memory only: every hugepage
    pool of the node) - `reserved` (reservedMemory) = `allocatable`. `adds_up` is False only for a state
    that was not made this way (a hand-edited or foreign checkpoint)."""

    node: int
    resource: str
    total: int
    hugepages: int
    reserved: int
    allocatable: int
    adds_up: bool


def allocatable_terms(node_id: int, tables: Mapping[str, tuple[int, int, int]]) -> list[AllocatableTerms]:
    """The allocatable arithmetic of one node from its tables' (total, systemReserved, allocatable): regular
    memory first, then the hugepage sizes by name. The inverse reading of `get_default_machine_state`."""
    hugepages = sum(total for name, (total, _, _) in tables.items() if name.startswith(HUGEPAGES_PREFIX))
    rows = []
    for name in sorted(tables, key=lambda r: (r != MEMORY, r)):
        total, reserved, allocatable = tables[name]
        pools = hugepages if name == MEMORY else 0
        rows.append(AllocatableTerms(node_id, name, total, pools, reserved, allocatable,
                                     (total - pools - reserved) & UINT64_MASK == allocatable))
    return rows


def machine_allocatable_terms(machine_state: NUMANodeMap) -> list[AllocatableTerms]:
    """`allocatable_terms` of every node of a machine state, by NUMA id (null nodes and tables skipped)."""
    rows: list[AllocatableTerms] = []
    for node_id, node in sorted(machine_state.items()):
        tables = {name: (t.total_mem_size, t.system_reserved, t.allocatable)
                  for name, t in ((node.memory_map or {}) if node is not None else {}).items() if t is not None}
        rows.extend(allocatable_terms(node_id, tables))
    return rows


def update_machine_state(machine_state: NUMANodeMap, numa_affinity: list[int], resource: str, size: int) -> None:
    """Account a new block: every node of the mask gains an assignment and joins the group;
    the bytes are taken from the nodes' free memory, lowest node first."""
    for node_id in numa_affinity:
        node = node_state(machine_state, node_id)
        node.number_of_assignments += 1
        node.cells = list(numa_affinity)
        if size == 0:
            continue
        table = memory_table(machine_state, node_id, resource)
        if table.free <= 0:
            continue
        if table.free >= size:
            table.reserved += size
            table.free -= size
            size = 0
            continue
        size -= table.free
        table.reserved += table.free
        table.free = 0


def release_memory(machine_state: NUMANodeMap, blocks: Iterable[Block]) -> None:
    """Give blocks back: per node of each block (stored order) drop one assignment, reset the
    group when none is left, and move bytes from reserved back to free."""
    for block in blocks:
        released = block.size
        for node_id in block.numa_affinity or []:
            node = node_state(machine_state, node_id)
            node.number_of_assignments -= 1
            if node.number_of_assignments == 0:
                node.cells = [node_id]
            if released == 0:
                continue
            table = memory_table(machine_state, node_id, block.type)
            if table.reserved == 0:
                continue
            if table.reserved < released:
                released -= table.reserved
                table.free += table.reserved
                table.reserved = 0
                continue
            table.free += released
            table.reserved -= released
            released = 0


def replay_blocks(
    expected: NUMANodeMap, blocks: Iterable[Block], pod_uid: str, container_name: str, strict_fit: bool
) -> None:
    """Add stored blocks to an expected machine state, as validateState does.

    Unknown NUMA nodes and memory types are kubelet's errors. A block part that no
    longer fits is silently dropped in released kubelet (the comparison then
    fails); with `strict_fit` (drift-tolerance code) it is the "does not fit" error.
    """
    for block in blocks:
        remaining = block.size
        affinity = block.numa_affinity or []
        for node_id in affinity:
            node = expected.get(node_id)
            if node is None:
                raise MemoryManagerError(
                    f"[memorymanager] (pod: {pod_uid}, container: {container_name}) "
                    "the memory assignment uses the NUMA that does not exist"
                )
            node.number_of_assignments += 1
            node.cells = list(affinity)
            table = (node.memory_map or {}).get(block.type)
            if table is None:
                raise MemoryManagerError(
                    f"[memorymanager] (pod: {pod_uid}, container: {container_name}) "
                    "the memory assignment uses memory resource that does not exist"
                )
            if remaining == 0 or table.free <= 0:
                continue
            if table.free >= remaining:
                table.reserved += remaining
                table.free -= remaining
                remaining = 0
                continue
            remaining -= table.free
            table.reserved += table.free
            table.free = 0
        if strict_fit and remaining > 0:
            raise MemoryManagerError(
                f"[memorymanager] (pod: {pod_uid}, container: {container_name}) "
                "the memory assignment does not fit the machine state"
            )


def replay_assignments(
    expected: NUMANodeMap, assignments: Mapping[str, Mapping[str, Optional[list[Block]]]],
    pod_blocks: Optional[Callable[[str], Optional[list[Block]]]], strict_fit: bool,
) -> None:
    """validateState's replay of every stored assignment into `expected` (a default machine state): pods,
    then their containers, in sorted order (Go's map order is random); a pod with pod-level blocks
    (`pod_blocks`, given under PodLevelResourceManagers) replays those instead of its containers'.
    With overlapping groups (kubelet #113035) the last block replayed on a node sets its cells, so
    the order can decide the verdict."""
    for pod_uid in sorted(assignments):
        if pod_blocks is not None:
            blocks = pod_blocks(pod_uid)
            if blocks:
                replay_blocks(expected, blocks, pod_uid, "", strict_fit)
                continue
        containers = assignments[pod_uid] or {}
        for container_name in sorted(containers):
            replay_blocks(expected, containers[container_name] or [], pod_uid, container_name, strict_fit)


def are_groups_equal(group1: Optional[list[int]], group2: Optional[list[int]]) -> bool:
    """Same NUMA ids in the same multiplicity. Like kubelet, sorts both lists in place."""
    if group1 is not None:
        group1.sort()
    if group2 is not None:
        group2.sort()
    return list(group1 or []) == list(group2 or [])


def _tables_equal(table1: MemoryTable, table2: MemoryTable) -> bool:
    """kubelet's areMemoryStatesEqual: total, system reserved and allocatable."""
    return (
        table1.total_mem_size == table2.total_mem_size
        and table1.system_reserved == table2.system_reserved
        and table1.allocatable == table2.allocatable
    )


def _group_sums(machine_state: NUMANodeMap, cells: list[int], resource: str) -> Optional[tuple[int, int]]:
    """(free, reserved) summed over a group; None where Go would dereference nil."""
    free = reserved = 0
    for node_id in cells:
        node = machine_state.get(node_id)
        table = None if node is None else (node.memory_map or {}).get(resource)
        if table is None:
            return None
        free += table.free
        reserved += table.reserved
    return free, reserved


def paired_tables(
    first: NUMANodeMap, second: NUMANodeMap
) -> Optional[list[tuple[NUMANodeState, str, MemoryTable, MemoryTable]]]:
    """The (node of `first`, resource, table of `first`, table of `second`) pairs of two states
    with the same shape, or None when the shape differs: other nodes, other assignment counts,
    other groups, other resource types, or a null node or table (where kubelet would crash).

    The common first half of kubelet's areMachineStatesEqual and isTolerableMachineStateDrift.
    """
    if len(first) != len(second):
        return None
    pairs = []
    for node_id, node1 in first.items():
        node2 = second.get(node_id)
        if node1 is None or node2 is None:
            return None
        if node1.number_of_assignments != node2.number_of_assignments:
            return None
        if not are_groups_equal(node1.cells, node2.cells):
            return None
        map1 = node1.memory_map or {}
        map2 = node2.memory_map or {}
        if len(map1) != len(map2):
            return None
        for resource, table1 in map1.items():
            table2 = map2.get(resource)
            if table1 is None or table2 is None:
                return None
            pairs.append((node1, resource, table1, table2))
    return pairs


def are_machine_states_equal(stored: NUMANodeMap, expected: NUMANodeMap) -> bool:
    """kubelet's areMachineStatesEqual: same nodes, assignments, groups and tables, with free and
    reserved compared as sums over the stored node's group (per-node splits may differ).

    Null nodes or tables, where kubelet would crash, count as a difference.
    """
    pairs = paired_tables(stored, expected)
    if pairs is None:
        return False
    for node1, resource, table1, table2 in pairs:
        if not _tables_equal(table1, table2):
            return False
        sums1 = _group_sums(stored, node1.cells or [], resource)
        sums2 = _group_sums(expected, node1.cells or [], resource)
        if sums1 is None or sums2 is None or sums1 != sums2:
            return False
    return True
