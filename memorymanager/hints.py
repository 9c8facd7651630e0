"""NUMA hint arithmetic of the static policy: calculateHints, regenerateHints and their helpers.

Pure functions over a machine state (kubelet keeps them in policy_static.go). Hint
lists come out in `iterate_bit_masks` order over the sorted NUMA ids: all single
nodes, then pairs in lexicographic order, and so on.

Inside `calculate_hints`, masks are *position masks*: bit p stands for the p-th
smallest NUMA id, so that every per-mask table is a list indexed by the mask. A
`MaskFilter` says which masks pass a check: a list of booleans indexed by the mask,
or `ALL_MASKS` when every mask passes (then no list is built).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Optional, Sequence, Union

from state.types import MEMORY, Block, NUMANodeMap, clone_machine_state
from topologymanager import bitmask
from topologymanager.errors import BoundedWorkError
from topologymanager.hint import MAX_MEMOISED_NODES, TopologyHint, hint_objects
from topologymanager.hint_family import HintFamily

from memorymanager.hint_family import FAMILY_MIN_NODES, family_hints
from memorymanager.hint_inputs import HintInputs, hint_inputs
from memorymanager.machine_state import are_groups_equal, memory_table, node_state
from memorymanager.reference_hints import reference_calculate_hints
from memorymanager.reusable_memory import ReusableLookup, no_reuse

Hints = dict[str, list[TopologyHint]]


class _AllMasks:
    """The filter every mask passes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ALL_MASKS"


ALL_MASKS = _AllMasks()
MaskFilter = Union[list[bool], _AllMasks]


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

    Same result, errors and side effects as `reference_calculate_hints`, faster: per-mask
    sums are subset sums built by doubling (sum[mask] = sum[mask without its highest
    node] + value[that node]) and the checks run as list comprehensions over all masks.
    From FAMILY_MIN_NODES NUMA nodes on, every resource's list is one
    `hint_family.MemoryHintFamily` (the same hints, searched instead of listed).

    Cost: O(2^n * r) for n NUMA nodes and r requested resources, plus O(2^n * g) for g
    nodes holding memory when some of them are in multi-NUMA groups (or when re-usable
    memory is looked up); the reference loop is O(2^n * n * r).
    """
    numa_nodes = sorted(machine_state)
    if not _has_fast_path(numa_nodes, requested):
        return reference_calculate_hints(machine_state, requested, reusable)  # the edge cases, as kubelet does them
    if len(numa_nodes) >= FAMILY_MIN_NODES:
        return _family_or_listed(machine_state, numa_nodes, requested, reusable)
    return _listed_hints(machine_state, numa_nodes, requested, reusable)


# Up to this many NUMA nodes today's enumerating code finishes (27 s at 24 in issue 14's
# measurement): where the family search would refuse (BoundedWorkError), it answers instead.
LISTED_FALLBACK_MAX_NODES = 24


def _family_or_listed(machine_state: NUMANodeMap, numa_nodes: list[int], requested: dict[str, int],
                      reusable: ReusableLookup) -> Hints:
    """The hints as a family (hint_family.py); each family can give back the enumerating path's
    lists (`kubelet_list`) on machines where that path finishes, from a copy of this state."""
    try:
        hints = family_hints(machine_state, requested, reusable)
    except BoundedWorkError:
        if len(numa_nodes) > LISTED_FALLBACK_MAX_NODES:
            raise
        return _listed_hints(machine_state, numa_nodes, requested, reusable)
    if hints and len(numa_nodes) <= LISTED_FALLBACK_MAX_NODES:
        snapshot = clone_machine_state(machine_state)
        requested = dict(requested)
        listed: dict[str, Hints] = {}

        def relist() -> list[TopologyHint]:
            if "hints" not in listed:
                listed["hints"] = _listed_hints(clone_machine_state(snapshot), numa_nodes, requested, reusable)
            return listed["hints"][next(iter(requested))]

        for family in {id(f): f for f in hints.values()}.values():
            family.relist = relist
    return hints


def _listed_hints(machine_state: NUMANodeMap, numa_nodes: list[int], requested: dict[str, int],
                  reusable: ReusableLookup) -> Hints:
    """Today's enumerating path: every mask, by subset sums (the body of calculate_hints)."""
    inputs = hint_inputs(machine_state, numa_nodes, requested, reusable)
    order = _mask_order(len(numa_nodes))
    fits_allocatable = _covers(inputs.allocatable, inputs.sizes)
    first_fit = _first_passing(order, fits_allocatable)
    if not first_fit:
        return {}
    if reusable is no_reuse and inputs.assigned == inputs.single_cell:
        passing = _passing_masks_without_groups(inputs, order, fits_allocatable)
    else:
        passing = _passing_masks_one_by_one(inputs, _masks_passing(order, fits_allocatable))
    if not passing:
        return {}
    return _hints_of_masks(inputs, passing, first_fit.bit_count())  # masks come smallest first


def _has_fast_path(numa_nodes: list[int], requested: dict[str, int]) -> bool:
    """Whether the fast path applies (a request, some NUMA node, ids in bitmask range); else the reference loop."""
    return bool(requested) and bool(numa_nodes) and all(
        type(i) is int and 0 <= i < bitmask.MAX_BITS for i in numa_nodes
    )


def _passing_masks_without_groups(
    inputs: HintInputs, order: Sequence[int], fits_allocatable: MaskFilter
) -> list[int]:
    """Passing masks without look-ups or group comparisons (none needed: no reuse, no group holds memory).

    A multi-node mask may then only use nodes holding nothing, so no `cells` list is sorted
    and the checks run over whole lists.
    """
    n = len(inputs.numa_nodes)
    fits = _both(fits_allocatable, _covers(inputs.free, inputs.sizes))
    singles, multis = order[:n], order[n:]
    in_group, assigned = inputs.in_group, inputs.assigned
    if fits is ALL_MASKS:
        passing = [m for m in singles if not m & in_group]
        passing += [m for m in multis if not m & assigned]
    else:
        passing = [m for m in singles if fits[m] and not m & in_group]
        passing += [m for m in multis if fits[m] and not m & assigned]
    return passing


def _passing_masks_one_by_one(inputs: HintInputs, candidates: Sequence[int]) -> list[int]:
    """Candidates passing the group and free-memory checks mask by mask, with the reference loop's side effects.

    A group's `cells` are sorted in place when first compared; `reusable` is called per
    resource until one does not fit. Cost: O(2^n * (g + r)) for g nodes holding memory.
    """
    group_of = _group_lookup(inputs)
    fits_free = _free_memory_check(inputs)
    in_group, assigned, single_cell = inputs.in_group, inputs.assigned, inputs.single_cell
    passing = []
    for m in candidates:
        if m & (m - 1) == 0:
            if m & in_group:
                continue
        elif m & assigned and _violates_groups(m, assigned, single_cell, group_of):
            continue
        if fits_free(m):
            passing.append(m)
    return passing


def _violates_groups(m: int, assigned: int, single_cell: int, group_of: Callable[[int], int]) -> bool:
    """Whether a node of this multi-node mask holds memory alone or in another group (lowest node first)."""
    rest = m & assigned
    while rest:
        low = rest & -rest
        if low & single_cell or group_of(low.bit_length() - 1) != m:
            return True
        rest ^= low
    return False


def _group_lookup(inputs: HintInputs) -> Callable[[int], int]:
    """position -> position mask of its group, cached; sorts `cells` in place at first use, like kubelet.

    -1 (equal to no mask) for no cells, an unknown node or a duplicate.
    """
    position = {node_id: p for p, node_id in enumerate(inputs.numa_nodes)}
    groups: dict[int, int] = {}

    def group_of(p: int) -> int:
        """The group of the node at position p."""
        if p not in groups:
            cells = inputs.nodes[p].cells
            if cells is not None:
                cells.sort()
            group = 0
            for node_id in cells or []:
                if node_id not in position or group >> position[node_id] & 1:
                    group = -1
                    break
                group |= 1 << position[node_id]
            groups[p] = group if cells else -1
        return groups[p]

    return group_of


def _free_memory_check(inputs: HintInputs) -> Callable[[int], bool]:
    """mask -> whether free plus re-usable memory on it covers every resource (look-ups stop at a misfit)."""
    free_sums = [_subset_sums(values) for values in inputs.free]
    checks = list(zip(free_sums, inputs.resources, inputs.sizes))
    reusable = inputs.reusable
    if reusable is no_reuse:
        return lambda m: not any(sums[m] < size for sums, _, size in checks)
    identity = inputs.numa_nodes == list(range(len(inputs.numa_nodes)))
    real = None if identity else _subset_sums([1 << node_id for node_id in inputs.numa_nodes])

    def fits(m: int) -> bool:
        """Free plus re-usable memory of position mask m covers the request."""
        mask = m if real is None else real[m]
        return not any(sums[m] + reusable(mask, resource) < size for sums, resource, size in checks)

    return fits


def _hints_of_masks(inputs: HintInputs, passing: list[int], min_affinity_size: int) -> Hints:
    """The hints of the passing masks, preferred when of minimum size (they lead: masks come smallest first)."""
    preferred = next((i for i, m in enumerate(passing) if m.bit_count() != min_affinity_size), len(passing))
    numa_nodes = inputs.numa_nodes
    n = len(numa_nodes)
    if n <= MAX_MEMOISED_NODES:
        not_preferred_hints, preferred_hints = hint_objects(tuple(numa_nodes))
        hint_list = list(map(preferred_hints.__getitem__, passing[:preferred]))
        hint_list += map(not_preferred_hints.__getitem__, passing[preferred:])
    else:
        if numa_nodes != list(range(n)):
            real = _subset_sums([1 << node_id for node_id in numa_nodes])
            passing = [real[m] for m in passing]
        hint_list = [TopologyHint(m, i < preferred) for i, m in enumerate(passing)]
    return {resource: list(hint_list) for resource in inputs.resources}


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


def _covers(values_per_resource: list[list[int]], sizes: list[int]) -> MaskFilter:
    """ok[mask]: for every resource, the mask's summed values reach the requested size.

    ALL_MASKS when every node alone qualifies and no value is negative (such a sum is at
    least each of its terms). Cost: O(n * r) then, else O(2^n * r).
    """
    if all(min(values) >= max(size, 0) for values, size in zip(values_per_resource, sizes)):
        return ALL_MASKS
    ok: list[bool] = []
    for values, size in zip(values_per_resource, sizes):
        sums = _subset_sums(values)
        ok = [s >= size for s in sums] if not ok else [o and s >= size for o, s in zip(ok, sums)]
    return ok


def _both(ok1: MaskFilter, ok2: MaskFilter) -> MaskFilter:
    """Mask by mask, both conditions. Cost: O(2^n), O(1) when one is ALL_MASKS."""
    if ok1 is ALL_MASKS:
        return ok2
    if ok2 is ALL_MASKS:
        return ok1
    return [a and b for a, b in zip(ok1, ok2)]


def _first_passing(order: Sequence[int], fits: MaskFilter) -> int:
    """The first mask of `order` passing the filter, 0 when none does."""
    if fits is ALL_MASKS:
        return order[0]
    return next((m for m in order if fits[m]), 0)


def _masks_passing(order: Sequence[int], fits: MaskFilter) -> Sequence[int]:
    """The masks of `order` passing the filter, in order."""
    if fits is ALL_MASKS:
        return order
    return [m for m in order if fits[m]]


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
    memory_hints = hints.get(MEMORY, [])
    if isinstance(memory_hints, HintFamily):
        try:
            return memory_hints.best_hint() or TopologyHint()
        except BoundedWorkError:
            memory_hints = memory_hints.kubelet_list()  # raises again where today's code does not finish
    return find_best_hint(memory_hints)


def extension_hint(hints: Hints, current: list[int]) -> Optional[TopologyHint]:
    """find_best_hint over the `memory` hints whose nodes include all of `current` (None if none)."""
    memory_hints = hints.get(MEMORY, [])
    if isinstance(memory_hints, HintFamily):
        try:
            return memory_hints.best_hint(containing=bitmask.new_bitmask(*current))
        except BoundedWorkError:
            memory_hints = memory_hints.kubelet_list()  # raises again where today's code does not finish
    candidates = [h for h in memory_hints if is_hint_in_group(current, bitmask.get_bits(h.numa_node_affinity))]
    if not candidates:
        return None
    return find_best_hint(candidates)


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
