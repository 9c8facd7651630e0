"""The production merge equals the reference cross product on random inputs (hint and admit).

Random machines (1-8 NUMA nodes, ids sometimes non-contiguous, random symmetric distance
matrices indexed by id), 0-4 providers (nil map, empty map, or 1-3 resources whose lists
are nil, empty or random hints with masks partly outside the machine, nil affinities and
either preference), all four policies, prefer-closest on and off.
"""
from math import prod

from hypothesis import HealthCheck, given, settings, strategies as st

from topologymanager.hint import TopologyHint
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.merge import filter_providers_hints
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy_best_effort import BestEffortPolicy
from topologymanager.policy_none import NonePolicy
from topologymanager.policy_options import PolicyOptions
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from topologymanager.reference_merge import reference_merge_hints

POLICIES = ["none", "best-effort", "restricted", "single-numa-node"]
PERMUTATION_BUDGET = 3000  # keeps the reference cross product fast


def make_policy(name, numa_info, prefer_closest, merge_fn):
    opts = PolicyOptions(prefer_closest_numa=prefer_closest)
    if name == "none":
        return NonePolicy()
    cls = {"best-effort": BestEffortPolicy, "restricted": RestrictedPolicy, "single-numa-node": SingleNumaNodePolicy}[name]
    return cls(numa_info, opts, merge_fn)


@st.composite
def machines(draw):
    """NUMAInfo with 1-8 nodes; ids contiguous or a random subset of 0..11; symmetric rows by id."""
    n = draw(st.integers(1, 8))
    if draw(st.booleans()):
        ids = list(range(n))
    else:
        ids = sorted(draw(st.sets(st.integers(0, 11), min_size=n, max_size=n)))
    if draw(st.booleans()):
        ids = draw(st.permutations(ids))  # cadvisor order need not be sorted
    width = max(ids) + 1
    rows = {i: [10] * width for i in ids}
    for a in ids:
        for b in ids:
            if a < b:
                d = draw(st.sampled_from([11, 12, 13, 20, 21, 30]))
                rows[a][b] = rows[b][a] = d
    return NUMAInfo(nodes=list(ids), distances=rows)


@st.composite
def provider_answers(draw, numa_info):
    """0-4 provider maps, trimmed so the cross product stays within PERMUTATION_BUDGET."""
    ids = numa_info.nodes
    beyond = [b for b in range(max(ids) + 1, max(ids) + 3)]
    universe = list(ids) + beyond
    any_mask = st.integers(0, (1 << len(universe)) - 1).map(
        lambda v: sum(1 << b for i, b in enumerate(universe) if (v >> i) & 1))
    # sometimes draw affinities from a small pool, so preferred hints can agree across lists
    pool = draw(st.lists(any_mask, min_size=1, max_size=4))
    mode = draw(st.sampled_from(["free", "pool"]))
    pref_mode = draw(st.sampled_from(["mixed", "never", "always"]))
    some_mask = any_mask if mode == "free" else st.sampled_from(pool)
    affinity = st.one_of(some_mask, some_mask, some_mask, st.none())  # nil affinity one time in four
    preferred = {"mixed": st.booleans(), "never": st.just(False), "always": st.just(True)}[pref_mode]
    hint = st.builds(TopologyHint, affinity, preferred)

    def hint_list():
        # real hint lists are drawn far more often than the nil / empty special cases
        kind = draw(st.sampled_from(["hints"] * 6 + ["nil", "empty"]))
        if kind == "nil":
            return None
        if kind == "empty":
            return []
        return [draw(hint) for _ in range(draw(st.integers(1, 6)))]

    def resource_map():
        kind = draw(st.sampled_from(["resources"] * 6 + ["nil", "empty"]))
        if kind == "nil":
            return None
        if kind == "empty":
            return {}
        names = draw(st.lists(st.sampled_from(["cpu", "memory", "hugepages-2Mi", "example.com/gpu"]),
                              min_size=1, max_size=3, unique=True))
        return {name: hint_list() for name in names}

    answers = [resource_map() for _ in range(draw(st.integers(0, 4)))]
    # trim the longest list until the cross product is small enough
    while prod(len(l) for l in filter_providers_hints(answers)) > PERMUTATION_BUDGET:
        longest = None
        for answer in answers:
            for resource, hints in (answer or {}).items():
                if hints and (longest is None or len(hints) > len(longest[0][longest[1]])):
                    longest = (answer, resource)
        answer, resource = longest
        answer[resource] = answer[resource][:-1] or None
    return answers


@st.composite
def scenarios(draw):
    numa_info = draw(machines())
    return numa_info, draw(provider_answers(numa_info)), draw(st.sampled_from(POLICIES)), draw(st.booleans())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_production_merge_equals_reference(scenario):
    numa_info, answers, policy_name, prefer_closest = scenario
    production = make_policy(policy_name, numa_info, prefer_closest, fast_merge_hints).merge(answers)
    reference = make_policy(policy_name, numa_info, prefer_closest, reference_merge_hints).merge(answers)
    assert production == reference


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenarios())
def test_merge_hints_direct_on_filtered_lists(scenario):
    numa_info, answers, policy_name, prefer_closest = scenario
    lists = filter_providers_hints(answers)
    got = fast_merge_hints(numa_info, lists, policy_name, prefer_closest)
    assert got == reference_merge_hints(numa_info, lists, policy_name, prefer_closest)
    # invariants: the result always has a (non-nil) mask within the machine, or the default
    default = numa_info.default_affinity_mask()
    assert got.numa_node_affinity is not None
    assert got.numa_node_affinity & ~default == 0
    if got.preferred:
        assert got.numa_node_affinity != 0
