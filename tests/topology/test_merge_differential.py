"""Differential test: the fast merge equals kubelet's cross product (the reference) on every input.

One generator of merge cases covers all shapes:

* machines of 1-8 NUMA nodes (and, in their own test, 9-16), ids contiguous or a sparse
  subset of 0..15, listed sorted or not (cadvisor order), random symmetric distances;
* 0-4 providers answering a nil map, an empty map, or 1-3 resources whose lists are nil,
  empty or 1-8 hints: masks partly outside the machine (the empty mask too), nil
  affinities, affinities from a small pool (so preferred hints can agree), and either
  preference, only non-preferred (adversarial) or only preferred, per case or per list;
* all four policies, prefer-closest on and off.

The merge function is compared on the lists a policy builds (filtered; for
single-numa-node also through its single-node filter, sometimes) and on the raw lists
(empty lists kept as they are); the policies' merge and admit are compared too.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.budget import examples

from topologymanager.fast_merge import fast_merge_hints
from topologymanager.hint import TopologyHint
from topologymanager.merge import filter_providers_hints
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy_best_effort import BestEffortPolicy
from topologymanager.policy_none import NonePolicy
from topologymanager.policy_options import PolicyOptions
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.policy_single_numa_node import SingleNumaNodePolicy, filter_single_numa_hints
from topologymanager.reference_merge import reference_merge_hints

POLICIES = ["none", "best-effort", "restricted", "single-numa-node"]
RESOURCES = ["cpu", "memory", "hugepages-2Mi", "example.com/gpu"]
DISTANCES = [11, 12, 13, 20, 21, 30, 32]
PERMUTATION_BUDGET = 20_000  # keeps the reference cross product fast
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@dataclass
class MergeCase:
    """One drawn input: the machine, the providers' answers, the policy and how lists are formed."""

    numa_info: NUMAInfo
    answers: list
    policy: str
    prefer_closest: bool
    raw: bool  # merge the resources' lists as given instead of as filter_providers_hints gives them
    single_numa_filtered: bool  # for single-numa-node: through the policy's single-node filter

    def lists(self) -> list[list[TopologyHint]]:
        """The hint lists handed to the merge function."""
        if self.raw:
            return raw_lists(self.answers)
        lists = filter_providers_hints(self.answers)
        if self.policy == "single-numa-node" and self.single_numa_filtered:
            lists = filter_single_numa_hints(lists)
        return lists

    def policy_object(self, merge_fn):
        """The topology manager policy of this case, merging with `merge_fn`."""
        if self.policy == "none":
            return NonePolicy()
        cls = {"best-effort": BestEffortPolicy, "restricted": RestrictedPolicy,
               "single-numa-node": SingleNumaNodePolicy}[self.policy]
        return cls(self.numa_info, PolicyOptions(prefer_closest_numa=self.prefer_closest), merge_fn)


def raw_lists(answers) -> list[list[TopologyHint]]:
    """Every resource's list as the provider gave it (nil lists left out, empty ones kept)."""
    return [list(hints) for answer in answers for hints in (answer or {}).values() if hints is not None]


@st.composite
def machines(draw, min_nodes: int, max_nodes: int) -> NUMAInfo:
    """A machine of min..max nodes, ids contiguous or sparse, in sorted or shuffled order."""
    n = draw(st.integers(min_nodes, max_nodes))
    if draw(st.booleans()):
        ids = list(range(n))
    else:
        ids = sorted(draw(st.sets(st.integers(0, 15), min_size=n, max_size=n)))
    if draw(st.booleans()):
        ids = list(draw(st.permutations(ids)))
    rows = {i: [10] * (max(ids) + 1) for i in ids}
    for a in ids:
        for b in ids:
            if a < b:
                rows[a][b] = rows[b][a] = draw(st.sampled_from(DISTANCES))
    return NUMAInfo(nodes=ids, distances=rows)


@st.composite
def provider_answers(draw, numa_info: NUMAInfo, max_providers: int, max_hints: int) -> list:
    """0..max_providers provider maps, trimmed until the cross product fits PERMUTATION_BUDGET."""
    ids = numa_info.nodes
    universe = list(ids) + [b for b in range(max(ids) + 1, max(ids) + 3) if b < 64]
    any_mask = st.integers(0, (1 << len(universe)) - 1).map(
        lambda v: sum(1 << b for i, b in enumerate(universe) if (v >> i) & 1))
    pool = draw(st.lists(any_mask, min_size=1, max_size=4))
    some_mask = any_mask if draw(st.booleans()) else st.sampled_from(pool)
    affinity = st.one_of(some_mask, some_mask, some_mask, st.none())  # nil affinity one time in four
    preference = draw(st.sampled_from(["per list", "mixed", "never", "always"]))

    def hint_list():
        kind = draw(st.sampled_from(["hints"] * 6 + ["nil", "empty"]))
        if kind != "hints":
            return None if kind == "nil" else []
        mode = preference if preference != "per list" else draw(st.sampled_from(["mixed", "mixed", "never"]))
        preferred = {"mixed": st.booleans(), "never": st.just(False), "always": st.just(True)}[mode]
        return [TopologyHint(draw(affinity), draw(preferred)) for _ in range(draw(st.integers(1, max_hints)))]

    def resource_map():
        kind = draw(st.sampled_from(["resources"] * 6 + ["nil", "empty"]))
        if kind != "resources":
            return None if kind == "nil" else {}
        names = draw(st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=3, unique=True))
        return {name: hint_list() for name in names}

    answers = [resource_map() for _ in range(draw(st.integers(0, max_providers)))]
    _trim_to_budget(answers)
    return answers


def _trim_to_budget(answers: list) -> None:
    """Drop the last hint of the longest list until the filtered cross product fits the budget."""
    while prod(len(hints) for hints in filter_providers_hints(answers)) > PERMUTATION_BUDGET:
        longest = max(
            ((answer, resource) for answer in answers for resource, hints in (answer or {}).items() if hints),
            key=lambda pair: len(pair[0][pair[1]]),
        )
        answer, resource = longest
        answer[resource] = answer[resource][:-1] or None


@st.composite
def merge_cases(draw, min_nodes: int = 1, max_nodes: int = 8, max_providers: int = 4, max_hints: int = 8):
    """A whole merge case (see the module docstring)."""
    numa_info = draw(machines(min_nodes, max_nodes))
    return MergeCase(
        numa_info,
        draw(provider_answers(numa_info, max_providers, max_hints)),
        draw(st.sampled_from(POLICIES)),
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.booleans()),
    )


def check_merge(case: MergeCase) -> None:
    """The fast merge equals the reference; the result is a non-nil mask within the machine."""
    lists = case.lists()
    got = fast_merge_hints(case.numa_info, lists, case.policy, case.prefer_closest)
    assert got == reference_merge_hints(case.numa_info, lists, case.policy, case.prefer_closest)
    default = case.numa_info.default_affinity_mask()
    assert got.numa_node_affinity is not None and got.numa_node_affinity & ~default == 0
    if got.preferred:
        assert got.numa_node_affinity != 0


@settings(max_examples=examples(600, 3500), **SETTINGS)
@given(merge_cases())
def test_fast_merge_equals_reference(case):
    check_merge(case)


@settings(max_examples=examples(50, 150), **SETTINGS)
@given(merge_cases(min_nodes=9, max_nodes=16, max_providers=3, max_hints=6))
def test_fast_merge_equals_reference_9_to_16_nodes(case):
    check_merge(case)


@settings(max_examples=examples(100, 300), **SETTINGS)
@given(merge_cases())
def test_policy_merge_and_admit_equal_reference(case):
    assert case.policy_object(fast_merge_hints).merge(case.answers) == case.policy_object(
        reference_merge_hints).merge(case.answers)


@settings(max_examples=examples(100, 300), **SETTINGS)
@given(merge_cases(max_providers=3, max_hints=5), st.randoms(use_true_random=False))
def test_kubelet_result_does_not_depend_on_list_order(case, rnd):
    """The fold of compare over kubelet's odometer is order-independent (see fast_merge's
    docstring, observation 2): shuffling the lists and the hints inside them changes nothing."""
    lists = case.lists()
    shuffled = [rnd.sample(hints, len(hints)) for hints in lists]
    rnd.shuffle(shuffled)
    assert reference_merge_hints(case.numa_info, shuffled, case.policy, case.prefer_closest) == reference_merge_hints(
        case.numa_info, lists, case.policy, case.prefer_closest
    )
