"""The order kubelet's merge fold ends in, as keys: the preferred candidates, "fitter" (kubelet's
compareNumaAffinityMasks) and the non-preferred ranking around BestNonPreferredAffinityCount.

Shared by the counting merge (`fast_merge.py`), the family merge (`family_merge.py`) and the
explanation of a merge; why these keys give kubelet's answer is told in fast_merge.py.
"""
from __future__ import annotations

from typing import Sequence

from topologymanager.hint import TopologyHint
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import POLICY_SINGLE_NUMA_NODE


def preferred_candidates(default: int, hint_lists: Sequence[Sequence[TopologyHint]]) -> set[int]:
    """The non-empty merged masks of every preferred combination.

    A combination is preferred when all its hints are preferred and all its non-nil
    affinities equal one mask M; its merged mask is then `default & M` (or `default`
    when every hint chosen is nil).
    """
    offered: list[set[int]] = []  # per list: raw masks of its preferred non-nil hints
    any_node: list[bool] = []  # per list: has a preferred nil ("any node") hint
    for hints in hint_lists:  # one pass per list (lists run to 2^n - 1 hints)
        masks: set[int] = set()
        nil = False
        for h in hints:
            if h.preferred:
                if h.numa_node_affinity is None:
                    nil = True
                else:
                    masks.add(h.numa_node_affinity)
        offered.append(masks)
        any_node.append(nil)

    result: set[int] = set()
    if all(any_node) and default:
        result.add(default)
    for mask in set().union(*offered) if offered else ():
        if all(mask in masks or nil for masks, nil in zip(offered, any_node)):
            merged = default & mask
            if merged:
                result.add(merged)
    return result


def best_non_preferred(produced: set[int], best_count: int, fitter_key) -> int:
    """What kubelet's non-preferred `compare` fold ends on, from the set of produced masks.

    `best_count` is BestNonPreferredAffinityCount (B): exactly B nodes if possible,
    else the most nodes below B, else the fewest above B; ties to the fitter mask.
    """
    return min(produced, key=lambda mask: (non_preferred_rank(mask, best_count), fitter_key(mask)))


def fitter_key_for(numa_info: NUMAInfo, policy_name: str, prefer_closest: bool):
    """The key by which a merged mask is fitter than another (smaller is fitter): fewer nodes,
    then lower average distance (prefer-closest, not single-numa-node), then lower value.
    kubelet's compareNumaAffinityMasks, as a sort key."""
    uses_distance = prefer_closest and policy_name != POLICY_SINGLE_NUMA_NODE

    def fitter_key(mask: int) -> tuple[int, float, int]:
        """(node count, average distance or 0, mask value)."""
        distance = numa_info.calculate_average_for(mask) if uses_distance else 0.0
        return (mask.bit_count(), distance, mask)

    return fitter_key


def non_preferred_rank(mask: int, best_count: int) -> tuple[int, int]:
    """Where a non-preferred merged mask stands before fitness is compared (smaller wins):
    (0, 0) exactly `best_count` nodes; (1, -count) fewer (the most nodes first); (2, 0) more."""
    count = mask.bit_count()
    if count == best_count:
        return (0, 0)
    if count < best_count:
        return (1, -count)
    return (2, 0)
