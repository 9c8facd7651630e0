"""The fast calculate_hints against reference_calculate_hints, kubelet's loop (the oracle).

Same hints in the same order, same preferred flags, same errors, the same `cells` lists
sorted in place, and the same re-usable-memory look-ups, on random machine states.
"""
from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers.budget import examples

from memorymanager.hints import ALL_MASKS, _both, _covers, _masks_passing, calculate_hints
from memorymanager.reference_hints import reference_calculate_hints
from memorymanager.policy import MemoryManagerError
from memorymanager.reusable_memory import ReusableMemory, no_reuse
from state.types import MemoryTable, NUMANodeState
from topologymanager.hint import TopologyHint

MEM, HP2M = "memory", "hugepages-2Mi"
SIZES = st.integers(min_value=0, max_value=6)


@st.composite
def machine_states(draw):
    """Small NUMA machines with busy nodes, groups, odd cells, missing tables and null nodes."""
    ids = draw(st.one_of(
        st.integers(min_value=1, max_value=6).map(lambda n: list(range(n))),
        st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=6, unique=True),
    ))
    state = {}
    for node_id in ids:
        if draw(st.integers(0, 100)) == 57:
            state[node_id] = None
            continue
        tables = {}
        for resource in (MEM, HP2M):
            if draw(st.integers(0, 80)) == 57:
                continue  # a missing table: kubelet would crash, here an error
            alloc = draw(SIZES)
            free = draw(st.integers(min_value=0, max_value=alloc))
            tables[resource] = MemoryTable(alloc + 1, 1, alloc, alloc - free, free)
        cells = draw(st.one_of(
            st.just([node_id]),
            st.none(),
            st.just([]),
            st.lists(st.sampled_from(ids + [99]), min_size=1, max_size=4),
            st.sets(st.sampled_from(ids + [99]), min_size=2).map(lambda s: sorted(s, reverse=True)),
        ))
        state[node_id] = NUMANodeState(draw(st.integers(0, 2)), tables, cells)
    # sometimes a consistent multi-NUMA group
    if len(ids) >= 3 and draw(st.booleans()):
        group = draw(st.sets(st.sampled_from(ids), min_size=2, max_size=3))
        order = draw(st.permutations(sorted(group)))
        for node_id in group:
            if state[node_id] is not None:
                state[node_id].cells = list(order)
                state[node_id].number_of_assignments = max(1, state[node_id].number_of_assignments)
    return state


REQUESTS = st.one_of(
    st.fixed_dictionaries({MEM: SIZES}),
    st.fixed_dictionaries({MEM: SIZES, HP2M: SIZES}),
    st.fixed_dictionaries({HP2M: SIZES, MEM: SIZES}),
    st.just({}),
)


def _run(fn, state, requested, reuse):
    """(result or error text, the state afterwards, the look-ups made)."""
    calls = []

    def lookup(mask, resource):
        calls.append((mask, resource))
        return reuse.get((mask, resource), 0)

    state = copy.deepcopy(state)
    try:
        result = fn(state, dict(requested), lookup if reuse is not None else no_reuse)
    except MemoryManagerError as err:
        return ("error", str(err)), state  # (the plain loop may look up re-usable memory first)
    return result, state, calls


@settings(max_examples=examples(100, 1000), deadline=None)
@given(machine_states(), REQUESTS, st.one_of(st.none(), st.dictionaries(
    st.tuples(st.integers(1, 63), st.sampled_from([MEM, HP2M])), st.integers(0, 4), max_size=6)))
def test_fast_hints_equal_plain_hints(state, requested, reuse) -> None:
    assert _run(calculate_hints, state, requested, reuse) == _run(reference_calculate_hints, state, requested, reuse)


def test_idle_machine_every_mask_in_kubelet_order() -> None:
    state = {i: NUMANodeState(0, {MEM: MemoryTable(9, 0, 8, 0, 8)}, [i]) for i in range(4)}
    hints = calculate_hints(state, {MEM: 1})
    masks = [h.numa_node_affinity for h in hints[MEM]]
    assert masks == [0b1, 0b10, 0b100, 0b1000, 0b11, 0b101, 0b1001, 0b110, 0b1010, 0b1100,
                     0b111, 0b1011, 0b1101, 0b1110, 0b1111]
    assert [h.preferred for h in hints[MEM]] == [True] * 4 + [False] * 11


def test_group_cells_are_sorted_in_place_like_kubelet() -> None:
    table = {MEM: MemoryTable(9, 0, 8, 4, 4)}
    state = {0: NUMANodeState(1, dict(table), [1, 0]), 1: NUMANodeState(1, dict(table), [1, 0]),
             2: NUMANodeState(0, dict(table), [2])}
    hints = calculate_hints(state, {MEM: 6})
    assert hints == {MEM: [TopologyHint(0b11, False)]}
    assert state[0].cells == [0, 1] and state[1].cells == [0, 1]


def test_reusable_lookup_is_no_reuse_for_a_pod_without_init_memory() -> None:
    assert ReusableMemory().lookup("p") is no_reuse
    assert ReusableMemory({"p": {"01": {MEM: 5}}}).lookup("p")(1, MEM) == 5


def test_mask_filters_name_the_every_mask_case() -> None:
    assert _covers([[1, 2]], [1]) is ALL_MASKS  # every node alone fits: no per-mask list
    assert _covers([[0, 2]], [1]) == [False, False, True, True]  # by position mask 0b00, 0b01, 0b10, 0b11
    assert _covers([[1, -1]], [0]) == [True, True, False, True]  # a negative value: sums are checked
    assert _both(ALL_MASKS, [True, False]) == [True, False] and _both([False, True], ALL_MASKS) == [False, True]
    assert _both(ALL_MASKS, ALL_MASKS) is ALL_MASKS
    assert _masks_passing((1, 2, 3), ALL_MASKS) == (1, 2, 3)
    assert _masks_passing((1, 2, 3), [False, False, True, True]) == [2, 3]
