"""Hint families: a hint provider's list described by rules instead of by 2^n entries.

On a machine with 34 or 64 NUMA nodes kubelet's providers list one hint per NUMA mask
that can hold the request: up to 2^64 hints. This module gives the topology manager a
way to take such a list without ever writing it down.

The story. The memory manager's hints (and many other providers' hints) have a simple
shape: a short list of "special" masks X (single nodes, existing multi-NUMA groups,
masks with re-usable memory) plus every mask of at least two nodes drawn from a
universe U whose summed capacity covers the request. The second part is *monotone*:
adding a node of U to a member keeps it a member. Monotone sets can be searched in
any order without listing them: to find the numerically lowest member with k nodes,
pick the highest node first, as low as possible, and prune a branch as soon as even
"this choice plus every lower node" is not a member (nothing below can then be one).

A family is therefore X, U, a weight vector per node of U and a capacity vector:
a mask m of U with at least two nodes is a member iff the weights of the nodes of U
*not* in m add up to at most the capacity (componentwise). That form also answers
the question the merge needs for two or more copies of one family (memory and
hugepages lists are one family): can bits K be removed by r members, each leaving out
a part of K? That is r bins of that capacity, a small packing search.

Worked example: 4 nodes of 4 GiB free each, a request of 6 GiB: U = {0,1,2,3}, the
weights are the free amounts, capacity = 16 - 6 = 10 GiB, X is empty (no single node
holds 6 GiB):

>>> GiB = 1 << 30
>>> fam = StructuredFamily(nodes=0b1111, explicit=(), universe=0b1111,
...                        weights={p: (4 * GiB,) for p in range(4)}, capacity=(10 * GiB,),
...                        preferred_width=2)
>>> fam.lowest_member(2) == 0b0011, fam.min_width(), fam.is_member(0b0101), fam.count()
(True, 2, True, 11)
>>> [bin(h.numa_node_affinity) for h in fam][:3]
['0b11', '0b101', '0b1001']

Every query is bounded by a `WorkBudget`; when an input would need more steps than the
budget allows the query raises `errors.BoundedWorkError` rather than guess or hang.
"""
from __future__ import annotations

import heapq
from math import comb
from typing import Callable, Iterator, Optional, Sequence

from topologymanager.errors import BoundedWorkError
from topologymanager.hint import TopologyHint

# Steps one top-level question (a merge, a default hint, a count) may take.
DEFAULT_WORK_BUDGET = 200_000


class WorkBudget:
    """Counts search steps; raises BoundedWorkError once `limit` is passed."""

    __slots__ = ("limit", "used", "what", "nodes")

    def __init__(self, limit: Optional[int] = None, what: str = "the hint search", nodes: int = 0):
        self.limit = DEFAULT_WORK_BUDGET if limit is None else limit
        self.used = 0
        self.what = what
        self.nodes = nodes

    def step(self, n: int = 1) -> None:
        """Spend n steps."""
        self.used += n
        if self.used > self.limit:
            masks = f"2^{self.nodes} NUMA masks" if self.nodes else "every NUMA mask"
            raise BoundedWorkError(
                f"kubelet would enumerate {masks} here; {self.what} needs more than {self.limit} "
                "search steps for the exact answer, so it refuses instead of guessing"
            )


def bits_of(mask: int) -> list[int]:
    """The single-bit masks of `mask`, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low)
        mask ^= low
    return out


def lex_key(mask: int) -> tuple[int, ...]:
    """Sort key of kubelet's iterate_bit_masks order within one width (ascending ids, lexicographic)."""
    return tuple(b.bit_length() for b in bits_of(mask))


Threshold = tuple[dict[int, tuple[int, ...]], tuple[int, ...]]
"""(weight vector by single-bit mask, needed sums): pred(m) implies that m's weights reach the
needs in every dimension; monotone_members uses it to prune."""


def monotone_members(
    universe: int, k: int, base: int, pred: Callable[[int], bool], budget: WorkBudget, lex: bool = False,
    threshold: Optional[Threshold] = None,
) -> Iterator[int]:
    """`base | c` for every k-subset c of `universe` with pred(base | c), pred monotone (supersets pass).

    Numeric order (default) or kubelet's lexicographic order (`lex`). A branch is cut as soon
    as its choice plus every node still available fails pred (then no completion passes), or,
    with a `threshold`, when the choice plus the heaviest nodes still available, as many as
    are left to choose, cannot reach a need in some dimension.
    """
    u = bits_of(universe & ~base)
    if k < 0 or k > len(u):
        return
    weights, need = threshold if threshold is not None else ({}, ())
    zero = (0,) * len(need)
    wts = [weights.get(b, zero) for b in u]
    base_sum = [0] * len(need)
    for b in bits_of(base):
        for d, w in enumerate(weights.get(b, zero)):
            base_sum[d] += w

    # top[d][i][k]: the sum of the k heaviest weights (dimension d) among u[0:i] (numeric order)
    # or among u[i:] (lexicographic order): the bound of a branch in O(1) per dimension.
    top: list[list[list[int]]] = []
    for d in range(len(need)):
        rows = []
        for i in range(len(u) + 1):
            part = wts[i:] if lex else wts[:i]
            acc = [0]
            for w in sorted((x[d] for x in part), reverse=True):
                acc.append(acc[-1] + w)
            rows.append(acc)
        top.append(rows)

    def hopeful(chosen_sum: list[int], left: int, lo: int, hi: int) -> bool:
        """Whether chosen + the `left` heaviest of u[lo:hi] (a prefix or a suffix of u) can reach every need."""
        edge = lo if lex else hi
        for d, n in enumerate(need):
            have = chosen_sum[d]
            if have >= n:
                continue
            if left == 0:
                return False
            acc = top[d][edge]
            if have + acc[min(left, len(acc) - 1)] < n:
                return False
        return True

    def add(total: list[int], i: int) -> list[int]:
        return [t + w for t, w in zip(total, wts[i])] if need else total

    if k == 0:
        budget.step()
        if hopeful(base_sum, 0, 0, 0) and pred(base):
            yield base
        return
    if lex:
        above = [0] * (len(u) + 1)
        for i in range(len(u) - 1, -1, -1):
            above[i] = above[i + 1] | u[i]

        def rec_lex(left: int, lo: int, chosen: int, total: list[int]) -> Iterator[int]:
            for i in range(lo, len(u) - left + 1):
                budget.step()
                cand, ctotal = chosen | u[i], add(total, i)
                if left == 1:
                    if hopeful(ctotal, 0, 0, 0) and pred(cand):
                        yield cand
                elif hopeful(ctotal, left - 1, i + 1, len(u)) and pred(cand | above[i + 1]):
                    yield from rec_lex(left - 1, i + 1, cand, ctotal)

        yield from rec_lex(k, 0, base, base_sum)
        return
    below = [0]
    for b in u:
        below.append(below[-1] | b)

    def rec(left: int, hi: int, chosen: int, total: list[int]) -> Iterator[int]:
        for i in range(left - 1, hi):
            budget.step()
            cand, ctotal = chosen | u[i], add(total, i)
            if left == 1:
                if hopeful(ctotal, 0, 0, 0) and pred(cand):
                    yield cand
            elif hopeful(ctotal, left - 1, 0, i) and pred(cand | below[i]):
                yield from rec(left - 1, i, cand, ctotal)

    yield from rec(k, len(u), base, base_sum)


def _two_or_more(mask: int) -> bool:
    return mask.bit_count() >= 2


class HintFamily:
    """A provider's hint list given by rules: its structure (see module doc), the same for every
    provider (each names its family: `MemoryHintFamily`, `CPUHintFamily`, `DeviceHintFamily`).

    It behaves as a read-only sequence of TopologyHint in kubelet's order (iteration is lazy;
    `len` counts without listing, or raises BoundedWorkError); `hint in family` is a
    membership test. Preferred members are exactly the members with `preferred_width` nodes.
    """

    nodes: int  # the machine's NUMA nodes the family lives on
    explicit: tuple[int, ...]  # X: members listed one by one (any width)
    universe: int  # U
    weights: dict[int, tuple[int, ...]]  # NUMA id of U -> weight vector
    capacity: Optional[tuple[int, ...]]  # None: no monotone part
    preferred_width: Optional[int]

    def __init__(self, nodes: int, explicit: Sequence[int], universe: int, weights: dict[int, tuple[int, ...]],
                 capacity: Optional[tuple[int, ...]], preferred_width: Optional[int]):
        """The family of these parts (explicit members deduplicated and sorted)."""
        self.nodes = nodes
        self.explicit = tuple(sorted(set(explicit)))
        self.universe = universe
        self.weights = weights
        self.capacity = capacity
        self.preferred_width = preferred_width

    # ----- membership -------------------------------------------------------------------------

    def up_ok(self, mask: int) -> bool:
        """Whether a mask of at least two nodes of U is a member of the monotone part."""
        if self.capacity is None or mask & ~self.universe or mask.bit_count() < 2:
            return False
        return self._removable(self.universe & ~mask)

    def up_threshold(self, bins: int = 1) -> Threshold:
        """What a mask t of U must weigh so that U minus t can be split over `bins` members'
        complements: totals - bins * capacity (for one bin: exactly the monotone part's rule)."""
        cached = self.__dict__.setdefault("_thresholds", {})
        if bins not in cached:
            by_bit = {1 << node: w for node, w in self.weights.items()}
            dims = len(self.capacity or ())
            totals = [sum(w[d] for w in self.weights.values()) for d in range(dims)]
            cached[bins] = (by_bit, tuple(t - bins * c for t, c in zip(totals, self.capacity or ())))
        return cached[bins]

    def _removable(self, removed: int) -> bool:
        """Whether the weights of `removed` (nodes of U) fit in the capacity."""
        cap = list(self.capacity)
        for b in bits_of(removed):
            for i, w in enumerate(self.weights[b.bit_length() - 1]):
                cap[i] -= w
        return min(cap, default=0) >= 0

    def is_member(self, mask: Optional[int]) -> bool:
        """Whether the family holds a hint with this mask."""
        if mask is None:
            return False
        return mask in self._explicit_set() or self.up_ok(mask)

    def is_preferred(self, mask: Optional[int]) -> bool:
        """Whether the family holds this mask as a preferred hint."""
        return mask is not None and mask.bit_count() == self.preferred_width and self.is_member(mask)

    def _explicit_set(self) -> frozenset[int]:
        cached = getattr(self, "_xset", None)
        if cached is None:
            cached = frozenset(self.explicit)
            object.__setattr__(self, "_xset", cached)
        return cached

    def __contains__(self, hint: object) -> bool:
        if not isinstance(hint, TopologyHint):
            return False
        return self.is_member(hint.numa_node_affinity) and hint.preferred == (
            hint.numa_node_affinity.bit_count() == self.preferred_width
        )

    # ----- queries ----------------------------------------------------------------------------

    def members_of_width(
        self, width: int, containing: int = 0, within: int = -1, budget: Optional[WorkBudget] = None,
        lex: bool = False,
    ) -> Iterator[int]:
        """Members with `width` nodes, containing `containing`, inside `within`: numeric order
        (or kubelet's lexicographic order with `lex`)."""
        budget = budget or WorkBudget(what="listing hint family members", nodes=self.nodes.bit_count())
        within &= self.nodes
        xs = sorted(
            (m for m in self.explicit if m.bit_count() == width and m & containing == containing and m & ~within == 0),
            key=lex_key if lex else None,
        )
        up: Iterator[int] = iter(())
        if self.capacity is not None and width >= 2 and containing & ~self.universe == 0:
            free = self.universe & within
            # the threshold is exactly up_ok's rule on masks of U, so pred only checks the width
            up = monotone_members(free, width - containing.bit_count(), containing, _two_or_more, budget, lex,
                                  self.up_threshold())
        seen = set(xs)
        merged = heapq.merge(xs, (m for m in up if m not in seen), key=lex_key if lex else None)
        return iter(merged)

    def lowest_member(self, width: int, containing: int = 0, budget: Optional[WorkBudget] = None) -> Optional[int]:
        """The numerically lowest member with `width` nodes containing `containing` (None if none)."""
        return next(self.members_of_width(width, containing, budget=budget), None)

    def min_width(self, containing: int = 0, budget: Optional[WorkBudget] = None) -> Optional[int]:
        """The fewest nodes of a member containing `containing` (None: no such member)."""
        budget = budget or WorkBudget(what="the narrowest hint family member", nodes=self.nodes.bit_count())
        best = min((m.bit_count() for m in self.explicit if m & containing == containing), default=None)
        if self.capacity is not None and containing & ~self.universe == 0 and self.up_ok(self.universe):
            start = max(2, containing.bit_count())
            stop = self.universe.bit_count() if best is None else min(best - 1, self.universe.bit_count())
            for w in range(start, stop + 1):
                if self.lowest_member(w, containing, budget) is not None:
                    return w
        return best

    def best_hint(self, containing: int = 0, budget: Optional[WorkBudget] = None) -> Optional[TopologyHint]:
        """find_best_hint over the members containing `containing`: the lowest preferred member,
        else the lowest of the narrowest members; None when no member contains it."""
        if self.preferred_width is not None:
            m = self.lowest_member(self.preferred_width, containing, budget)
            if m is not None:
                return TopologyHint(m, True)
        w = self.min_width(containing, budget)
        if w is None:
            return None
        return TopologyHint(self.lowest_member(w, containing, budget), w == self.preferred_width)

    def preferred_singles(self) -> list[TopologyHint]:
        """The preferred one-node hints (what single-numa-node keeps), in node order."""
        if self.preferred_width != 1:
            return []
        return [TopologyHint(m, True) for m in sorted(self.explicit) if m.bit_count() == 1]

    def count(self, budget: Optional[WorkBudget] = None) -> int:
        """How many hints the family holds, counted over classes of nodes with equal weights."""
        budget = budget or WorkBudget(what="counting hint family members", nodes=self.nodes.bit_count())
        up = 0
        if self.capacity is not None:
            classes: dict[tuple[int, ...], int] = {}
            for b in bits_of(self.universe):
                w = self.weights[b.bit_length() - 1]
                classes[w] = classes.get(w, 0) + 1
            items = list(classes.items())
            size = self.universe.bit_count()

            def rec(i: int, cap: tuple[int, ...], removed: int) -> int:
                budget.step()
                if min(cap, default=0) < 0:
                    return 0
                if i == len(items):
                    return 1 if size - removed >= 2 else 0
                w, n = items[i]
                total = 0
                for j in range(n + 1):
                    c = tuple(a - j * x for a, x in zip(cap, w))
                    if min(c, default=0) < 0:
                        break
                    total += comb(n, j) * rec(i + 1, c, removed + j)
                return total

            up = rec(0, self.capacity, 0)
        extra = sum(1 for m in self.explicit if not self.up_ok(m))
        return up + extra

    def __len__(self) -> int:
        """count(); Python's len() cannot return more than sys.maxsize (2^63 - 1): call count() on
        families that may be larger (64 nodes)."""
        return self.count()

    def __bool__(self) -> bool:
        return bool(self.explicit) or self.up_ok(self.universe)

    def __iter__(self) -> Iterator[TopologyHint]:
        """The hints in kubelet's order (by width, then lexicographic), lazily."""
        for w in range(1, self.nodes.bit_count() + 1):
            for m in self.members_of_width(w, lex=True, budget=WorkBudget(1 << 62)):
                yield TopologyHint(m, w == self.preferred_width)

    relist: Optional[Callable[[], list[TopologyHint]]] = None

    def kubelet_list(self) -> list[TopologyHint]:
        """The hints as the enumerating code lists them, where that code finishes (the provider
        sets `relist`); else BoundedWorkError. The fallback when a search runs out of budget."""
        if self.relist is None:
            raise BoundedWorkError(
                f"kubelet would enumerate 2^{self.nodes.bit_count()} NUMA masks here; the hint family's search "
                "ran out of budget and this machine is too large to list them"
            )
        return self.relist()

    def as_list(self, limit: int) -> Optional[list[TopologyHint]]:
        """The hints as a list when there are at most `limit` of them, else None."""
        try:
            n = self.count()
        except BoundedWorkError:
            return None
        return list(self) if n <= limit else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} on {self.nodes.bit_count()} NUMA nodes, preferred width {self.preferred_width}>"


class StructuredFamily(HintFamily):
    """A family given directly by its parts (tests, injected providers)."""
