"""B1: the hint merge on the kubelet #131738 shape, fast merge against the cross product.

8 NUMA nodes; every list holds all 255 masks, the single-node ones preferred (what a
provider returns for a small request on an idle node), and an adversarial variant where
no hint is preferred. With 4 lists kubelet walks
255^4 = 4.2e9 combinations; with 3 lists 16.6e6, where the reference still finishes
and the ratio reference/fast is measured in the same run.
"""
from __future__ import annotations

from benchmarks.timing import Row, median_seconds
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.hint import TopologyHint
from topologymanager.numa_info import NUMAInfo
from topologymanager.reference_merge import reference_merge_hints

POLICIES = ("best-effort", "restricted", "single-numa-node")


def all_masks_hints(nodes: int) -> list[TopologyHint]:
    """Every non-empty mask of `nodes` NUMA nodes; single-node masks preferred."""
    return [TopologyHint(mask, mask.bit_count() == 1) for mask in range(1, 1 << nodes)]


def filtered(policy: str, lists: list[list[TopologyHint]]) -> list[list[TopologyHint]]:
    """The lists the policy merges (single-numa-node keeps preferred single-node or nil hints)."""
    if policy != "single-numa-node":
        return lists
    return [[h for h in hints if h.preferred and (h.numa_node_affinity is None or h.numa_node_affinity.bit_count() == 1)]
            for hints in lists]


def run(repeats: int, with_reference: bool) -> list[Row]:
    """Median milliseconds per merge for each policy, 4 and 3 lists."""
    info = NUMAInfo(nodes=list(range(8)), distances={i: None for i in range(8)})
    hints = all_masks_hints(8)
    rows: list[Row] = []
    for policy in POLICIES:
        for count in (4, 3):
            lists = filtered(policy, [hints] * count)
            fast = median_seconds(lambda: fast_merge_hints(info, lists, policy, False), repeats)
            rows.append(Row("B1", f"merge {count} lists x 255, {policy}", "fast", fast * 1e3, "ms"))
            if count == 3 and with_reference:
                ref = median_seconds(lambda: reference_merge_hints(info, lists, policy, False), 1)
                rows.append(Row("B1", f"merge {count} lists x 255, {policy}", "reference", ref * 1e3, "ms",
                                note=f"reference/fast = {ref / fast:,.0f}x"))
    # Adversarial: no hint is preferred, so the order-sensitive non-preferred rules decide
    # and every produced mask must be known (kubelet: the whole 255^4 product).
    non_preferred = [TopologyHint(mask, False) for mask in range(1, 256)]
    seconds = median_seconds(lambda: fast_merge_hints(info, [non_preferred] * 4, "best-effort", False), repeats)
    rows.append(Row("B1", "merge 4 lists x 255, none preferred, best-effort", "fast", seconds * 1e3, "ms"))
    return rows
