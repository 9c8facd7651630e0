"""The JSON renderings of state and hints shared by the runner and the CLI."""
from __future__ import annotations

import json

import pytest

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
