"""NUMA hint arithmetic of the static policy: calculateHints, regenerateHints and their helpers.

Pure functions over a machine state (kubelet keeps them in policy_static.go). Hint
lists come out in `iterate_bit_masks` order over the sorted NUMA ids: all single
nodes, then pairs in lexicographic order, and so on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Optional, Sequence

from state.types import MEMORY, Block, NUMANodeMap, NUMANodeState
from topologymanager import bitmask
from topologymanager.hint import TopologyHint

from memorymanager.machine_state import are_groups_equal, memory_table, node_state

# (mask, resource) -> bytes of this pod's init-container memory that may be re-used on exactly that mask.
ReusableLookup = Callable[[int, str], int]

Hints = dict[str, list[TopologyHint]]


def no_reuse(mask: int, resource: str) -> int:
    """No re-usable memory anywhere (calculate_hints recognises it and skips the look-ups)."""
    return 0


def calculate_hints(
    machine_state: NUMANodeMap, requested: dict[str, int], reusable: ReusableLookup = no_reuse
) -> Hints:
    """Every NUMA mask that can hold the request, for every requested resource.

    A mask is skipped when its allocatable memory is too small (it then does not
    count towards the minimum size); otherwise it lowers the minimum size *before*
    the group and free-memory checks. Single nodes inside a multi-NUMA group, and
    multi-node masks touching a single-NUMA allocation or another group, are
    skipped; free memory (plus the pod's re-usable init memory for that exact mask)
    must cover the request. Preferred = the mask has the minimum size. When nothing
    fits the result is an empty map (no resource keys). Hints come out in
    `iterate_bit_masks` order; every resource's list holds the same (immutable) hints.

    Like kubelet, comparing groups sorts the nodes' `cells` lists in place.

    Same result, errors and side effects as `calculate_hints_plain`, faster: per-mask
    sums are subset sums built by doubling (sum[mask] = sum[mask without its highest
    node] + value[that node]) and the checks run as list comprehensions over all masks.
    Cost: O(2^n * r) for n NUMA nodes and r requested resources, plus O(2^n * g) for g
    nodes holding memory when some of them are in multi-NUMA groups (or when re-usable
    memory is looked up); the plain loop is O(2^n * n * r).
    """
    numa_nodes = sorted(machine_state)
    if not requested or not numa_nodes or not all(type(i) is int and 0 <= i < bitmask.MAX_BITS for i in numa_nodes):
        return calculate_hints_plain(machine_state, requested, reusable)  # the edge cases, as kubelet does them
    n = len(numa_nodes)
    resources = list(requested)
    sizes = [requested[resource] for resource in resources]

    # Per node and resource: free and allocatable bytes (raising, like the plain loop does at
    # its first masks, for the first missing node or table in node-then-resource order).
    nodes: list[NUMANodeState] = []
    free_values: list[list[int]] = [[] for _ in resources]
    alloc_values: list[list[int]] = [[] for _ in resources]
    for node_id in numa_nodes:
        nodes.append(node_state(machine_state, node_id))
        for i, resource in enumerate(resources):
            table = memory_table(machine_state, node_id, resource)
            free_values[i].append(table.free)
            alloc_values[i].append(table.allocatable)

    # Positions (bit p = numa_nodes[p]) below; `real` maps a position mask to its NUMA mask.
    order = _mask_order(n)
    alloc_ok = _covers(alloc_values, sizes)
    first_fit = order[0] if alloc_ok is None else next((m for m in order if alloc_ok[m]), 0)
    if not first_fit:
        return {}
    min_affinity_size = first_fit.bit_count()  # masks come smallest first

    in_group = 0  # single nodes to skip: part of a multi-NUMA group
    assigned = 0  # nodes holding memory
    single_cell = 0  # ... whose group is just themselves
    for p, node in enumerate(nodes):
        cells = node.cells or []
        if len(cells) > 1:
            in_group |= 1 << p
        if node.number_of_assignments > 0:
            assigned |= 1 << p
            if len(cells) == 1:
                single_cell |= 1 << p

    singles, multis = order[:n], order[n:]
    if reusable is no_reuse and assigned == single_cell:
        # A multi-node mask may only use nodes holding nothing; no group is compared, so no
        # `cells` list is sorted.
        ok = _both(alloc_ok, _covers(free_values, sizes))
        if ok is None:
            passing = [m for m in singles if not m & in_group]
            passing += [m for m in multis if not m & assigned]
        else:
            passing = [m for m in singles if ok[m] and not m & in_group]
            passing += [m for m in multis if ok[m] and not m & assigned]
    else:
        if alloc_ok is None:
            alloc_ok = [True] * (1 << n)
        passing = _passing_masks(order, alloc_ok, nodes, numa_nodes, in_group, assigned, single_cell,
                                 free_values, resources, sizes, reusable)
    if not passing:
        return {}
    # Masks come smallest first and none is below the minimum size: the preferred ones lead.
    preferred = next((i for i, m in enumerate(passing) if m.bit_count() != min_affinity_size), len(passing))
    if n <= _MAX_MEMOISED_NODES:
        not_preferred_hints, preferred_hints = _hint_objects(tuple(numa_nodes))
        hint_list = list(map(preferred_hints.__getitem__, passing[:preferred]))
        hint_list += map(not_preferred_hints.__getitem__, passing[preferred:])
    else:
        if numa_nodes != list(range(n)):
            real = _subset_sums([1 << node_id for node_id in numa_nodes])
            passing = [real[m] for m in passing]
        hint_list = [TopologyHint(m, i < preferred) for i, m in enumerate(passing)]
    return {resource: list(hint_list) for resource in resources}


def _passing_masks(
    order: Sequence[int],
    alloc_ok: list[bool],
    nodes: list[NUMANodeState],
    numa_nodes: list[int],
    in_group: int,
    assigned: int,
    single_cell: int,
    free_values: list[list[int]],
    resources: list[str],
    sizes: list[int],
    reusable: ReusableLookup,
) -> list[int]:
    """calculate_hints' mask-by-mask filter (position masks), for when groups must be compared
    or re-usable memory looked up: the plain loop's checks in its order, with its side effects
    (a group's `cells` sorted in place when first compared; `reusable` called per resource
    until one does not fit). Cost: O(2^n * (g + r)) for g nodes holding memory."""
    position = {node_id: p for p, node_id in enumerate(numa_nodes)}
    groups: dict[int, int] = {}  # position -> position mask of its sorted cells (-1: matches no mask)
    identity = numa_nodes == list(range(len(numa_nodes)))
    real = None if identity else _subset_sums([1 << node_id for node_id in numa_nodes])
    free_sums = [_subset_sums(values) for values in free_values]
    checks = list(zip(free_sums, resources, sizes))

    def group_of(p: int) -> int:
        """The node's group as a position mask, sorting its cells in place like kubelet."""
        if p not in groups:
            cells = nodes[p].cells
            if cells is not None:
                cells.sort()
            group = 0
            for node_id in cells or []:
                if node_id not in position or group >> position[node_id] & 1:
                    group = -1  # unknown node or a duplicate: never equal to a mask's bits
                    break
                group |= 1 << position[node_id]
            groups[p] = group if cells else -1
        return groups[p]

    passing = []
    for m in order:
        if not alloc_ok[m]:
            continue
        if m & (m - 1) == 0:
            if m & in_group:
                continue
        else:
            rest = m & assigned
            violates = False
            while rest:
                low = rest & -rest
                if low & single_cell or group_of(low.bit_length() - 1) != m:
                    violates = True
                    break
                rest ^= low
            if violates:
                continue
        if reusable is no_reuse:
            if any(sums[m] < size for sums, _, size in checks):
                continue
        else:
            mask = m if real is None else real[m]
            if any(sums[m] + reusable(mask, resource) < size for sums, resource, size in checks):
                continue
        passing.append(m)
    return passing


# Up to this many NUMA nodes the (immutable) hint objects are memoised per node set.
_MAX_MEMOISED_NODES = 12


@lru_cache(maxsize=8)
def _hint_objects(numa_nodes: tuple[int, ...]) -> tuple[list[TopologyHint], list[TopologyHint]]:
    """The hints {mask, False} and {mask, True} of every position mask of these NUMA nodes, by
    position mask (memoised: TopologyHint is frozen, so sharing them is safe). Cost: O(2^n)
    the first time for a node set, O(1) after."""
    real = _subset_sums([1 << node_id for node_id in numa_nodes])
    return [TopologyHint(m, False) for m in real], [TopologyHint(m, True) for m in real]


@lru_cache(maxsize=8)
def _mask_order(n: int) -> tuple[int, ...]:
    """Every non-empty mask of positions 0..n-1 in `iterate_bit_masks` order (memoised per n).
    Cost: O(2^n * n) the first time for each n, O(1) after."""
    return tuple(bitmask.iterate_bit_masks(range(n)))


def _subset_sums(values: Sequence[int]) -> list[int]:
    """sums[mask] = sum of values[p] over the positions p in mask, for every mask of len(values)
    positions; built by doubling (the masks with top position p extend those below it by
    values[p]). Cost: O(2^k) additions for k values."""
    sums = [0]
    for value in values:
        sums += [s + value for s in sums]
    return sums


def _covers(values_per_resource: list[list[int]], sizes: list[int]) -> Optional[list[bool]]:
    """ok[mask]: for every resource, the mask's summed values reach the requested size.

    None when every mask qualifies because every node alone does and no value is negative
    (such a sum is at least each of its terms). Cost: O(n * r) then, else O(2^n * r).
    """
    if all(min(values) >= max(size, 0) for values, size in zip(values_per_resource, sizes)):
        return None
    ok: list[bool] = []
    for values, size in zip(values_per_resource, sizes):
        sums = _subset_sums(values)
        ok = [s >= size for s in sums] if not ok else [o and s >= size for o, s in zip(ok, sums)]
    return ok


def _both(ok1: Optional[list[bool]], ok2: Optional[list[bool]]) -> Optional[list[bool]]:
    """Mask by mask, both conditions (None: every mask). Cost: O(2^n)."""
    if ok1 is None:
        return ok2
    if ok2 is None:
        return ok1
    return [a and b for a, b in zip(ok1, ok2)]


def calculate_hints_plain(
    machine_state: NUMANodeMap, requested: dict[str, int], reusable: ReusableLookup = no_reuse
) -> Hints:
    """Every NUMA mask that can hold the request, for every requested resource (the plain loop).

    The literal transcription of kubelet's calculateHints, kept as the oracle of
    `calculate_hints` and used for inputs its fast path does not take. Cost: O(2^n * n * r)
    for n NUMA nodes and r requested resources.

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
    checks = [check_mask(machine_state, mask, requested, reusable) for mask in bitmask.iterate_bit_masks(numa_nodes)]
    min_affinity_size = preferred_width(checks, len(numa_nodes))
    hints: Hints = {}
    for check in checks:
        if check.passes:
            for resource in requested:
                hints.setdefault(resource, []).append(TopologyHint(check.mask, False))

    for resource in requested:
        if resource in hints:
            hints[resource] = [
                TopologyHint(h.numa_node_affinity, bitmask.count(h.numa_node_affinity) == min_affinity_size)
                for h in hints[resource]
            ]
    return hints


# Why a mask fails the group rule (MaskCheck.group_rule).
GROUP_OK = ""
GROUP_SINGLE_IN_GROUP = "single-node-in-group"
GROUP_JOINS_SINGLE = "joins-single-numa-allocation"
GROUP_NOT_EQUAL = "differs-from-existing-group"


@dataclass(frozen=True)
class MaskCheck:
    """One mask as calculateHints judges it, with the numbers it judged on.

    `free` and `allocatable` are summed over the mask per requested resource; `reusable`
    is the pod's re-usable init-container memory on exactly this mask. The checks run in
    kubelet's order (allocatable, group rule, free); `group_rule` and `fits` are only
    evaluated when the earlier checks pass (None otherwise), so the side effects (cells
    sorted in place, re-usable look-ups) are kubelet's. `group_node` names the node whose
    allocation broke the group rule.
    """

    mask: int
    free: dict[str, int]
    allocatable: dict[str, int]
    allocatable_ok: bool
    group_rule: Optional[str] = None
    group_node: Optional[int] = None
    reusable: dict[str, int] = field(default_factory=dict)
    fits: Optional[bool] = None

    @property
    def passes(self) -> bool:
        """The mask becomes a hint."""
        return self.allocatable_ok and self.group_rule == GROUP_OK and bool(self.fits)


def check_mask(machine_state: NUMANodeMap, mask: int, requested: dict[str, int], reusable: ReusableLookup) -> MaskCheck:
    """calculateHints' checks of one mask (the plain loop's body): sums, allocatable, group rule, free."""
    bits = bitmask.get_bits(mask)
    total_free: dict[str, int] = {}
    total_allocatable: dict[str, int] = {}
    for node_id in bits:
        for resource in requested:
            table = memory_table(machine_state, node_id, resource)
            total_free[resource] = total_free.get(resource, 0) + table.free
            total_allocatable[resource] = total_allocatable.get(resource, 0) + table.allocatable
    if any(total_allocatable.get(resource, 0) < size for resource, size in requested.items()):
        return MaskCheck(mask, total_free, total_allocatable, False)

    rule, culprit = GROUP_OK, None
    if len(bits) == 1:
        if len(node_state(machine_state, bits[0]).cells or []) > 1:
            rule, culprit = GROUP_SINGLE_IN_GROUP, bits[0]
    else:
        for node_id in bits:
            node = node_state(machine_state, node_id)
            if node.number_of_assignments > 0:
                if len(node.cells or []) == 1:
                    rule, culprit = GROUP_JOINS_SINGLE, node_id
                    break
                if not are_groups_equal(node.cells, bits):
                    rule, culprit = GROUP_NOT_EQUAL, node_id
                    break
    if rule != GROUP_OK:
        return MaskCheck(mask, total_free, total_allocatable, True, rule, culprit)

    reused: dict[str, int] = {}
    fits = True
    for resource, size in requested.items():
        reused[resource] = reusable(mask, resource)
        if total_free.get(resource, 0) + reused[resource] < size:
            fits = False
            break
    return MaskCheck(mask, total_free, total_allocatable, True, GROUP_OK, None, reused, fits)


def preferred_width(checks: Sequence[MaskCheck], numa_node_count: int) -> int:
    """The number of nodes a preferred hint has: the narrowest mask whose allocatable memory
    covers the request (group and free checks do not matter), else the node count."""
    return min((bitmask.count(c.mask) for c in checks if c.allocatable_ok), default=numa_node_count)


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
