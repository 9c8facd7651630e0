"""kubelet's numa_info_test.go, translated (cadvisor-distances version, v1.26+)."""
from dataclasses import dataclass
from typing import Optional

import pytest

from topologymanager.bitmask import new_bitmask
from topologymanager.errors import NUMAInfoError
from topologymanager.numa_info import NUMAInfo, calculate_average_for, new_numa_info

ROWS_4 = {0: [10, 11, 12, 12], 1: [11, 10, 12, 12], 2: [12, 12, 10, 11], 3: [12, 12, 11, 10]}


@dataclass
class Node:
    """Stand-in for cadvisor's Node: only what NUMAInfo reads."""

    node_id: int
    distances: Optional[list] = None


def nodes(*ids, with_distances=True):
    return [Node(i, ROWS_4.get(i, [10, 11, 12, 12]) if with_distances else None) for i in ids]


@pytest.mark.parametrize(
    "ids",
    [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3], [1], [9], [0, 2], [3, 1, 2, 0]],
)
def test_nodes_keep_cadvisor_order(ids):
    for prefer in (False, True):
        info = new_numa_info(nodes(*ids), prefer)
        assert info.nodes == ids


def test_without_prefer_closest_rows_are_none():
    info = new_numa_info(nodes(0, 1, 2, 3), False)
    assert info.distances == {0: None, 1: None, 2: None, 3: None}
    # even a node without distances is fine then
    assert new_numa_info([Node(0, None)], False).distances == {0: None}


def test_with_prefer_closest_rows_are_copied():
    info = new_numa_info(nodes(0, 1, 2, 3), True)
    assert info.distances == ROWS_4
    assert new_numa_info(nodes(0, 2), True).distances == {0: ROWS_4[0], 2: ROWS_4[2]}


def test_prefer_closest_needs_distances():
    with pytest.raises(NUMAInfoError) as err:
        new_numa_info([Node(0, [10, 11]), Node(1, None)], True)
    assert str(err.value) == "error getting NUMA distances from cadvisor"


@pytest.mark.parametrize("bad", [Node(64), Node(-1), Node("0"), object()])
def test_bad_topology_is_named(bad):
    with pytest.raises(NUMAInfoError, match=r"topology\[0\]"):
        new_numa_info([bad], False)


def test_default_affinity_mask():
    assert NUMAInfo([0, 1, 2, 3], {}).default_affinity_mask() == 0b1111
    assert NUMAInfo([0, 2], {}).default_affinity_mask() == 0b101
    assert NUMAInfo([], {}).default_affinity_mask() == 0


@pytest.mark.parametrize(
    "bits, rows, expected",
    [
        ([0], {0: [10]}, 10),
        ([0], {0: [10, 11], 1: [11, 10]}, 10),
        ([0, 1], {0: [10, 11], 1: [11, 10]}, 10.5),
        ([0, 2], ROWS_4, 11),
        ([0, 2, 3], ROWS_4, 11.11111111111111),
        ([], {}, 0),
    ],
)
def test_calculate_average_for(bits, rows, expected):
    info = NUMAInfo(bits, rows)
    result = info.calculate_average_for(new_bitmask(*bits))
    assert result == expected  # exact float equality, as upstream asserts
    assert isinstance(result, float)


def test_average_uses_go_float_arithmetic():
    # 100/9 accumulated as float64 then divided: the same float Go prints as 11.11111111111111
    assert calculate_average_for(ROWS_4, 0b1101) == 100 / 9


def test_short_row_is_a_clear_error_not_a_panic():
    info = NUMAInfo([0, 2], {0: [10, 20], 2: [20, 10]})  # rows by position, not by id
    with pytest.raises(NUMAInfoError, match="no NUMA distance from node 0 to node 2"):
        info.calculate_average_for(0b101)
    with pytest.raises(NUMAInfoError, match="no distance row"):
        NUMAInfo([0, 1], {0: [10, 11], 1: None}).calculate_average_for(0b11)


def test_non_sequential_ids_with_rows_indexed_by_id():
    info = new_numa_info([Node(0, [10, 11, 12, 12]), Node(2, [12, 12, 10, 11])], True)
    assert info.calculate_average_for(0b101) == 11


# TestClosest: (current, candidate, expected, rows); upstream calls Closest(candidate, current)
EQUAL_3 = {i: [10, 10, 10] for i in range(3)}
EQUAL_4 = {i: [10, 10, 10, 10] for i in range(4)}


@pytest.mark.parametrize(
    "current, candidate, expected, rows",
    [
        ([0], [0, 2], "current", {}),  # different sizes: narrower, distances not needed
        ([0, 1], [0, 2], "current", EQUAL_3),  # same average: numerically lower
        ([0, 3], [0, 2], "candidate", EQUAL_4),
        ([0, 3], [0, 1], "candidate", ROWS_4),  # smaller average wins
        ([2, 3], [0, 3], "current", ROWS_4),
    ],
)
def test_closest(current, candidate, expected, rows):
    info = NUMAInfo(sorted(rows), rows)
    cur, cand = new_bitmask(*current), new_bitmask(*candidate)
    result = info.closest(cand, cur)
    assert result == (cur if expected == "current" else cand)
    assert info.closest(cur, cand) == result  # the winner does not depend on argument order


def test_narrowest_ties_go_to_second_argument():
    info = NUMAInfo([0, 1], {})
    assert info.narrowest(0b1, 0b11) == 0b1
    assert info.narrowest(0b11, 0b1) == 0b1
    assert info.narrowest(0b10, 0b01) == 0b01
    assert info.narrowest(0b11, 0b11) == 0b11
