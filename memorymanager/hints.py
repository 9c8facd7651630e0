"""NUMA hint arithmetic of the static policy: calculateHints, regenerateHints and their helpers.

Pure functions over a machine state (kubelet keeps them in policy_static.go). Hint
lists come out in `iterate_bit_masks` order over the sorted NUMA ids: all single
nodes, then pairs in lexicographic order, and so on.
"""
from __future__ import annotations

from typing import Callable, Optional

from state.types import MEMORY, Block, NUMANodeMap
from topologymanager import bitmask
from topologymanager.hint import TopologyHint

from .machine_state import are_groups_equal, memory_table, node_state

# (mask, resource) -> bytes of this pod's init-container memory that may be re-used on exactly that mask.
ReusableLookup = Callable[[int, str], int]

Hints = dict[str, list[TopologyHint]]


def _no_reuse(mask: int, resource: str) -> int:
    """No re-usable memory anywhere."""
    return 0


def calculate_hints(
    machine_state: NUMANodeMap, requested: dict[str, int], reusable: ReusableLookup = _no_reuse
) -> Hints:
    """Every NUMA mask that can hold the request, for every requested resource.

    A mask is skipped when its allocatable memory is too small (it then does not
    count towards the minimum size); otherwise it lowers the minimum size *before*
    the group and free-memory checks. Single nodes inside a multi-NUMA group, and
    multi-node masks touching a single-NUMA allocation or another group, are
    skipped; free memory (plus the pod's re-usable init memory for that exact mask)
    must cover the request. Preferred = the mask has the minimum size. When nothing
    fits the result is an empty map (no resource keys).

    Like kubelet, comparing groups sorts the nodes' `cells` lists in place.
    """
    numa_nodes = sorted(machine_state)
    min_affinity_size = len(numa_nodes)
    hints: Hints = {}
    for mask in bitmask.iterate_bit_masks(numa_nodes):
        bits = bitmask.get_bits(mask)
        single = len(bits) == 1

        total_free: dict[str, int] = {}
        total_allocatable: dict[str, int] = {}
        for node_id in bits:
            for resource in requested:
                table = memory_table(machine_state, node_id, resource)
                total_free[resource] = total_free.get(resource, 0) + table.free
                total_allocatable[resource] = total_allocatable.get(resource, 0) + table.allocatable

        if any(total_allocatable.get(resource, 0) < size for resource, size in requested.items()):
            continue

        min_affinity_size = min(min_affinity_size, bitmask.count(mask))

        if single and len(node_state(machine_state, bits[0]).cells or []) > 1:
            continue

        violates_group = False
        if not single:
            for node_id in bits:
                node = node_state(machine_state, node_id)
                if node.number_of_assignments > 0:
                    if len(node.cells or []) == 1 or not are_groups_equal(node.cells, bits):
                        violates_group = True
                        break
        if violates_group:
            continue

        if any(total_free.get(resource, 0) + reusable(mask, resource) < size for resource, size in requested.items()):
            continue

        for resource in requested:
            hints.setdefault(resource, []).append(TopologyHint(mask, False))

    for resource in requested:
        if resource in hints:
            hints[resource] = [
                TopologyHint(h.numa_node_affinity, bitmask.count(h.numa_node_affinity) == min_affinity_size)
                for h in hints[resource]
            ]
    return hints


def regenerate_hints(blocks: list[Block], requested: dict[str, int]) -> Optional[Hints]:
    """Hints that pin a container (or pod) back onto the memory it already holds.

    None (no preference) when the blocks do not match the request exactly: a
    different number of blocks, a type not requested, or a different size.
    """
    hints: Hints = {resource: [] for resource in requested}
    if len(blocks) != len(requested):
        return None
    for block in blocks:
        if block.type not in requested:
            return None
        if block.size != requested[block.type]:
            return None
        try:
            mask = bitmask.new_bitmask(*(block.numa_affinity or []))
        except bitmask.BitMaskError:
            return None
        hints[block.type].append(TopologyHint(mask, True))
    return hints


def find_best_hint(hints: list[TopologyHint]) -> TopologyHint:
    """The first preferred hint with the fewest nodes (narrower; equal size -> lower mask)."""
    best = TopologyHint()
    for hint in hints:
        if best.numa_node_affinity is None:
            best = hint
            continue
        if hint.preferred and not best.preferred:
            best = hint
            continue
        if hint.preferred == best.preferred and bitmask.is_narrower_than(
            hint.numa_node_affinity, best.numa_node_affinity
        ):
            best = hint
    return best


def default_memory_hint(hints: Hints) -> TopologyHint:
    """The best `memory` hint (kubelet checks only regular memory: all types share masks)."""
    return find_best_hint(hints.get(MEMORY, []))


def is_affinity_satisfy_request(machine_state: NUMANodeMap, mask: int, requested: dict[str, int]) -> bool:
    """Whether the mask's free memory alone (no re-usable memory) covers every requested resource."""
    total_free: dict[str, int] = {}
    for node_id in bitmask.get_bits(mask):
        for resource in requested:
            total_free[resource] = total_free.get(resource, 0) + memory_table(machine_state, node_id, resource).free
    return all(total_free.get(resource, 0) >= size for resource, size in requested.items())


def is_hint_in_group(hint: list[int], group: list[int]) -> bool:
    """Whether every NUMA id of `hint` is in `group`."""
    return set(hint) <= set(group)


def is_affinity_violating_numa_allocations(machine_state: NUMANodeMap, mask: int) -> bool:
    """A multi-node mask may not include a node holding single-NUMA memory or a node of another group.

    Single-node masks never violate (even when the node is part of a group).
    Like kubelet, comparing groups sorts the nodes' `cells` lists in place.
    """
    bits = bitmask.get_bits(mask)
    if len(bits) == 1:
        return False
    for node_id in bits:
        node = node_state(machine_state, node_id)
        if node.number_of_assignments == 0:
            continue
        if len(node.cells or []) == 1:
            return True
        if not are_groups_equal(node.cells, bits):
            return True
    return False


def numa_affinities_equal(affinity1: Optional[list[int]], affinity2: Optional[list[int]]) -> bool:
    """Same NUMA set (order and duplicates ignored), as kubelet compares bitmasks."""
    try:
        return bitmask.new_bitmask(*(affinity1 or [])) == bitmask.new_bitmask(*(affinity2 or []))
    except bitmask.BitMaskError:
        return False
