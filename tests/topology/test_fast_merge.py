"""fast_merge's internals: the superset transform, the produced masks, id compaction, the kubelet
#131738 shape. Its equality with the reference cross product is test_merge_differential.py.
"""
from __future__ import annotations

from topologymanager.fast_merge import fast_merge_hints, produced_masks, superset_differences, superset_sums
from topologymanager.hint import TopologyHint
from topologymanager.numa_info import NUMAInfo


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
