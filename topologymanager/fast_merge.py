"""The hint merge without the cross product: kubelet's answer in milliseconds.

kubelet merges hints by walking every combination of one hint per list (the cross
product) and folding the merged candidates with `compare`. With 8 NUMA nodes and
four lists of 255 hints that is 4.2 billion combinations. This module gives the
same answer by reasoning about *which masks can come out*, never about the
combinations themselves.

The story in three observations.

1. **A preferred candidate always wins over a non-preferred one**, in both
   directions of `compare`, and preferred candidates are folded with "fitter",
   which keeps the smaller mask in one total order: fewer nodes, then (with
   prefer-closest) the lower average distance, then the lower numeric value. So if
   any combination is preferred, the answer is the smallest preferred mask. A
   combination is preferred only if every hint in it is preferred and every non-nil
   affinity is the same mask M, so the preferred candidates are just the masks M
   that every list offers as a preferred hint (or where the list offers a preferred
   "any node" hint), ANDed with the machine's nodes. That takes one pass over the
   hints.

2. **Among non-preferred candidates the fold does not depend on their order.**
   Let B be `BestNonPreferredAffinityCount` (the widest of the lists' narrowest
   hints). Walking through `compare`'s non-preferred rules:

   * the first candidate with exactly B nodes is always taken, and afterwards only a
     fitter B-node candidate replaces it: if any B-node mask comes out, the answer is
     the fitter-smallest B-node mask;
   * otherwise, the first candidate with fewer than B nodes is always taken (it is
     narrower than anything above B); from then on the best only climbs to more
     nodes while staying below B, and ties go to the fitter: the answer is the
     fitter-smallest mask among those with the most nodes below B;
   * otherwise every candidate has more than B nodes and fitter keeps the smallest.

   So the answer depends only on the *set* of masks the combinations produce.
   The differential test against `reference_merge` checks this on thousands of
   random inputs.

3. **The set of produced masks can be counted without enumerating.** For a mask t
   of the machine's nodes, let f_i(t) be how many hints of list i contain t (a nil
   affinity contains everything). The number of combinations whose AND contains t
   is the product of the f_i(t); the number whose AND is *exactly* t follows by
   inclusion-exclusion over the supersets of t. Both steps are the classic
   "sum over supersets" transform and its inverse, each costing n * 2^n additions
   for n NUMA nodes: 8 * 256 = 2,048 per list on an 8-node machine, whatever the
   list lengths.

Cost: O(sum of list lengths * n) to read the hints, plus O(k * n * 2^n) for k
lists. 8 nodes: well under a millisecond per list. 16 nodes: about a million
additions per list (tens of milliseconds); kubelet's cross product is out of reach
there. Worked example (2 nodes, default mask 0b11):

    lists [{0}np, {1}np] and [{0,1}np]          B = max(1, 2) = 2
    combinations: {0}&{0,1} = {0}, {1}&{0,1} = {1}   -> produced masks {0}, {1}
    no 2-node mask comes out; the most nodes below 2 is 1; fitter-smallest is {0}
    -> TopologyHint({0}, preferred=False), as kubelet's loop returns.
"""
from __future__ import annotations

from operator import add, sub
from typing import Optional, Sequence

from topologymanager.errors import BoundedWorkError
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.merge import max_of_min_affinity_counts
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import POLICY_SINGLE_NUMA_NODE


# Above this many NUMA nodes, or when a list is a hint family, `family_merge` answers instead
# (the same answer: it walks kubelet's order instead of counting 2^n masks).
FAST_MERGE_MAX_NODES = 20
# ... but where the family merge refuses (BoundedWorkError), the counting merge below answers on
# machines up to this size (it finishes there: 2^24 counters per list).
COUNTING_FALLBACK_MAX_NODES = 24


def fast_merge_hints(
    numa_info: NUMAInfo,
    hint_lists: Sequence[Sequence[TopologyHint]],
    policy_name: str,
    prefer_closest: bool,
) -> TopologyHint:
    """kubelet's HintMerger.Merge result for filtered hint lists, without the cross product.

    Same signature and result as `reference_merge.reference_merge_hints`.
    """
    if len(numa_info.nodes) > FAST_MERGE_MAX_NODES or any(isinstance(h, HintFamily) for h in hint_lists):
        from topologymanager.family_merge import family_merge_hints  # 2^n counters would not fit

        try:
            return family_merge_hints(numa_info, hint_lists, policy_name, prefer_closest)
        except BoundedWorkError:
            if len(numa_info.nodes) > COUNTING_FALLBACK_MAX_NODES:
                raise
            # where the counting merge finishes, it answers instead (same answer, slower)
            hint_lists = [h.kubelet_list() if isinstance(h, HintFamily) else h for h in hint_lists]
    default = numa_info.default_affinity_mask()
    if any(len(hints) == 0 for hints in hint_lists):
        return TopologyHint(default, False)  # no combination at all

    fitter_key = fitter_key_for(numa_info, policy_name, prefer_closest)

    preferred = preferred_candidates(default, hint_lists)
    if preferred:
        return TopologyHint(min(preferred, key=fitter_key), True)

    produced = produced_masks(numa_info.nodes, default, hint_lists)
    if not produced:
        return TopologyHint(default, False)
    best = best_non_preferred(produced, max_of_min_affinity_counts(hint_lists), fitter_key)
    return TopologyHint(best, False)


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


def produced_masks(nodes: Sequence[int], default: int, hint_lists: Sequence[Sequence[TopologyHint]]) -> set[int]:
    """Every non-empty mask `default & AND(one affinity per list)` that some combination yields.

    Works on a compact universe (machine node k -> bit k) so that non-contiguous NUMA
    ids cost nothing, counts combinations per exact mask with the superset-sum
    transform, and maps the masks with a non-zero count back to NUMA ids.
    """
    compact = Compaction(nodes)
    size = 1 << len(compact.nodes)
    full = size - 1
    # combos[t] = number of combinations whose AND contains t (product over lists).
    combos = [1] * size
    for hints in hint_lists:
        contains = [0] * size
        for hint in hints:
            affinity = hint.numa_node_affinity
            contains[full if affinity is None else compact.to_compact(affinity & default)] += 1
        superset_sums(contains)
        combos = list(map(_mul, combos, contains))
    superset_differences(combos)  # now: combinations whose AND is exactly t
    return {compact.from_compact(t) for t in range(1, size) if combos[t]}


def _mul(a: int, b: int) -> int:
    return a * b


def superset_sums(values: list[int]) -> None:
    """In place: values[t] becomes the sum of values[u] over every u that contains t."""
    _fold_supersets(values, add)


def superset_differences(values: list[int]) -> None:
    """In place: the inverse of `superset_sums` (inclusion-exclusion over supersets)."""
    _fold_supersets(values, sub)


def _fold_supersets(values: list[int], combine) -> None:
    """For each bit, combine every entry without that bit with its partner that has it.

    n passes of 2^(n-1) operations; the pairs of one pass are contiguous runs, so each
    run is one slice assignment rather than a Python-level loop per element.
    """
    size = len(values)
    step = 1
    while step < size:
        for low in range(0, size, 2 * step):
            high = low + step
            values[low:high] = map(combine, values[low:high], values[high:high + step])
        step *= 2


class Compaction:
    """Maps NUMA masks onto bits 0..n-1 of the machine's nodes (in ascending id order) and back."""

    def __init__(self, nodes: Sequence[int]):
        self.nodes: list[int] = sorted(set(nodes))
        self.contiguous = self.nodes == list(range(len(self.nodes)))
        self._back: Optional[dict[int, int]] = None

    def to_compact(self, mask: int) -> int:
        """A NUMA mask (bits outside the machine already dropped) as a compact mask."""
        if self.contiguous:
            return mask
        result = 0
        for index, node in enumerate(self.nodes):
            if mask >> node & 1:
                result |= 1 << index
        return result

    def from_compact(self, compact: int) -> int:
        """A compact mask back as a NUMA mask."""
        if self.contiguous:
            return compact
        result = 0
        index = 0
        while compact:
            if compact & 1:
                result |= 1 << self.nodes[index]
            compact >>= 1
            index += 1
        return result
