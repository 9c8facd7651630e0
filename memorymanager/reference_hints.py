"""The reference calculateHints: kubelet's loop over every NUMA mask, transcribed as it is.

`reference_calculate_hints` is kept as the literal kubelet algorithm (policy_static.go
calculateHints: one pass per mask, summing the nodes' tables) and is used as the oracle
of the production `hints.calculate_hints` in differential tests
(tests/memory/test_hints_fast.py). The production function also hands it the inputs
its fast path does not take (no request, no NUMA node, NUMA ids outside the bitmask
range), so that those come out exactly as kubelet computes them.

`check_mask` is the loop's body for one mask, returning the numbers it judged on;
`memorymanager.explain` shows those to the reader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from state.types import NUMANodeMap
from topologymanager import bitmask
from topologymanager.hint import TopologyHint

from memorymanager.machine_state import are_groups_equal, memory_table, node_state
from memorymanager.reusable_memory import ReusableLookup, no_reuse


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


def reference_calculate_hints(
    machine_state: NUMANodeMap, requested: dict[str, int], reusable: ReusableLookup = no_reuse
) -> dict[str, list[TopologyHint]]:
    """Every NUMA mask that can hold the request, for every requested resource (kubelet's loop).

    Cost: O(2^n * n * r) for n NUMA nodes and r requested resources.

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
    hints: dict[str, list[TopologyHint]] = {}
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
