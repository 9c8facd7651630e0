"""The hint merge for large machines: kubelet's answer when some lists are hint families.

`fast_merge` counts, for every mask of the machine, the combinations that produce it:
2^n counters, fine up to about 20 NUMA nodes, a MemoryError at 34. This module answers
the same question by walking kubelet's comparison order and asking, mask by mask in
that order, "does some combination produce this?", where the lists may be explicit
(a CPU or device provider's few hints) or families (`hint_family.HintFamily`, the
memory manager's 2^n hints described by rules). Why walking the order is enough is
`fast_merge`'s observation 2: the fold's result depends only on the set of produced
masks (differential tests: tests/topology/test_family_merge_differential.py).

1. Preferred. A preferred combination picks the same mask M, preferred, from every list
   (or a preferred nil). If some explicit list has no preferred nil, the candidates are
   its preferred masks, checked against the other lists and the family's membership
   (`is_preferred`). Otherwise every preferred member of the family is a candidate; all
   have the family's preferred width p, so the fittest is the lowest member with p nodes
   (with prefer-closest: the closest, found by listing that width within the work budget).

2. Non-preferred. Let B be BestNonPreferredAffinityCount (the family's narrowest member
   counts as its narrowest hint). The widths are tried in kubelet's order: B, then B-1
   down to 1, then B+1 up; the first width with a produced mask gives the answer (its
   lowest, or closest, mask). The explicit lists are folded first into the set S of their
   ANDs (with the machine's mask). A mask t comes out of s in S and j copies of family F
   (memory and hugepages lists share one family) when t = s & f1 & ... & fj: either all f
   are explicit members of F (X: a small set, ANDed out directly), or some k of them are
   and the other r = j - k are drawn from F's monotone part on U. Then t lies in U and the
   nodes of s & x & U outside t must be left out by those r members: r bins, each holding
   weights up to F's capacity. For r = 1 that is one threshold, monotone in t; for r >= 2
   it is a small packing search. Either way the candidates t of one width are searched in
   numeric order with `hint_family.monotone_members`, pruned by the weights.

Worked example: 3 nodes, one explicit list [{0} preferred, {0,1,2} not], one family with
members {1} (preferred), {0,1} and {0,2} (U = {0,1,2}, any two nodes; X = {1}); the machine
mask is 0b111.

* Preferred: the explicit list's only preferred mask {0} is not a member of the family
  with width 1: no preferred candidate.
* B = max(1, 1) = 1. S = {0b001, 0b111}. Width 1: from s = {0}: {0} & {0,1} = {0}: produced.
  -> {0}, not preferred (kubelet's cross product gives the same).

>>> from topologymanager.hint_family import StructuredFamily
>>> from topologymanager.numa_info import NUMAInfo
>>> fam = StructuredFamily(0b111, [0b010], 0b111, {0: (1,), 1: (1,), 2: (1,)}, (1,), 1)
>>> explicit = [TopologyHint(0b001, True), TopologyHint(0b111, False)]
>>> family_merge_hints(NUMAInfo([0, 1, 2], {}), [explicit, fam], "best-effort", False)
TopologyHint([0], preferred=False)

Boundary (BoundedWorkError, never a guess): two different families in one merge; a
family on nodes outside the machine's mask; more than the work budget of search steps
(explicit ANDs, packing, prefer-closest listings). tests and the scenarios under
fixtures/scenarios/large-numa stay far inside it.
"""
from __future__ import annotations

from typing import Optional, Sequence

from topologymanager.errors import BoundedWorkError
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily, WorkBudget, bits_of, monotone_members
from topologymanager.merge import max_of_min_affinity_counts
from topologymanager.merge_order import best_non_preferred, fitter_key_for, preferred_candidates
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import POLICY_SINGLE_NUMA_NODE

# Most explicit ANDs (or family-explicit ANDs) kept while folding.
MAX_PRODUCED = 20_000


def family_merge_hints(
    numa_info: NUMAInfo,
    hint_lists: Sequence[Sequence[TopologyHint]],
    policy_name: str,
    prefer_closest: bool,
    budget: Optional[WorkBudget] = None,
) -> TopologyHint:
    """kubelet's HintMerger.Merge result for filtered hint lists, some of which may be families.

    Same signature and result as `reference_merge.reference_merge_hints` (plus a budget).
    """
    budget = budget or WorkBudget(what="the topology manager's hint merge", nodes=len(numa_info.nodes))
    default = numa_info.default_affinity_mask()
    families = [h for h in hint_lists if isinstance(h, HintFamily)]
    explicit = [h for h in hint_lists if not isinstance(h, HintFamily)]
    if any(len(hints) == 0 for hints in explicit):
        return TopologyHint(default, False)
    uses_distance = prefer_closest and policy_name != POLICY_SINGLE_NUMA_NODE
    fitter_key = fitter_key_for(numa_info, policy_name, prefer_closest)
    if not families:
        return _explicit_merge(default, explicit, fitter_key, budget)
    family = _one_family(families, default)
    j = len(families)

    best = _best_preferred(default, explicit, family, uses_distance, fitter_key, budget)
    if best is not None:
        return TopologyHint(best, True)

    best_count = max(max_of_min_affinity_counts(explicit), family.min_width(budget=budget) or 0)
    produced = _explicit_ands(default, explicit, budget)
    if not produced:
        return TopologyHint(default, False)
    n = default.bit_count()
    widths = [best_count] + list(range(best_count - 1, 0, -1)) + list(range(best_count + 1, n + 1))
    search = _FamilySearch(family, j, produced, budget)
    for w in widths:
        if w < 1:
            continue
        found = search.of_width(w, all_of_them=uses_distance)
        if found:
            return TopologyHint(min(found, key=fitter_key), False)
    return TopologyHint(default, False)


def _explicit_merge(default: int, lists, fitter_key, budget: WorkBudget) -> TopologyHint:
    """fast_merge's answer for explicit lists only, by folding their ANDs (no 2^n table)."""
    preferred = preferred_candidates(default, lists)
    if preferred:
        return TopologyHint(min(preferred, key=fitter_key), True)
    produced = _explicit_ands(default, lists, budget)
    if not produced:
        return TopologyHint(default, False)
    return TopologyHint(best_non_preferred(produced, max_of_min_affinity_counts(lists), fitter_key), False)


def _explicit_ands(default: int, lists, budget: WorkBudget) -> set[int]:
    """Every non-empty `default & AND(one affinity per explicit list)` (nil = everything)."""
    produced = {default} if default else set()
    for hints in lists:
        masks = {default if h.numa_node_affinity is None else h.numa_node_affinity for h in hints}
        budget.step(len(produced) * len(masks))
        produced = {s & m for s in produced for m in masks} - {0}
        if len(produced) > MAX_PRODUCED:
            raise BoundedWorkError(
                f"the explicit hint lists combine into more than {MAX_PRODUCED} distinct masks; "
                "refusing instead of enumerating"
            )
    return produced


def _one_family(families: list[HintFamily], default: int) -> HintFamily:
    """The one family all family lists share (memory and hugepages lists are one family)."""
    first = families[0]
    for other in families[1:]:
        if other is not first and (other.explicit, other.universe, other.weights, other.capacity,
                                   other.preferred_width, other.nodes) != (
                first.explicit, first.universe, first.weights, first.capacity, first.preferred_width, first.nodes):
            raise BoundedWorkError(
                "kubelet would enumerate every combination of two different hint families here; "
                "the family merge handles one family per merge"
            )
    if first.nodes & ~default:
        raise BoundedWorkError("a hint family covers NUMA nodes outside the machine's mask; the family merge cannot answer")
    return first


def _best_preferred(default, explicit, family: HintFamily, uses_distance: bool, fitter_key,
                    budget: WorkBudget) -> Optional[int]:
    """The fittest preferred merged mask, None when no combination is preferred."""
    p = family.preferred_width
    if p is None:
        return None
    any_node = [any(h.preferred and h.numa_node_affinity is None for h in hints) for hints in explicit]
    if all(any_node):
        if not uses_distance:
            return family.lowest_member(p, budget=budget)
        members = list(family.members_of_width(p, budget=budget))
        return min(members, key=fitter_key) if members else None
    offered = [{h.numa_node_affinity for h in hints if h.preferred and h.numa_node_affinity is not None}
               for hints in explicit]
    pivot = next(i for i, nil in enumerate(any_node) if not nil)
    candidates = set()
    for mask in offered[pivot]:
        if all(mask in masks or nil for masks, nil in zip(offered, any_node)) and family.is_preferred(mask):
            if default & mask:
                candidates.add(default & mask)
    return min(candidates, key=fitter_key) if candidates else None


class _FamilySearch:
    """The produced masks of one width: t = s & f1 & ... & fj, s an explicit AND, f in the family."""

    def __init__(self, family: HintFamily, copies: int, produced: set[int], budget: WorkBudget):
        self.family = family
        self.copies = copies
        self.produced = produced
        self.budget = budget
        xs = [m for m in family.explicit]
        # ands[k]: the ANDs of k explicit members (k = 0: no member, i.e. everything).
        ands: list[set[int]] = [{-1}]
        for _ in range(copies):
            nxt = {a & x for a in ands[-1] for x in xs} - {0}
            budget.step(len(ands[-1]) * max(len(xs), 1))
            if len(nxt) > MAX_PRODUCED:
                raise BoundedWorkError("the family's explicit members combine into too many masks; refusing")
            ands.append(nxt)
        self.direct = {s & a for s in produced for a in ands[copies]} - {0}
        budget.step(len(produced) * len(ands[copies]))
        # (base, r): masks t inside base & U whose rest of base & U fits in r bins.
        bases: dict[tuple[int, int], None] = {}
        if family.capacity is not None and family.up_ok(family.universe):
            for k in range(copies):
                for a in ands[k]:
                    for s in produced:
                        base = s & a & family.universe
                        if base:
                            bases[(base, copies - k)] = None
                budget.step(len(produced) * len(ands[k]))
        self.bases = list(bases)

    def of_width(self, w: int, all_of_them: bool) -> list[int]:
        """The produced masks with w nodes: the lowest one (or all of them, for prefer-closest)."""
        found = [m for m in self.direct if m.bit_count() == w]
        best = min(found) if found and not all_of_them else None
        for base, r in self.bases:
            if base.bit_count() < w:
                continue
            pred = self._fits_in_bins(base, r)
            threshold = self._threshold(base, r)
            for t in monotone_members(base, w, 0, pred, self.budget, threshold=threshold):
                if all_of_them:
                    found.append(t)
                    continue
                if best is None or t < best:
                    best = t
                break  # numeric order: the first is this base's lowest
        if all_of_them:
            return sorted(set(found))
        return [] if best is None else [best]

    def _threshold(self, base: int, r: int):
        """t's weights must reach: the weights of base & U minus r capacities (a necessary condition)."""
        fam = self.family
        by_bit, _ = fam.up_threshold()
        dims = len(fam.capacity)
        base_total = [0] * dims
        for b in bits_of(base):
            for d, w in enumerate(by_bit[b]):
                base_total[d] += w
        # the bins hold base minus t, each at most the capacity
        need = tuple(bt - r * c for bt, c in zip(base_total, fam.capacity))
        return by_bit, need

    def _fits_in_bins(self, base: int, r: int):
        """pred(t): base & U minus t splits into r parts, each a removable set leaving >= 2 nodes of U."""
        fam = self.family
        size_u = fam.universe.bit_count()
        budget = self.budget

        if r == 1:  # the threshold is exactly "the rest fits one capacity": only the width is left
            return lambda t: (fam.universe & ~(base & ~t)).bit_count() >= 2

        def pred(t: int) -> bool:
            rest = base & ~t
            if t & ~fam.universe:
                return False
            if not rest:
                return fam.up_ok(fam.universe)
            items = sorted(bits_of(rest), key=lambda b: fam.weights[b.bit_length() - 1], reverse=True)
            return _pack(items, r, fam, size_u, budget)

        return pred


def _pack(items: list[int], r: int, fam: HintFamily, size_u: int, budget: WorkBudget) -> bool:
    """Whether the nodes `items` go into r bins, each within the capacity and leaving two nodes of U."""
    cap = fam.capacity
    loads = [[0] * len(cap) for _ in range(r)]
    counts = [0] * r
    limit = size_u - 2

    def place(i: int) -> bool:
        if i == len(items):
            return True
        budget.step()
        w = fam.weights[items[i].bit_length() - 1]
        tried = set()
        for b in range(r):
            key = (tuple(loads[b]), counts[b])
            if key in tried:
                continue  # a bin like one already tried: the same outcome
            tried.add(key)
            if counts[b] + 1 > limit:
                continue
            new = [l + x for l, x in zip(loads[b], w)]
            if any(v > c for v, c in zip(new, cap)):
                continue
            old = loads[b]
            loads[b], counts[b] = new, counts[b] + 1
            if place(i + 1):
                return True
            loads[b], counts[b] = old, counts[b] - 1
        return False

    return place(0)
