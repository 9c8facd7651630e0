"""kubelet's policy_test.go merge tables, compare cases and maxOfMinAffinityCounts, translated.

Every merge table runs through the policies with the production merge and with the
reference merge, and again with providers and resources in reversed order (all upstream
cases are order-independent); each combination is its own pytest case.
"""
import pytest

from topologymanager.errors import HintProviderError
from topologymanager.hint import TopologyHint
from topologymanager.merge import (
    HintMerger,
    filter_providers_hints,
    max_of_min_affinity_counts,
    merge_permutation,
)
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy_best_effort import BestEffortPolicy
from topologymanager.policy_options import PolicyOptions
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.reference_merge import reference_merge_hints


from tests.helpers.topology import NNIL, PNIL, N, P
ALL = "all"  # expected affinity: every NUMA node of the machine


def numa_two():
    return NUMAInfo([0, 1], {0: [10, 11], 1: [11, 10]})


def numa_four():
    return NUMAInfo([0, 1, 2, 3], {0: [10, 11, 12, 12], 1: [11, 10, 12, 12], 2: [12, 12, 10, 11], 3: [12, 12, 11, 10]})


def numa_eight():
    # upstream's commonNUMAInfoEightNodes, including its asymmetric last row
    return NUMAInfo(list(range(8)), {
        0: [10, 11, 12, 12, 30, 30, 30, 30],
        1: [11, 10, 12, 12, 30, 30, 30, 30],
        2: [12, 12, 10, 11, 30, 30, 30, 30],
        3: [12, 12, 11, 10, 30, 30, 30, 30],
        4: [30, 30, 30, 30, 10, 11, 12, 12],
        5: [30, 30, 30, 30, 11, 10, 12, 12],
        6: [30, 30, 30, 30, 12, 12, 10, 11],
        7: [30, 30, 30, 30, 12, 12, 13, 10],
    })


# (name, providers, (expected nodes | ALL | None, expected preferred))
COMMON = [
    ("two providers, 1 hint each, same mask, both preferred 1/2",
     [{"resource1": [P(0)]}, {"resource2": [P(0)]}], ([0], True)),
    ("two providers, 1 hint each, same mask, both preferred 2/2",
     [{"resource1": [P(1)]}, {"resource2": [P(1)]}], ([1], True)),
    ("two providers, 1 no hints, 1 single hint preferred 1/2",
     [None, {"resource": [P(0)]}], ([0], True)),
    ("two providers, 1 no hints, 1 single hint preferred 2/2",
     [None, {"resource": [P(1)]}], ([1], True)),
    ("two providers, 1 with 2 hints, 1 with single hint matching 1/2",
     [{"resource1": [P(0), P(1)]}, {"resource2": [P(0)]}], ([0], True)),
    ("two providers, 1 with 2 hints, 1 with single hint matching 2/2",
     [{"resource1": [P(0), P(1)]}, {"resource2": [P(1)]}], ([1], True)),
    ("two providers, both with 2 hints, matching narrower preferred hint from both",
     [{"resource1": [P(0), P(1)]}, {"resource2": [P(0), N(0, 1)]}], ([0], True)),
    ("less narrow preferred hints are chosen over narrower non-preferred hints",
     [{"resource1": [P(1), N(0, 1)]}, {"resource2": [P(0), P(1), N(0, 1)]}], ([1], True)),
    ("multiple resources, same provider",
     [{"resource1": [P(1), N(0, 1)], "resource2": [P(0), P(1), N(0, 1)]}], ([1], True)),
]

BEST_EFFORT = [
    ("two providers, 2 hints each, same mask (some with different bits), same preferred",
     [{"resource1": [P(0, 1), P(0, 2)]}, {"resource2": [P(0, 1), P(0, 2)]}], ([0, 1], True)),
    ("topology hint not set", [], (ALL, True)),
    ("provider returns empty non-nil map", [{}], (ALL, True)),
    ("provider returns nil list for a resource", [{"resource": None}], (ALL, True)),
    ("provider returns empty list for a resource", [{"resource": []}], (ALL, False)),
    ("single hint, preferred, nil affinity", [{"resource": [PNIL]}], (ALL, True)),
    ("single hint, not preferred, nil affinity", [{"resource": [NNIL]}], (ALL, False)),
    ("two providers, 1 hint each, no common mask",
     [{"resource1": [P(0)]}, {"resource2": [P(1)]}], (ALL, False)),
    ("two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
     [{"resource1": [P(0)]}, {"resource2": [N(0)]}], ([0], False)),
    ("two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
     [{"resource1": [P(1)]}, {"resource2": [N(1)]}], ([1], False)),
    ("two providers, 1 hint each, 1 wider mask, both preferred 1/2",
     [{"resource1": [P(0)]}, {"resource2": [P(0, 1)]}], ([0], False)),
    ("two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
     [{"resource1": [P(0), P(1)]}, {"resource2": [N(0, 1)]}], ([0], False)),
    ("two providers, 1 hint each, 1 wider mask, both preferred 2/2",
     [{"resource1": [P(1)]}, {"resource2": [P(0, 1)]}], ([1], False)),
    ("bestNonPreferredAffinityCount (1)",
     [{"resource1": [N(0, 1, 2, 3), N(0, 1)]}, {"resource2": [N(0, 1)]}], ([0, 1], False)),
    ("bestNonPreferredAffinityCount (2)",
     [{"resource1": [N(0, 1, 2, 3), N(0, 1)]}, {"resource2": [N(0, 3)]}], ([0, 3], False)),
    ("bestNonPreferredAffinityCount (3)",
     [{"resource1": [N(0, 1, 2, 3), N(0, 1)]}, {"resource2": [N(1, 2)]}], ([1, 2], False)),
    ("bestNonPreferredAffinityCount (4)",
     [{"resource1": [N(0, 1, 2, 3), N(0, 1)]}, {"resource2": [N(2, 3)]}], ([2, 3], False)),
]

BNP_5 = [{"resource1": [N(0, 1, 2, 3), N(0, 1)]}, {"resource2": [N(1, 2), N(2, 3)]}]
BNP_6 = [{"resource1": [N(0, 1, 2, 3), N(0, 1)]}, {"resource2": [N(1, 2, 3), N(1, 2), N(1, 3), N(2, 3)]}]

NO_PREFER_CLOSEST = [
    ("bestNonPreferredAffinityCount (5)", BNP_5, ([1, 2], False)),
    ("bestNonPreferredAffinityCount (6)", BNP_6, ([1, 2], False)),
]

PREFER_CLOSEST = [
    ("two providers, 2 hints each, same mask (some with different bits), same preferred",
     [{"resource1": [P(0, 4), P(0, 2)]}, {"resource2": [P(0, 4), P(0, 2)]}], ([0, 2], True)),
    ("two providers, 2 hints each, different mask",
     [{"resource1": [P(4), P(0, 2)]}, {"resource2": [P(4), P(0, 2)]}], ([4], True)),
    ("bestNonPreferredAffinityCount (5)", BNP_5, ([2, 3], False)),
    ("bestNonPreferredAffinityCount (6)", BNP_6, ([2, 3], False)),
]

SINGLE_NUMA_NODE = [
    ("topology hint not set", [], (None, True)),
    ("provider returns empty non-nil map", [{}], (None, True)),
    ("provider returns nil list for a resource", [{"resource": None}], (None, True)),
    ("provider returns empty list for a resource", [{"resource": []}], (None, False)),
    ("single hint, preferred, nil affinity", [{"resource": [PNIL]}], (None, True)),
    ("single hint, not preferred, nil affinity", [{"resource": [NNIL]}], (None, False)),
    ("two providers, 1 hint each, no common mask", [{"resource1": [P(0)]}, {"resource2": [P(1)]}], (None, False)),
    ("two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
     [{"resource1": [P(0)]}, {"resource2": [N(0)]}], (None, False)),
    ("two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
     [{"resource1": [P(1)]}, {"resource2": [N(1)]}], (None, False)),
    ("two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
     [{"resource1": [P(0), P(1)]}, {"resource2": [N(0, 1)]}], (None, False)),
    ("single NUMA hint generation",
     [{"resource1": [P(0, 1)], "resource2": [P(0), P(1), N(0, 1)]}], (None, False)),
    ("one no-preference provider", [{"resource1": [P(0), P(1), N(0, 1)]}, None], ([0], True)),
]

MERGE_FNS = {"production": fast_merge_hints, "reference": reference_merge_hints}


def expected_hint(numa_info, expected):
    nodes, preferred = expected
    if nodes == ALL:
        return TopologyHint(numa_info.default_affinity_mask(), preferred)
    return TopologyHint.of(nodes, preferred)


def reversed_providers(providers):
    """Providers in reverse registration order, each map with its resources reversed."""
    out = []
    for p in reversed(providers):
        out.append(None if p is None else dict(reversed(list(p.items()))))
    return out


MACHINES = {"2 nodes": numa_two, "4 nodes": numa_four, "8 nodes": numa_eight}
# policy -> (class, kubelet's admit rule for the merged hint)
POLICIES = {
    "best-effort": (BestEffortPolicy, lambda hint: True),
    "restricted": (RestrictedPolicy, lambda hint: hint.preferred),
    "single-numa-node": (SingleNumaNodePolicy, lambda hint: hint.preferred),
}
# (table, machines, policies, prefer-closest values, cases), as upstream runs its tables
TABLES = [
    ("common", ["2 nodes", "4 nodes"], ["best-effort", "restricted", "single-numa-node"], [False], COMMON),
    ("best-effort", ["4 nodes"], ["best-effort", "restricted"], [False], BEST_EFFORT + NO_PREFER_CLOSEST),
    ("prefer-closest", ["8 nodes"], ["best-effort", "restricted"], [True], COMMON + BEST_EFFORT + PREFER_CLOSEST),
    ("single-numa-node", ["2 nodes", "4 nodes"], ["single-numa-node"], [False, True], SINGLE_NUMA_NODE),
]


def merge_table_cases():
    """One pytest case per table entry, machine, policy, option, merge function and provider order."""
    cases = []
    for table, machines, policies, closest_values, entries in TABLES:
        for machine in machines:
            for policy in policies:
                for prefer_closest in closest_values:
                    for merge_name, merge_fn in MERGE_FNS.items():
                        for order in ("given order", "reversed order"):
                            for name, providers, expected in entries:
                                closest = "prefer-closest" if prefer_closest else "default options"
                                cases.append(pytest.param(
                                    machine, policy, prefer_closest, merge_fn, order, providers, expected,
                                    id=f"{table} | {machine} | {policy} | {closest} | {merge_name} | {order} | {name}",
                                ))
    return cases


@pytest.mark.parametrize(
    "machine, policy_name, prefer_closest, merge_fn, order, providers, expected", merge_table_cases()
)
def test_merge_table(machine, policy_name, prefer_closest, merge_fn, order, providers, expected):
    info = MACHINES[machine]()
    cls, admit_rule = POLICIES[policy_name]
    policy = cls(info, PolicyOptions(prefer_closest_numa=prefer_closest), merge_fn)
    variant = providers if order == "given order" else reversed_providers(providers)
    want = expected_hint(info, expected)
    hint, admit = policy.merge(variant)
    assert hint == want
    assert admit is admit_rule(want)


@pytest.mark.parametrize("merge_fn", MERGE_FNS.values(), ids=MERGE_FNS.keys())
def test_eight_nodes_default_results_are_all_eight(merge_fn):
    info = numa_eight()
    hint, admit = BestEffortPolicy(info, PolicyOptions(), merge_fn).merge([{"resource": []}])
    assert hint == TopologyHint(0xFF, False) and admit


@pytest.mark.parametrize("merge_fn", MERGE_FNS.values(), ids=MERGE_FNS.keys())
def test_single_numa_node_one_node_machine_reports_nil(merge_fn):
    info = NUMAInfo([0], {0: None})
    hint, admit = SingleNumaNodePolicy(info, PolicyOptions(), merge_fn).merge([{"memory": [P(0)]}])
    assert hint == TopologyHint(None, True) and admit


# --- maxOfMinAffinityCounts -----------------------------------------------------------------

@pytest.mark.parametrize(
    "lists, expected",
    [
        ([], 0),
        ([[TopologyHint(0, True)]], 0),
        ([[P(0)]], 1),
        ([[P(0, 1)]], 2),
        ([[P(0, 1), P(0, 1, 2)]], 2),
        ([[P(0, 1), P(0, 1, 2)], [P(0, 1, 2)]], 3),
        ([[P(0, 1), P(0, 1, 2)], [P(0, 1, 2), P(0, 1, 2, 3)]], 3),
        ([[PNIL, NNIL]], 0),  # nil hints are skipped
        ([[N(0, 1, 2), PNIL, N(3)]], 1),  # preferred and non-preferred alike
    ],
)
def test_max_of_min_affinity_counts(lists, expected):
    assert max_of_min_affinity_counts(lists) == expected


# --- compare ----------------------------------------------------------------------------------

EMPTY_NP = TopologyHint(0, False)
EMPTY_P = TopologyHint(0, True)

COMPARE = [
    ("candidate count 0 (1)", -1, None, EMPTY_NP, "current"),
    ("candidate count 0 (2)", -1, EMPTY_P, EMPTY_NP, "current"),
    ("current none (1)", -1, None, P(0), "candidate"),
    ("current none (2)", -1, None, N(0), "candidate"),
    ("!current.preferred && candidate.preferred", -1, N(0), P(0), "candidate"),
    ("current.preferred && !candidate.preferred", -1, P(0), N(0), "current"),
    ("both preferred (1)", -1, P(0), P(0), "current"),
    ("both preferred (2)", -1, P(0, 1), P(0), "candidate"),
    ("both preferred (3)", -1, P(0), P(0, 1), "current"),
    ("both non-preferred (1.1)", 1, N(0, 1), N(0, 1), "current"),
    ("both non-preferred (1.2)", 1, N(1, 2), N(0, 1), "candidate"),
    ("both non-preferred (1.3)", 1, N(0, 1), N(1, 2), "current"),
    ("both non-preferred (2.1)", 2, N(0, 1), N(0), "current"),
    ("both non-preferred (2.2)", 2, N(0, 1), N(0, 1), "current"),
    ("both non-preferred (2.3)", 2, N(1, 2), N(0, 1), "candidate"),
    ("both non-preferred (2.4)", 2, N(0, 1), N(1, 2), "current"),
    ("both non-preferred (3a)", 2, N(0), N(0, 1, 2), "current"),
    ("both non-preferred (3b)", 2, N(0), N(0, 1), "candidate"),
    ("both non-preferred (3ca.1)", 3, N(0), N(0, 1), "candidate"),
    ("both non-preferred (3ca.2)", 3, N(0), N(1, 2), "candidate"),
    ("both non-preferred (3ca.3)", 4, N(0, 1), N(1, 2, 3), "candidate"),
    ("both non-preferred (3cb)", 4, N(1, 2, 3), N(0, 1), "current"),
    ("both non-preferred (3cc.1)", 4, N(0, 1, 2), N(0, 1, 2), "current"),
    ("both non-preferred (3cc.2)", 4, N(0, 1, 2), N(1, 2, 3), "current"),
    ("both non-preferred (3cc.3)", 4, N(1, 2, 3), N(0, 1, 2), "candidate"),
]


@pytest.mark.parametrize("name, b, current, candidate, expected", COMPARE, ids=[c[0] for c in COMPARE])
def test_compare_narrowest(name, b, current, candidate, expected):
    merger = HintMerger(NUMAInfo([], {}), "best-effort", False, b)
    # fresh objects so the identity check is meaningful even for equal values
    cur = None if current is None else TopologyHint(current.numa_node_affinity, current.preferred)
    cand = TopologyHint(candidate.numa_node_affinity, candidate.preferred)
    result = merger.compare(cur, cand)
    assert result is (cur if expected == "current" else cand)


def test_compare_prefer_closest_uses_distance_except_single_numa_node():
    info = numa_four()
    current, candidate = P(0, 2), P(2, 3)  # same size; {2,3} is closer, {0,2} numerically lower
    assert HintMerger(info, "best-effort", True, 0).compare(current, candidate) is candidate
    assert HintMerger(info, "restricted", True, 0).compare(current, candidate) is candidate
    assert HintMerger(info, "single-numa-node", True, 0).compare(current, candidate) is current
    assert HintMerger(info, "best-effort", False, 0).compare(current, candidate) is current


# --- filterProvidersHints and mergePermutation -----------------------------------------------

def test_filter_providers_hints():
    assert filter_providers_hints([]) == []
    assert filter_providers_hints([None]) == [[PNIL]]
    assert filter_providers_hints([{}]) == [[PNIL]]
    assert filter_providers_hints([{"a": None, "b": [], "c": [P(0), N(1)]}, None]) == [
        [PNIL], [NNIL], [P(0), N(1)], [PNIL]]


def test_filter_providers_hints_rejects_bad_values():
    with pytest.raises(HintProviderError, match="provider 0"):
        filter_providers_hints([[P(0)]])
    with pytest.raises(HintProviderError, match="'memory'"):
        filter_providers_hints([{"memory": [0b1]}])


@pytest.mark.parametrize(
    "permutation, expected",
    [
        ([], TopologyHint(0b1111, True)),
        ([PNIL], TopologyHint(0b1111, True)),
        ([NNIL], TopologyHint(0b1111, False)),
        ([P(0), P(0)], P(0)),
        ([P(0), PNIL, P(0)], P(0)),
        ([P(0), P(0, 1)], N(0)),  # preferred only if all non-nil affinities are equal
        ([P(0), N(0)], N(0)),
        ([P(0), P(1)], TopologyHint(0, False)),
        ([P(0, 9), P(0, 9)], P(0)),  # bits outside the machine drop out of the merged mask
        ([P(0), P(0, 9)], N(0)),  # ...but still count for equality
    ],
)
def test_merge_permutation(permutation, expected):
    assert merge_permutation(0b1111, permutation) == expected


@pytest.mark.parametrize("merge_fn", MERGE_FNS.values(), ids=MERGE_FNS.keys())
def test_no_permutation_gives_default_not_preferred(merge_fn):
    info = numa_four()
    assert merge_fn(info, [[P(0)], []], "best-effort", False) == TopologyHint(0b1111, False)
    assert merge_fn(info, [], "best-effort", False) == TopologyHint(0b1111, True)
    assert merge_fn(info, [[P(5)]], "best-effort", False) == TopologyHint(0b1111, False)
