"""Merging the hint providers' hints into one TopologyHint (kubelet's policy.go HintMerger).

Building blocks, each a transcription of kubelet's rule:

* `filter_providers_hints`: provider maps -> one hint list per resource;
* `merge_permutation`: one hint per list -> a merged hint;
* `max_of_min_affinity_counts`: the `BestNonPreferredAffinityCount`;
* `HintMerger.compare`: which of the current best and a candidate wins.

`merge_hints` is the production entry point every policy calls (through its
`merge_fn`, so it can be swapped). It returns exactly what kubelet's odometer over
the cross product returns (`reference_merge.reference_merge_hints` is that literal
loop, kept as the test oracle), but avoids enumerating the product where the answer
is provably the same:

1. The first preferred candidate replaces any non-preferred best and from then on
   non-preferred candidates are ignored, while preferred candidates are folded with
   the "fitter" comparison, which always keeps the smaller mask in one total order
   (fewer nodes, then lower average distance with prefer-closest, then lower value).
   So if any preferred candidate exists the answer is the fitter-minimum over the
   preferred candidates, and only they need to be found. A preferred candidate needs
   every hint preferred and every non-nil affinity equal, so they are found by a
   small search over the distinct preferred choices of each list.
2. Otherwise every candidate is non-preferred and the order-sensitive
   non-preferred rules apply: the cross product is walked depth first in kubelet's
   order (last list fastest) with a running AND, skipping subtrees whose candidates
   cannot change the best one: an empty running mask; too few nodes left to matter
   given the current best and BestNonPreferredAffinityCount; or, once the best has
   exactly that many nodes and fitter is "narrowest", no numerically smaller mask of
   that size left below.

Resource order inside one provider's map: Go iterates maps in random order; we use
the dict's insertion order. Merge results of every upstream test case do not depend
on it, but the non-preferred rules can in principle.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from .errors import HintProviderError
from .hint import TopologyHint
from .hint_provider import ProviderHints
from .numa_info import NUMAInfo
from .policy import POLICY_SINGLE_NUMA_NODE

MergeFn = Callable[[NUMAInfo, Sequence[Sequence[TopologyHint]], str, bool], TopologyHint]
"""Signature shared by `merge_hints` and `reference_merge.reference_merge_hints`:
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


def _fitter_fn(numa_info: NUMAInfo, use_distance: bool) -> Callable[[int, int], int]:
    """Mask-level fitter(current, candidate) -> winning mask, with averages cached per merge."""
    if not use_distance:
        def narrowest(current: int, candidate: int) -> int:
            """The narrower mask (fewer nodes, then lower value); current on a tie."""
            if candidate == current:
                return current
            cc, kc = current.bit_count(), candidate.bit_count()
            if cc != kc:
                return current if cc < kc else candidate
            return current if current < candidate else candidate
        return narrowest

    averages: dict[int, float] = {}

    def average(mask: int) -> float:
        """The mask's average distance, computed once per merge."""
        value = averages.get(mask)
        if value is None:
            value = averages[mask] = numa_info.calculate_average_for(mask)
        return value

    def closest(current: int, candidate: int) -> int:
        """kubelet's Closest as a fitter: narrower, then closer, then lower value."""
        if candidate == current:
            return current
        cc, kc = current.bit_count(), candidate.bit_count()
        if cc != kc:
            return current if cc < kc else candidate
        d1, d2 = average(current), average(candidate)
        if d1 == d2:
            return current if current < candidate else candidate
        return current if d1 < d2 else candidate
    return closest


def _best_preferred_mask(
    default: int, lists: Sequence[Sequence[TopologyHint]], fitter: Callable[[int, int], int]
) -> Optional[int]:
    """The fitter-minimum over the merged masks of all preferred, non-empty candidates, or None.

    A preferred permutation picks a preferred hint from every list, with all non-nil
    affinities equal to one value A (or all nil). Its merged mask is default & A (or
    default). So the candidates are: for every A offered preferred by some list and
    accepted (A or a preferred nil) by every list, default & A; plus default when every
    list has a preferred nil hint.
    """
    has_nil: list[bool] = []
    affinities: list[set[int]] = []
    order: list[int] = []  # distinct preferred affinities, first-seen order
    seen: set[int] = set()
    for hints in lists:
        nil = False
        affs: set[int] = set()
        for hint in hints:
            if not hint.preferred:
                continue
            a = hint.numa_node_affinity
            if a is None:
                nil = True
            else:
                affs.add(a)
                if a not in seen:
                    seen.add(a)
                    order.append(a)
        has_nil.append(nil)
        affinities.append(affs)

    best: Optional[int] = None

    def consider(mask: int) -> None:
        """Fold one preferred candidate into best (empty masks never count)."""
        nonlocal best
        if mask == 0:
            return
        best = mask if best is None else fitter(best, mask)

    if all(has_nil):
        consider(default)
    for a in order:
        if all(nil or a in affs for nil, affs in zip(has_nil, affinities)):
            consider(default & a)
    return best


def _lowest_bits(mask: int, k: int) -> int:
    """The mask made of the k lowest set bits of `mask` (all of them if it has fewer)."""
    result = 0
    for _ in range(k):
        if not mask:
            break
        low = mask & -mask
        result |= low
        mask ^= low
    return result


def _best_non_preferred_mask(
    default: int,
    lists: Sequence[Sequence[TopologyHint]],
    b: int,
    fitter: Callable[[int, int], int],
    by_value: bool,
) -> Optional[int]:
    """kubelet's compare folded over every non-empty merged mask, in odometer order, for the
    case where no candidate is preferred (so only the non-preferred rules apply).

    `by_value`: fitter is "narrowest" (no distances), so among masks of equal size the
    numerically smallest wins."""
    masks: list[list[Optional[int]]] = [[h.numa_node_affinity for h in hints] for hints in lists]
    depth = len(masks)
    best: Optional[int] = None
    best_count = 0

    def consider(mask: int) -> None:
        """kubelet's compare for two non-preferred hints (or the first candidate)."""
        nonlocal best, best_count
        if best is None:
            best, best_count = mask, mask.bit_count()
            return
        c, k = best_count, mask.bit_count()
        if c > b or (c == b and k == b) or (c < b and k < b and k == c):
            winner = fitter(best, mask)
        elif c < b and (k == b or (k < b and k > c)):
            winner = mask
        else:
            return
        if winner != best:
            best, best_count = winner, winner.bit_count()

    def skippable(kmax: int) -> bool:
        """Whether no candidate with at most kmax nodes can replace best."""
        # Every candidate below has at most kmax nodes; none of them can replace best when
        # best sits at B and kmax < B, or best is below B and kmax < count(best).
        if best is None:
            return False
        return (best_count == b and kmax < b) or (best_count < b and kmax < best_count)

    def cannot_beat_at_b(running: int) -> bool:
        """Whether no candidate below `running` can replace a best of exactly B nodes."""
        # best has exactly B nodes, so only B-node candidates matter and (narrowest) only a
        # numerically smaller one wins; the smallest B-node mask below is running's B lowest bits.
        return by_value and best is not None and best_count == b and _lowest_bits(running, b) >= best

    def walk(level: int, running: int) -> None:
        """Depth-first odometer over lists level.. with the AND of the choices so far."""
        last = level == depth - 1
        for affinity in masks[level]:
            merged = running if affinity is None else running & affinity
            if merged == 0:
                continue
            if last:
                consider(merged)
            elif not skippable(merged.bit_count()) and not cannot_beat_at_b(merged):
                walk(level + 1, merged)

    if depth == 0:
        if default:
            consider(default)
    elif default:
        walk(0, default)
    return best


def merge_hints(
    numa_info: NUMAInfo, hint_lists: Sequence[Sequence[TopologyHint]], policy_name: str, prefer_closest: bool
) -> TopologyHint:
    """The best merged hint over the cross product of `hint_lists`, exactly as kubelet's
    HintMerger.Merge; `{all nodes, not preferred}` when no candidate has any node."""
    default = numa_info.default_affinity_mask()
    if any(len(hints) == 0 for hints in hint_lists):
        return TopologyHint(default, False)  # no permutation at all
    # BestNonPreferredAffinityCount (a pass over every hint) only matters without a preferred candidate.
    use_distance = HintMerger(numa_info, policy_name, prefer_closest, 0).uses_distance()
    fitter = _fitter_fn(numa_info, use_distance)
    preferred = _best_preferred_mask(default, hint_lists, fitter)
    if preferred is not None:
        return TopologyHint(preferred, True)
    merger = new_hint_merger(numa_info, hint_lists, policy_name, prefer_closest)
    non_preferred = _best_non_preferred_mask(
        default, hint_lists, merger.best_non_preferred_affinity_count, fitter, not merger.uses_distance()
    )
    if non_preferred is not None:
        return TopologyHint(non_preferred, False)
    return TopologyHint(default, False)
