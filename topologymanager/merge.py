"""Merging the hint providers' hints into one TopologyHint (kubelet's policy.go HintMerger).

Building blocks, each a transcription of kubelet's rule:

* `filter_providers_hints`: provider maps -> one hint list per resource;
* `merge_permutation`: one hint per list -> a merged hint;
* `max_of_min_affinity_counts`: the `BestNonPreferredAffinityCount`;
* `HintMerger.compare`: which of the current best and a candidate wins.

The merge itself has two implementations with one signature (`MergeFn`), chosen
by a policy's `merge_fn`: `fast_merge.fast_merge_hints` (production; kubelet's
answer without enumerating the cross product) and
`reference_merge.reference_merge_hints` (kubelet's literal cross product, the
oracle of the differential tests and `memorymanager run --merge reference`).

Resource order inside one provider's map: Go iterates maps in random order; we use
the dict's insertion order. Merge results of every upstream test case do not depend
on it, but the non-preferred rules can in principle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from topologymanager.errors import HintProviderError
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import POLICY_SINGLE_NUMA_NODE

MergeFn = Callable[[NUMAInfo, Sequence[Sequence[TopologyHint]], str, bool], TopologyHint]
"""Signature shared by `fast_merge.fast_merge_hints` and `reference_merge.reference_merge_hints`:
(numa_info, filtered hint lists, policy name, prefer_closest) -> best hint."""

NO_PREFERENCE = TopologyHint(None, True)
NO_POSSIBLE_AFFINITY = TopologyHint(None, False)


def filter_providers_hints(providers_hints: Sequence[ProviderHints]) -> list[list[TopologyHint]]:
    """One hint list per (provider, resource), in provider order then map order.

    A provider map that is None or empty -> [{nil, preferred}] (no preference at all);
    a resource whose list is None -> [{nil, preferred}]; an empty list ->
    [{nil, not preferred}] (no NUMA placement possible); else the list as given.
    """
    result: list[list[TopologyHint]] = []
    for index, hints in enumerate(providers_hints):
        if hints is not None and not isinstance(hints, Mapping):
            raise HintProviderError(f"hint provider {index} returned {type(hints).__name__}, expected a map resource -> hints")
        if not hints:
            result.append([NO_PREFERENCE])
            continue
        for resource, resource_hints in hints.items():
            if isinstance(resource_hints, HintFamily):
                result.append(resource_hints if resource_hints else [NO_POSSIBLE_AFFINITY])  # a family: kept whole
                continue
            if resource_hints is not None and not isinstance(resource_hints, (list, tuple)):
                raise HintProviderError(
                    f"hint provider {index}, resource {resource!r}: expected a list of TopologyHint, "
                    f"got {type(resource_hints).__name__}"
                )
            if resource_hints is None:
                result.append([NO_PREFERENCE])
            elif len(resource_hints) == 0:
                result.append([NO_POSSIBLE_AFFINITY])
            else:
                if set(map(type, resource_hints)) != {TopologyHint}:  # the common case checked at C speed
                    for hint in resource_hints:
                        if not isinstance(hint, TopologyHint):
                            raise HintProviderError(
                                f"hint provider {index}, resource {resource!r}: expected TopologyHint, got {hint!r}"
                            )
                result.append(list(resource_hints))
    return result


def merge_permutation(default_affinity: int, permutation: Sequence[TopologyHint]) -> TopologyHint:
    """AND of the default mask and every non-nil affinity; preferred only if every hint is
    preferred and every non-nil affinity equals the first non-nil one."""
    preferred = True
    merged = default_affinity
    first: Optional[int] = None
    for hint in permutation:
        affinity = hint.numa_node_affinity
        if affinity is not None:
            if first is None:
                first = affinity
            elif affinity != first:
                preferred = False
            merged &= affinity
        if not hint.preferred:
            preferred = False
    return TopologyHint(merged, preferred)


def max_of_min_affinity_counts(hint_lists: Sequence[Sequence[TopologyHint]]) -> int:
    """The largest, over all lists, of the bit count of the list's narrowest non-nil hint (0 if none).

    The narrowest hint has the fewest bits, so this is the largest per-list minimum bit count.
    Cost: O(total hints)."""
    result = 0
    for hints in hint_lists:
        if isinstance(hints, HintFamily):
            result = max(result, hints.min_width() or 0)
            continue
        fewest = min((h.numa_node_affinity.bit_count() for h in hints if h.numa_node_affinity is not None), default=0)
        result = max(result, fewest)
    return result


def _affinity_count(hint: TopologyHint) -> int:
    """Bit count of a hint's affinity (a nil affinity counts as 0; kubelet never compares nil ones)."""
    return 0 if hint.numa_node_affinity is None else hint.numa_node_affinity.bit_count()


@dataclass(frozen=True)
class HintMerger:
    """kubelet's HintMerger: the comparison rules, given the NUMA info, policy and options."""

    numa_info: NUMAInfo
    policy_name: str
    prefer_closest: bool
    best_non_preferred_affinity_count: int

    def uses_distance(self) -> bool:
        """Whether fitter compares by NUMA distance (prefer-closest, and not single-numa-node)."""
        return self.prefer_closest and self.policy_name != POLICY_SINGLE_NUMA_NODE

    def compare_numa_affinity_masks(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        """The fitter of the two: current for equal masks; else the closest (prefer-closest) or
        narrowest mask, returned as the hint that carries it."""
        if candidate.numa_node_affinity == current.numa_node_affinity:
            return current
        if self.uses_distance():
            best = self.numa_info.closest(current.numa_node_affinity, candidate.numa_node_affinity)
        else:
            best = self.numa_info.narrowest(current.numa_node_affinity, candidate.numa_node_affinity)
        return current if best == current.numa_node_affinity else candidate

    def compare(self, current: Optional[TopologyHint], candidate: TopologyHint) -> Optional[TopologyHint]:
        """Which hint is the better merge result: returns `current` or `candidate` itself."""
        if _affinity_count(candidate) == 0:
            return current
        if current is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self.compare_numa_affinity_masks(current, candidate)
        b = self.best_non_preferred_affinity_count
        c = _affinity_count(current)
        k = _affinity_count(candidate)
        if c > b:
            return self.compare_numa_affinity_masks(current, candidate)
        if c == b:
            if k != b:
                return current
            return self.compare_numa_affinity_masks(current, candidate)
        if k > b:
            return current
        if k == b:
            return candidate
        if k > c:
            return candidate
        if k < c:
            return current
        return self.compare_numa_affinity_masks(current, candidate)


def new_hint_merger(
    numa_info: NUMAInfo, hint_lists: Sequence[Sequence[TopologyHint]], policy_name: str, prefer_closest: bool
) -> HintMerger:
    """kubelet's NewHintMerger: the merger for these lists (computes BestNonPreferredAffinityCount)."""
    return HintMerger(numa_info, policy_name, prefer_closest, max_of_min_affinity_counts(hint_lists))
