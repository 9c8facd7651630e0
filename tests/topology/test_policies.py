"""kubelet's policy_none_test, policy_best_effort_test, policy_restricted_test and
policy_single_numa_node_test (names, admit rules, single-NUMA filtering), translated."""
import pytest

from topologymanager.hint import TopologyHint
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import Policy, is_alignment_guaranteed
from topologymanager.policy_best_effort import BestEffortPolicy
from topologymanager.policy_none import NonePolicy
from topologymanager.policy_options import PolicyOptions
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.policy_single_numa_node import SingleNumaNodePolicy, filter_single_numa_hints
from topologymanager.reference_merge import reference_merge_hints


from tests.helpers.topology import NNIL, PNIL, TWO, N, P


def all_policies():
    return [NonePolicy(), BestEffortPolicy(TWO), RestrictedPolicy(TWO), SingleNumaNodePolicy(TWO)]


def test_names():
    assert [p.name for p in all_policies()] == ["none", "best-effort", "restricted", "single-numa-node"]
    for p in all_policies():
        assert isinstance(p, Policy)


def test_alignment_guaranteed_only_for_single_numa_node():
    assert [is_alignment_guaranteed(p) for p in all_policies()] == [False, False, False, True]


@pytest.mark.parametrize(
    "policy, hint, expected",
    [
        (NonePolicy(), NNIL, True),
        (NonePolicy(), PNIL, True),
        (BestEffortPolicy(TWO), NNIL, True),
        (BestEffortPolicy(TWO), PNIL, True),
        (RestrictedPolicy(TWO), NNIL, False),
        (RestrictedPolicy(TWO), PNIL, True),
        (SingleNumaNodePolicy(TWO), NNIL, False),
        (SingleNumaNodePolicy(TWO), PNIL, True),
    ],
)
def test_can_admit_pod_result(policy, hint, expected):
    assert policy.can_admit_pod_result(hint) is expected


@pytest.mark.parametrize(
    "providers",
    [[], [None], [{}], [{"r": []}], [{"r": [N(0)]}], [{"r": [P(0)]}, {"s": [P(1)]}]],
)
def test_none_policy_merge_is_zero_hint_and_admit(providers):
    assert NonePolicy().merge(providers) == (TopologyHint(), True)


def test_best_effort_admits_non_preferred_and_restricted_rejects():
    providers = [{"r": [P(0)]}, {"s": [P(1)]}]
    assert BestEffortPolicy(TWO).merge(providers) == (TopologyHint(0b11, False), True)
    assert RestrictedPolicy(TWO).merge(providers) == (TopologyHint(0b11, False), False)
    assert SingleNumaNodePolicy(TWO).merge(providers) == (TopologyHint(None, False), False)


@pytest.mark.parametrize(
    "lists, expected",
    [
        ([], []),
        ([[NNIL], [PNIL]], [[], [PNIL]]),
        ([[P(0), NNIL], [P(1), PNIL]], [[P(0)], [P(1), PNIL]]),
        ([[P(1), P(0), NNIL], []], [[P(1), P(0)], []]),
        (
            [
                [P(0), P(1), N(1, 2), N(0, 1, 2), NNIL],
                [N(1, 2), N(0, 1, 2), N(0, 2), N(3)],
                [N(1, 2), N(0, 1, 2), N(0, 2)],
            ],
            [[P(0), P(1)], [], []],
        ),
        ([[P(0, 1), P(2)]], [[P(2)]]),  # preferred but wide: dropped
    ],
)
def test_filter_single_numa_hints(lists, expected):
    assert filter_single_numa_hints(lists) == expected


def test_single_numa_node_ignores_prefer_closest():
    info = NUMAInfo([0, 1, 2, 3], {0: [10, 30, 30, 30], 1: [30, 10, 30, 30], 2: [30, 30, 10, 30], 3: [30, 30, 30, 10]})
    providers = [{"r": [P(2), P(1)]}]
    a = SingleNumaNodePolicy(info, PolicyOptions(prefer_closest_numa=True)).merge(providers)
    b = SingleNumaNodePolicy(info, PolicyOptions()).merge(providers)
    assert a == b == (P(1), True)


def test_policies_use_their_merge_fn():
    calls = []

    def spy(numa_info, lists, policy_name, prefer_closest):
        calls.append((policy_name, prefer_closest, [list(l) for l in lists]))
        return TopologyHint(0b01, True)

    opts = PolicyOptions(prefer_closest_numa=True)
    assert BestEffortPolicy(TWO, opts, spy).merge([{"r": [P(0)]}]) == (P(0), True)
    assert RestrictedPolicy(TWO, opts, spy).merge([None]) == (P(0), True)
    assert SingleNumaNodePolicy(TWO, opts, spy).merge([{"r": [P(0), P(0, 1)]}]) == (P(0), True)
    assert calls == [
        ("best-effort", True, [[P(0)]]),
        ("restricted", True, [[PNIL]]),
        ("single-numa-node", True, [[P(0)]]),  # filtered before the merge
    ]


def test_default_merge_fn_is_production_and_reference_is_swappable():
    assert BestEffortPolicy(TWO).merge_fn is fast_merge_hints
    assert SingleNumaNodePolicy(TWO).merge_fn is fast_merge_hints
    ref = RestrictedPolicy(TWO, PolicyOptions(), reference_merge_hints)
    assert ref.merge([{"r": [P(1), N(0, 1)]}]) == (P(1), True)
