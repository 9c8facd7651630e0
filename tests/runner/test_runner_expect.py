"""Expectation shapes and comparison rules of the scenario runner (memorymanager.runner.expect)."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeinputs.errors import InputError
from memorymanager.runner.expect import MISSING, compare, validate_expect

BLOCK_A = {"numaAffinity": [0], "type": "memory", "size": 1024}
BLOCK_B = {"numaAffinity": [0, 1], "type": "hugepages-2Mi", "size": 2097152}


def paths(expect, actual):
    return [f.path for f in compare(expect, actual)]


@pytest.mark.parametrize(
    "expect, actual, failing",
    [
        # error is a substring; an error nobody expected is a failure of `error`
        ({"error": "unknown policy"}, {"error": 'unknown policy: "x"'}, []),
        ({"error": "unknown policy"}, {"error": None}, ["error"]),
        ({}, {"error": "boom"}, ["error"]),
        ({"admitted": True}, {"error": "boom", "admitted": True}, ["error"]),
        # error: null (contract 1.1): the step must not fail
        ({"error": None}, {"error": None}, []),
        ({"error": None}, {"error": "boom"}, ["error"]),
        ({"error": None, "admitted": True}, {"error": "boom", "admitted": True}, ["error"]),
        # exact leaves; a boolean never equals an integer
        ({"admitted": True}, {"error": None, "admitted": True}, []),
        ({"admitted": True}, {"error": None, "admitted": False}, ["admitted"]),
        ({"reason": "TopologyAffinityError"}, {"error": None, "reason": "TopologyAffinityErr"}, ["reason"]),
        # message is a substring
        ({"message": "Topology locality"}, {"error": None, "message": "Resources cannot be allocated with Topology locality"}, []),
        ({"message": "nope"}, {"error": None, "message": "Resources"}, ["message"]),
        # maps are checked on the written keys only
        ({"affinity": {}}, {"error": None, "affinity": {"c": {"numaAffinity": [0], "preferred": True}}}, []),
        ({"affinity": {"c": {"preferred": True}}}, {"error": None, "affinity": {"c": {"numaAffinity": [0], "preferred": True}}}, []),
        ({"affinity": {"c": {"numaAffinity": [1]}}}, {"error": None, "affinity": {"c": {"numaAffinity": [0], "preferred": True}}}, ["affinity.c.numaAffinity"]),
        # numaAffinity order matters
        ({"affinity": {"c": {"numaAffinity": [1, 0]}}}, {"error": None, "affinity": {"c": {"numaAffinity": [0, 1], "preferred": True}}}, ["affinity.c.numaAffinity"]),
        # null expects null or absent
        ({"affinity": {"c": {"numaAffinity": None}}}, {"error": None, "affinity": {"c": {"numaAffinity": None, "preferred": False}}}, []),
        ({"entries": {"gone": None}}, {"error": None, "entries": {}}, []),
        ({"entries": {"pod": None}}, {"error": None, "entries": {"pod": {"c": [BLOCK_A]}}}, ["entries.pod"]),
        # a key the step could not report
        ({"machineState": {}}, {"error": "the node is not running"}, ["error", "machineState"]),
    ],
)
def test_compare_table(expect, actual, failing):
    assert paths(expect, actual) == failing


def test_hint_lists_compare_as_sets():
    h0 = {"numaAffinity": [0], "preferred": True}
    h1 = {"numaAffinity": [1], "preferred": True}
    h01 = {"numaAffinity": [0, 1], "preferred": False}
    actual = {"error": None, "hints": {"c": {"memory": [h0, h1, h01]}}}
    assert paths({"hints": {"c": {"memory": [h01, h1, h0]}}}, actual) == []
    assert paths({"hints": {"c": {"memory": [h0, h1]}}}, actual) == ["hints.c.memory"]
    # a nil list (no preference) differs from an empty list (no placement possible)
    assert paths({"hints": {"c": {"memory": None}}}, {"error": None, "hints": {"c": {"memory": []}}}) == ["hints.c.memory"]
    # a nil map differs from an empty map
    assert paths({"hints": {"c": {}}}, {"error": None, "hints": {"c": None}}) == ["hints.c"]
    assert paths({"hints": {"c": None}}, {"error": None, "hints": {"c": None}}) == []


def test_block_lists_compare_as_multisets():
    actual = {"error": None, "memory": {"c": [BLOCK_A, BLOCK_B, BLOCK_A]}}
    assert paths({"memory": {"c": [BLOCK_A, BLOCK_A, BLOCK_B]}}, actual) == []
    assert paths({"memory": {"c": [BLOCK_A, BLOCK_B]}}, actual) == ["memory.c"]
    assert paths({"allocatable": [BLOCK_B, BLOCK_A]}, {"error": None, "allocatable": [BLOCK_A, BLOCK_B]}) == []


def test_reader_lists_treat_null_as_empty_but_checkpoint_lists_do_not():
    assert paths({"memory": {"c": []}}, {"error": None, "memory": {"c": None}}) == []
    assert paths({"memory": {"c": None}}, {"error": None, "memory": {"c": []}}) == []
    assert paths({"allocatable": []}, {"error": None, "allocatable": []}) == []
    assert paths({"entries": {"p": {"c": []}}}, {"error": None, "entries": {"p": {"c": None}}}) == ["entries.p.c"]


def test_machine_state_cells_exact_and_partial_tables():
    actual = {
        "error": None,
        "machineState": {
            "0": {
                "numberOfAssignments": 2,
                "memoryMap": {"memory": {"total": 10, "systemReserved": 1, "allocatable": 9, "reserved": 4, "free": 5}},
                "cells": [0, 1],
            }
        },
    }
    assert paths({"machineState": {"0": {"memoryMap": {"memory": {"free": 5}}, "cells": [0, 1]}}}, actual) == []
    assert paths({"machineState": {"0": {"cells": [1, 0]}}}, actual) == ["machineState.0.cells"]
    assert paths({"machineState": {"0": {"memoryMap": {"memory": {"free": 6}}}}}, actual) == [
        "machineState.0.memoryMap.memory.free"
    ]
    assert paths({"machineState": {"1": None}}, actual) == []


@pytest.mark.parametrize(
    "op, expect, where, reason",
    [
        ("admit", {"hint": {}}, "e.hint", 'unknown key; did you mean "hints"?'),
        ("admit", {"admited": True}, "e.admited", 'unknown key; did you mean "admitted"?'),
        ("check", {"admitted": True}, "e.admitted", 'a "check" step does not report this key'),
        ("remove", {"hints": {}}, "e.hints", 'a "remove" step does not report this key'),
        ("admit", {"admitted": "yes"}, "e.admitted", "expected a boolean (true or false), got string 'yes'"),
        ("admit", {"affinity": {"c": {"numaAfinity": [0]}}}, "e.affinity.c.numaAfinity", 'unknown key; did you mean "numaAffinity"?'),
        ("admit", {"affinity": {"c": {"numaAffinity": [-1]}}}, "e.affinity.c.numaAffinity[0]", "must be >= 0, got -1"),
        ("admit", {"memory": {"c": [{"numaAffinity": [0], "type": "memory"}]}}, "e.memory.c[0].size", "required key is missing"),
        ("admit", {"memory": {"c": [{"numaAffinity": [0], "type": "memory", "size": "1Gi"}]}}, "e.memory.c[0].size", "expected an integer, got string '1Gi'"),
        ("hints", {"hints": {"c": {"memory": [{"numaAffinity": [0]}]}}}, "e.hints.c.memory[0].preferred", "required key is missing"),
        ("check", {"machineState": {"zero": {}}}, "e.machineState.zero", 'expected a NUMA node id written as a string ("0")'),
        ("check", {"entries": []}, "e.entries", "expected a map, got list"),
        ("check", [], "e", "expected a map, got list"),
    ],
)
def test_validate_expect_errors(op, expect, where, reason):
    with pytest.raises(InputError) as info:
        validate_expect(expect, op, "e")
    assert info.value.where == where
    assert info.value.reason == reason


def test_validate_expect_accepts_every_key_of_an_admit_step():
    expect = {
        "error": "x", "admitted": False, "reason": "r", "message": "m",
        "affinity": {"c": {"numaAffinity": None, "preferred": False}},
        "hints": {"c": {"memory": [{"numaAffinity": [0], "preferred": True}], "cpu": None}, "d": None},
        "memory": {"c": [BLOCK_A], "d": None},
        "numaNodes": {"c": [0, 1], "d": None},
        "machineState": {"0": {"numberOfAssignments": 1, "memoryMap": {"memory": {"total": 1}}, "cells": [0]}},
        "entries": {"p": {"c": [BLOCK_A]}, "q": None},
        "podEntries": {"p": {"memoryBlocks": [BLOCK_B]}},
        "allocatable": [BLOCK_A],
    }
    assert validate_expect(expect, "admit", "e") == expect
    assert validate_expect(None, "check", "e") == {}


# ----- invariants -----

NUMA = st.one_of(st.none(), st.lists(st.integers(0, 7), max_size=4))
BLOCKS = st.lists(
    st.fixed_dictionaries({"numaAffinity": NUMA, "type": st.sampled_from(["memory", "hugepages-2Mi"]), "size": st.integers(0, 1 << 40)}),
    max_size=5,
)
HINTS = st.lists(st.fixed_dictionaries({"numaAffinity": NUMA, "preferred": st.booleans()}), max_size=5)
NAMES = st.sampled_from(["a", "b", "c"])
ACTUALS = st.fixed_dictionaries(
    {
        "error": st.one_of(st.none(), st.text(max_size=10)),
        "admitted": st.booleans(),
        "memory": st.dictionaries(NAMES, st.one_of(st.none(), BLOCKS)),
        "hints": st.dictionaries(NAMES, st.one_of(st.none(), st.dictionaries(st.sampled_from(["memory", "cpu"]), st.one_of(st.none(), HINTS)))),
        "allocatable": BLOCKS,
        "entries": st.dictionaries(NAMES, st.dictionaries(NAMES, st.one_of(st.none(), BLOCKS))),
    }
)


@settings(max_examples=150, deadline=None)
@given(ACTUALS, st.randoms(use_true_random=False))
def test_an_observation_always_matches_itself_and_its_shuffles(actual, rnd: random.Random):
    expect = dict(actual)
    if expect["error"] is None:
        del expect["error"]
    assert compare(expect, actual) == []

    def shuffled(lst):
        lst = list(lst)
        rnd.shuffle(lst)
        return lst

    reordered = dict(expect)
    reordered["allocatable"] = shuffled(actual["allocatable"])
    reordered["memory"] = {k: (None if v is None else shuffled(v)) for k, v in actual["memory"].items()}
    reordered["hints"] = {
        k: (None if m is None else {r: (None if l is None else shuffled(l)) for r, l in m.items()})
        for k, m in actual["hints"].items()
    }
    assert compare(reordered, actual) == []


@settings(max_examples=100, deadline=None)
@given(BLOCKS, BLOCKS)
def test_multiset_comparison_is_exactly_counter_equality(a, b):
    from collections import Counter

    def key(block):
        return (None if block["numaAffinity"] is None else tuple(block["numaAffinity"]), block["type"], block["size"])

    same = Counter(map(key, a)) == Counter(map(key, b))
    if not a and not b:
        same = True
    assert (compare({"allocatable": a}, {"error": None, "allocatable": b}) == []) == same


def test_missing_marker_is_reported_as_null_in_json():
    [failure] = compare({"admitted": True}, {"error": None})
    assert failure.actual is MISSING
    assert failure.to_dict() == {"path": "admitted", "expected": True, "actual": None}
