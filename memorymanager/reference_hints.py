"""The reference calculateHints: kubelet's loop over every NUMA mask, transcribed as it is.

`reference_calculate_hints` is kept as the literal kubelet algorithm (policy_static.go
calculateHints: one pass per mask, summing the nodes' tables) and is used as the oracle
of the production `hints.calculate_hints` in differential tests
(tests/memory/test_hints_fast.py). The production function also hands it the inputs
its fast path does not take (no request, no NUMA node, NUMA ids outside the bitmask
range), so that those come out exactly as kubelet computes them.
"""
from __future__ import annotations

from state.types import NUMANodeMap
from topologymanager import bitmask
from topologymanager.hint import TopologyHint

from memorymanager.machine_state import are_groups_equal, memory_table, node_state
from memorymanager.reusable_memory import ReusableLookup, no_reuse


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
    min_affinity_size = len(numa_nodes)
    hints: dict[str, list[TopologyHint]] = {}
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
