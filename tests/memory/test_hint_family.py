"""The static policy's hint family against the enumerating calculate_hints (the oracle).

On random machine states of 6-16 NUMA nodes (busy nodes, multi-NUMA groups with unsorted
cells, hugepages, re-usable init memory, non-contiguous ids): the family's hints in kubelet's
order, its count, membership, best hint (getDefaultHint) and extension hint equal what the
enumerating path gives, and the same `cells` lists end up sorted.
"""
from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.budget import examples

import memorymanager.hints as hints_module
from memorymanager.hint_family import family_hints
from memorymanager.hints import calculate_hints, extension_hint, find_best_hint
from memorymanager.reference_hints import reference_calculate_hints
from memorymanager.reusable_memory import ReusableMemory, no_reuse
from state.types import MemoryTable, NUMANodeState
from topologymanager import bitmask
from topologymanager.errors import BoundedWorkError
from topologymanager.hint import TopologyHint

MEM, HP2M = "memory", "hugepages-2Mi"


@st.composite
def states(draw, min_nodes: int = 6, max_nodes: int = 16):
    """A machine state with random amounts, single allocations and groups."""
    n = draw(st.integers(min_nodes, max_nodes))
    ids = list(range(n)) if draw(st.booleans()) else sorted(draw(st.sets(st.integers(0, 63), min_size=n, max_size=n)))
    scale = draw(st.sampled_from([1, 4, 16]))
    state = {}
    for node_id in ids:
        tables = {}
        for resource in (MEM, HP2M):
            alloc = draw(st.integers(0, scale))
            free = draw(st.integers(0, alloc))
            tables[resource] = MemoryTable(alloc + 1, 1, alloc, alloc - free, free)
        busy = draw(st.integers(0, 5)) == 0
        state[node_id] = NUMANodeState(1 if busy else 0, tables, [node_id])
    for _ in range(draw(st.integers(0, 2))):
        group = draw(st.sets(st.sampled_from(ids), min_size=2, max_size=3))
        order = draw(st.permutations(sorted(group)))
        for node_id in group:
            state[node_id].cells = list(order)
            state[node_id].number_of_assignments = max(1, state[node_id].number_of_assignments)
    return state


REQUESTS = st.one_of(
    st.fixed_dictionaries({MEM: st.integers(0, 40)}),
    st.fixed_dictionaries({MEM: st.integers(0, 40), HP2M: st.integers(0, 40)}),
)


def _reuse(draw_masks, state) -> object:
    """A pod's re-usable memory on a few masks (as the static policy's look-up gives it)."""
    memory = ReusableMemory()
    pod = memory.by_pod.setdefault("pod", {})
    for mask, size in draw_masks:
        pod[bitmask.bitmask_string(mask)] = {MEM: size, HP2M: size}
    return memory.lookup("pod")


@settings(max_examples=examples(150, 1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(6, 11), REQUESTS, st.data())
def test_family_lists_what_the_enumerating_path_lists(state, requested, data):
    ids = sorted(state)
    reuse = no_reuse
    if data.draw(st.integers(0, 3)) == 0:
        masks = data.draw(st.lists(st.sets(st.sampled_from(ids), min_size=1, max_size=3), max_size=3))
        reuse = _reuse([(bitmask.new_bitmask(*m), data.draw(st.integers(0, 20))) for m in masks], state)
    oracle_state, family_state = copy.deepcopy(state), copy.deepcopy(state)
    want = calculate_hints(oracle_state, dict(requested), reuse)  # the list path (below FAMILY_MIN_NODES)
    got = family_hints(family_state, dict(requested), reuse)
    assert oracle_state == family_state  # the same cells sorted in place
    assert set(got) == set(want)
    if not want:
        return
    family = got[MEM]
    assert list(family) == want[MEM]
    assert family.count() == len(want[MEM])
    assert family.best_hint() == find_best_hint(want[MEM])
    current = data.draw(st.sets(st.sampled_from(ids), min_size=1, max_size=3))
    expected = extension_hint(want, sorted(current))
    assert extension_hint(got, sorted(current)) == expected
    for hint in data.draw(st.lists(st.sets(st.sampled_from(ids), min_size=1), max_size=5)):
        mask = bitmask.new_bitmask(*hint)
        for preferred in (True, False):
            assert (TopologyHint(mask, preferred) in family) == (TopologyHint(mask, preferred) in want[MEM])


@settings(max_examples=examples(50, 300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(12, 16), REQUESTS, st.data())
def test_family_queries_on_twelve_to_sixteen_nodes(state, requested, data):
    want = calculate_hints(copy.deepcopy(state), dict(requested))
    got = family_hints(copy.deepcopy(state), dict(requested))
    assert set(got) == set(want)
    if not want:
        return
    family, hints = got[MEM], want[MEM]
    assert family.count() == len(hints)
    assert family.best_hint() == find_best_hint(hints)
    assert family.min_width() == min(h.numa_node_affinity.bit_count() for h in hints)
    ids = sorted(state)
    current = data.draw(st.sets(st.sampled_from(ids), min_size=1, max_size=4))
    assert extension_hint(got, sorted(current)) == extension_hint(want, sorted(current))
    listed = set(hints)
    for hint in data.draw(st.lists(st.sets(st.sampled_from(ids), min_size=1), max_size=8)):
        h = TopologyHint(bitmask.new_bitmask(*hint), bitmask.new_bitmask(*hint).bit_count() == family.preferred_width)
        assert (h in family) == (h in listed)


def test_family_matches_kubelets_loop_on_a_small_machine():
    """The reference loop itself (not only the list path) on a grouped four-node machine."""
    state = {i: NUMANodeState(0, {MEM: MemoryTable(5, 1, 4, 0, 4)}, [i]) for i in range(4)}
    for i in (1, 2):
        state[i] = NUMANodeState(1, {MEM: MemoryTable(5, 1, 4, 3, 1)}, [2, 1])
    a, b = copy.deepcopy(state), copy.deepcopy(state)
    want = reference_calculate_hints(a, {MEM: 6})
    got = family_hints(b, {MEM: 6})
    assert list(got[MEM]) == want[MEM] and a == b


def test_large_machine_answers_without_listing():
    gib = 1 << 30
    state = {i: NUMANodeState(0, {MEM: MemoryTable(9 * gib, gib, 8 * gib, 0, 8 * gib)}, [i]) for i in range(64)}
    hints = calculate_hints(state, {MEM: 100 * gib})
    family = hints[MEM]
    assert family.preferred_width == 13 and family.best_hint() == TopologyHint((1 << 13) - 1, True)
    assert family.count() == sum(__import__("math").comb(64, k) for k in range(13, 65))


def test_negative_amounts_are_refused_above_24_nodes():
    """Boundary case 1: the family refuses; up to 24 nodes the enumerating path answers instead."""
    def state(n):
        return {i: NUMANodeState(0, {MEM: MemoryTable(5, 1, 4, 0, 4 if i else -1)}, [i]) for i in range(n)}

    try:
        calculate_hints(state(25), {MEM: 6})
    except BoundedWorkError as exc:
        assert "2^25 NUMA masks" in str(exc)
    else:
        raise AssertionError("expected BoundedWorkError")
    small = state(17)
    assert calculate_hints(small, {MEM: 6}) == hints_module._listed_hints(copy.deepcopy(small), list(range(17)),
                                                                         {MEM: 6}, no_reuse)
