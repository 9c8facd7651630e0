"""The JSON renderings of state and hints shared by the runner and the CLI."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorymanager.node.render import (
    assignments_to_obj,
    blocks_to_obj,
    hint_to_obj,
    machine_state_to_obj,
    pod_assignments_to_obj,
)
from state.types import Block, MemoryTable, NUMANodeState, PodEntry
from topologymanager.hint import TopologyHint

ENTRIES = {"pod": {"container1": [Block([0], "memory", 512)]}}
POD_ENTRIES = {"pod": PodEntry([Block([0], "memory", 512)])}
ENTRIES_JSON = '{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
POD_JSON = '{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}}'


def test_state_renderings_are_the_checkpoint_shapes() -> None:
    assert machine_state_to_obj({10: NUMANodeState(0, {}, [10]), 2: None}) == {
        "10": {"numberOfAssignments": 0, "memoryMap": {}, "cells": [10]},
        "2": None,
    }
    assert list(machine_state_to_obj({10: None, 2: None})) == ["10", "2"]  # Go sorts the key texts
    assert machine_state_to_obj({0: NUMANodeState(1, {"memory": MemoryTable(4, 1, 3, 1, 2)}, None)}) == {
        "0": {"numberOfAssignments": 1, "cells": None,
              "memoryMap": {"memory": {"total": 4, "systemReserved": 1, "allocatable": 3, "reserved": 1, "free": 2}}},
    }
    assert blocks_to_obj([Block([0, 1], "hugepages-2Mi", 4)]) == [
        {"numaAffinity": [0, 1], "type": "hugepages-2Mi", "size": 4}
    ]
    assert blocks_to_obj(None) is None
    assert assignments_to_obj(ENTRIES) == json.loads(ENTRIES_JSON)
    assert pod_assignments_to_obj(POD_ENTRIES) == json.loads(POD_JSON)


@pytest.mark.parametrize(
    "hint, expected",
    [
        (TopologyHint(), {"numaAffinity": None, "preferred": False}),
        (TopologyHint(None, True), {"numaAffinity": None, "preferred": True}),
        (TopologyHint(0b101, True), {"numaAffinity": [0, 2], "preferred": True}),
        (TopologyHint.of([3], False), {"numaAffinity": [3], "preferred": False}),
    ],
    ids=["zero hint", "nil affinity preferred", "two nodes", "one node"],
)
def test_hint_rendering(hint, expected) -> None:
    assert hint_to_obj(hint) == expected


NAMES = st.one_of(st.sampled_from(["memory", "hugepages-2Mi", "hugepages-1Gi", "10", "2", "pod-a"]), st.text(max_size=4))
UINT64 = st.integers(0, (1 << 64) - 1)
BLOCKS = st.one_of(st.none(), st.lists(st.builds(
    Block, st.one_of(st.none(), st.lists(st.integers(0, 63), max_size=4)), NAMES, UINT64), max_size=3))
MACHINE_STATES = st.one_of(st.none(), st.dictionaries(st.integers(0, 20), st.one_of(st.none(), st.builds(
    NUMANodeState, st.integers(0, 9),
    st.one_of(st.none(), st.dictionaries(NAMES, st.one_of(st.none(), st.builds(MemoryTable, UINT64, UINT64, UINT64,
                                                                                UINT64, UINT64)), max_size=3)),
    st.one_of(st.none(), st.lists(st.integers(0, 20), max_size=3)))), max_size=4))
ASSIGNMENTS = st.one_of(st.none(), st.dictionaries(NAMES, st.one_of(st.none(), st.dictionaries(NAMES, BLOCKS, max_size=3)),
                                                   max_size=3))
POD_ASSIGNMENTS = st.one_of(st.none(), st.dictionaries(NAMES, st.builds(PodEntry, BLOCKS), max_size=3))


@given(BLOCKS, MACHINE_STATES, ASSIGNMENTS, POD_ASSIGNMENTS)
@settings(max_examples=300, deadline=None)
def test_renderings_are_what_the_go_json_codec_writes(blocks, machine_state, assignments, pod_assignments) -> None:
    from kubeinputs import gojson
    from state.go_descriptors import BLOCKS as GO_BLOCKS
    from state.go_descriptors import CONTAINER_MEMORY_ASSIGNMENTS, NUMA_NODE_MAP, POD_MEMORY_ASSIGNMENTS

    for rendered, value, gotype in ((blocks_to_obj(blocks), blocks, GO_BLOCKS),
                                    (machine_state_to_obj(machine_state), machine_state, NUMA_NODE_MAP),
                                    (assignments_to_obj(assignments), assignments, CONTAINER_MEMORY_ASSIGNMENTS),
                                    (pod_assignments_to_obj(pod_assignments), pod_assignments, POD_MEMORY_ASSIGNMENTS)):
        expected = json.loads(gojson.marshal(value, gotype))
        assert rendered == expected
        assert json.dumps(rendered) == json.dumps(expected)  # the same key order too
