"""The fast merge equals kubelet's cross product (the reference) on every input.

Differential test: random machines (1-8 NUMA nodes, some with non-contiguous ids,
some 9-16 nodes), 1-5 hint lists with nil and empty lists, adversarial
non-preferred lists, all four policies, prefer-closest with random distance matrices.
"""
from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topologymanager.fast_merge import fast_merge_hints, produced_masks, superset_differences, superset_sums
from topologymanager.hint import TopologyHint
from topologymanager.numa_info import NUMAInfo
from topologymanager.reference_merge import reference_merge_hints

POLICIES = ["best-effort", "restricted", "single-numa-node"]


def single_numa_filter(hint_lists):
    """single-numa-node keeps preferred hints that are nil or one node (as the policy does)."""
    return [
        [h for h in hints if h.preferred and (h.numa_node_affinity is None or h.numa_node_affinity.bit_count() == 1)]
        for hints in hint_lists
    ]


@st.composite
def machines(draw, min_nodes=1, max_nodes=8):
    """A NUMAInfo with n nodes (sometimes sparse ids) and a random symmetric distance matrix."""
    n = draw(st.integers(min_nodes, max_nodes))
    if draw(st.booleans()):
        ids = list(range(n))
    else:
        ids = sorted(draw(st.sets(st.integers(0, 15), min_size=n, max_size=n)))
    width = max(ids) + 1
    rows = {i: [0] * width for i in ids}
    for a in ids:
        for b in ids:
            if a == b:
                rows[a][b] = 10
            elif a < b:
                d = draw(st.sampled_from([11, 12, 20, 21, 30, 32]))
                rows[a][b] = rows[b][a] = d
    return NUMAInfo(nodes=ids, distances=rows)


@st.composite
def hint_lists(draw, numa_info, max_lists=5, max_hints=12):
    """1-5 lists: empty, nil-only, random hints (masks partly outside the machine), or
    adversarial lists of only non-preferred hints."""
    ids = numa_info.nodes
    universe = ids + [i for i in range(max(ids) + 1, max(ids) + 3) if i < 64]
    mask_strategy = st.sets(st.sampled_from(universe), min_size=1, max_size=len(universe)).map(
        lambda s: sum(1 << b for b in s)
    )
    hint = st.builds(
        TopologyHint,
        st.one_of(st.none(), mask_strategy, mask_strategy, mask_strategy),
        st.booleans(),
    )
    non_preferred = st.builds(TopologyHint, mask_strategy, st.just(False))
    one_list = st.one_of(
        st.just([]),
        st.lists(hint, min_size=1, max_size=max_hints),
        st.lists(non_preferred, min_size=1, max_size=max_hints),
        st.lists(non_preferred, min_size=1, max_size=max_hints),
    )
    return draw(st.lists(one_list, min_size=0, max_size=max_lists))


@st.composite
def merge_inputs(draw, min_nodes=1, max_nodes=8, max_lists=5, max_hints=12):
    numa_info = draw(machines(min_nodes, max_nodes))
    lists = draw(hint_lists(numa_info, max_lists, max_hints))
    policy = draw(st.sampled_from(POLICIES))
    if policy == "single-numa-node":
        lists = single_numa_filter(lists)
    prefer_closest = draw(st.booleans())
    return numa_info, lists, policy, prefer_closest


def combinations(lists) -> int:
    return math.prod(len(hints) for hints in lists)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merge_inputs())
def test_fast_merge_equals_reference(args):
    numa_info, lists, policy, prefer_closest = args
    if combinations(lists) > 50_000:
        lists = lists[:3]
    assert fast_merge_hints(numa_info, lists, policy, prefer_closest) == reference_merge_hints(
        numa_info, lists, policy, prefer_closest
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merge_inputs(min_nodes=9, max_nodes=16, max_lists=3, max_hints=8))
def test_fast_merge_equals_reference_9_to_16_nodes(args):
    numa_info, lists, policy, prefer_closest = args
    assert fast_merge_hints(numa_info, lists, policy, prefer_closest) == reference_merge_hints(
        numa_info, lists, policy, prefer_closest
    )


def test_superset_transform_round_trip():
    values = [3, 0, 5, 1, 0, 2, 7, 4]
    sums = list(values)
    superset_sums(sums)
    # t = 0b001: supersets 001, 011, 101, 111 -> 0 + 1 + 2 + 4
    assert sums[1] == values[1] + values[3] + values[5] + values[7]
    assert sums[0] == sum(values)
    superset_differences(sums)
    assert sums == values


def test_produced_masks_worked_example():
    """The module docstring's example: [{0},{1}] x [{0,1}] produces {0} and {1}."""
    lists = [[TopologyHint(0b01, False), TopologyHint(0b10, False)], [TopologyHint(0b11, False)]]
    assert produced_masks([0, 1], 0b11, lists) == {0b01, 0b10}
    info = NUMAInfo(nodes=[0, 1], distances={0: None, 1: None})
    assert fast_merge_hints(info, lists, "best-effort", False) == TopologyHint(0b01, False)


def test_sparse_node_ids_are_compacted():
    """Nodes 0 and 2: masks map onto a 2-bit universe and back."""
    lists = [[TopologyHint(0b101, False), TopologyHint(0b100, False)], [TopologyHint(0b100, False)]]
    assert produced_masks([0, 2], 0b101, lists) == {0b100}


def test_kubelet_131738_shape_is_answered_without_enumeration():
    """8 nodes, 4 lists x 255 hints (single-node ones preferred): 4.2e9 combinations in kubelet."""
    info = NUMAInfo(nodes=list(range(8)), distances={i: None for i in range(8)})
    hints = [TopologyHint(m, m.bit_count() == 1) for m in range(1, 256)]
    assert fast_merge_hints(info, [hints] * 4, "restricted", False) == TopologyHint(0b1, True)
    non_preferred = [TopologyHint(m, False) for m in range(1, 256)]
    # B = 1; single-node masks are produced; the fitter one is {0}.
    assert fast_merge_hints(info, [non_preferred] * 4, "best-effort", False) == TopologyHint(0b1, False)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merge_inputs(max_lists=4, max_hints=6), st.randoms(use_true_random=False))
def test_kubelet_result_does_not_depend_on_list_order(args, rnd):
    """The fold of compare over kubelet's odometer is order-independent (see fast_merge's
    docstring, observation 2): shuffling the lists and the hints inside them changes nothing."""
    numa_info, lists, policy, prefer_closest = args
    shuffled = [rnd.sample(hints, len(hints)) for hints in lists]
    rnd.shuffle(shuffled)
    assert reference_merge_hints(numa_info, shuffled, policy, prefer_closest) == reference_merge_hints(
        numa_info, lists, policy, prefer_closest
    )
