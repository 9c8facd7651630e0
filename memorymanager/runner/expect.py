"""A step's `expect`: its allowed shape, and how it is compared with what happened.

Rules (docs/scenario-format.md, "Expectations"): only the keys written are checked; maps are
checked on the keys written (a key written as null also matches a key that is absent);
leaf values match exactly; `error` and `message` are substrings (`error: null`, contract 1.1:
the step must not fail); hint lists compare as
sets; block lists (`memory`, `entries`, `podEntries`, `allocatable`) as multisets; other
lists (`numaAffinity`, `cells`, `numaNodes`) exactly; device ID lists (`devices`) as sets. For `memory` and `allocatable`
(kubelet's reader APIs) a null list and an empty list are the same; in `entries` and
`podEntries` (the checkpoint's own content) they are not.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from kubeinputs.errors import (InputError, check_keys, expect_bool, expect_int, expect_int_list, expect_list,
                               expect_map, expect_str, join_path, index_path, unknown_key_error)


class _Missing:
    """Marks a key that the actual result does not have."""

    def __repr__(self) -> str:
        return "<absent>"


MISSING = _Missing()


@dataclass
class Failure:
    """One expectation that did not hold: the value's path, and both sides."""

    path: str
    expected: Any
    actual: Any

    def to_dict(self) -> dict:
        """The `--json` shape; an absent actual value is reported as null."""
        return {"path": self.path, "expected": self.expected, "actual": None if self.actual is MISSING else self.actual}


class Spec:
    """One node of the expectation schema: validates the written value and compares it."""

    def validate(self, value: Any, where: str) -> None:
        """Raise InputError (at `where`) unless `value` is a written expectation of this shape."""
        raise NotImplementedError

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        """Append a Failure to `out` for every way `actual` does not meet `expected`."""
        raise NotImplementedError


class Scalar(Spec):
    """A string, boolean or integer that must be equal (a boolean never equals an integer)."""

    def __init__(self, kind: str, minimum: Optional[int] = None):
        self.kind = kind
        self.minimum = minimum

    def validate(self, value: Any, where: str) -> None:
        if self.kind == "str":
            expect_str(value, where)
        elif self.kind == "bool":
            expect_bool(value, where)
        else:
            expect_int(value, where, minimum=self.minimum)

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if type(expected) is not type(actual) or expected != actual:
            out.append(Failure(path, expected, actual))


class Substring(Spec):
    """A string that must occur inside the actual message."""

    def validate(self, value: Any, where: str) -> None:
        expect_str(value, where)

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if not isinstance(actual, str) or expected not in actual:
            out.append(Failure(path, expected, actual))


class IntList(Spec):
    """A list of NUMA ids that must match exactly, order included."""

    def validate(self, value: Any, where: str) -> None:
        expect_int_list(value, where, minimum=0, null_is_empty=False)

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if not isinstance(actual, list) or list(expected) != list(actual):
            out.append(Failure(path, expected, actual))


class Nullable(Spec):
    """`inner`, or null: null matches an actual null or absent value."""

    def __init__(self, inner: Spec, empty_is_null: bool = False):
        self.inner = inner
        self.empty_is_null = empty_is_null

    def validate(self, value: Any, where: str) -> None:
        if value is not None:
            self.inner.validate(value, where)

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if self.empty_is_null:
            expected = _none_if_empty(expected)
            actual = _none_if_empty(actual)
        if expected is None:
            if actual is not None and actual is not MISSING:
                out.append(Failure(path, None, actual))
            return
        if actual is None or actual is MISSING:
            out.append(Failure(path, expected, actual))
            return
        self.inner.compare(expected, actual, path, out)


def _none_if_empty(value: Any) -> Any:
    """An absent value or an empty list as None (for reader lists, where nil and empty are alike)."""
    if value is MISSING or (isinstance(value, list) and not value):
        return None
    return value


class MapOf(Spec):
    """A map with free keys (container names, pod UIDs, NUMA ids, resources), checked on written keys."""

    def __init__(self, value: Spec, key_kind: str = "name"):
        self.value = value
        self.key_kind = key_kind

    def validate(self, value: Any, where: str) -> None:
        value = expect_map(value, where, null_is_empty=False)
        for key, item in value.items():
            if self.key_kind == "numa" and not key.isdigit():
                raise InputError(join_path(where, key), 'expected a NUMA node id written as a string ("0")')
            self.value.validate(item, join_path(where, key))

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if not isinstance(actual, Mapping):
            out.append(Failure(path, expected, actual))
            return
        for key, item in expected.items():
            self.value.compare(item, actual.get(key, MISSING), join_path(path, key), out)


class Record(Spec):
    """A map with fixed field names; written fields are compared, `required` ones must be written."""

    def __init__(self, fields: dict[str, Spec], required: tuple[str, ...] = ()):
        self.fields = fields
        self.required = required

    def validate(self, value: Any, where: str) -> None:
        value = expect_map(value, where, null_is_empty=False)
        check_keys(value, where, self.fields, self.required)
        for key, item in value.items():
            self.fields[key].validate(item, join_path(where, key))

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if not isinstance(actual, Mapping):
            out.append(Failure(path, expected, actual))
            return
        for key, item in expected.items():
            self.fields[key].compare(item, actual.get(key, MISSING), join_path(path, key), out)


def _freeze(value: Any) -> Any:
    """A hashable copy of a JSON-like value (for set and multiset comparison)."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, bool):
        return ("bool", value)
    return value


class Collection(Spec):
    """A list of fully written items compared without order: as a set or as a multiset."""

    def __init__(self, item: Record, multiset: bool):
        self.item = item
        self.multiset = multiset

    def validate(self, value: Any, where: str) -> None:
        items = expect_list(value, where, null_is_empty=False)
        for i, item in enumerate(items):
            where_i = index_path(where, i)
            self.item.validate(item, where_i)
            missing = [k for k in self.item.fields if k not in item]
            if missing:
                raise InputError(join_path(where_i, missing[0]), "required key is missing")

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if not isinstance(actual, list):
            out.append(Failure(path, expected, actual))
            return
        if self.multiset:
            same = Counter(map(_freeze, expected)) == Counter(map(_freeze, actual))
        else:
            same = set(map(_freeze, expected)) == set(map(_freeze, actual))
        if not same:
            out.append(Failure(path, expected, actual))


class HintListOrFamily(Spec):
    """A hint list (compared as a set), or, for a large machine's hint family, its summary map
    `{count, preferredWidth, best, numaNodes}` (checked on the keys written)."""

    def __init__(self, hints: Collection, family: Record):
        self.hints = hints
        self.family = family

    def validate(self, value: Any, where: str) -> None:
        if isinstance(value, Mapping):
            self.family.validate(value, where)
        else:
            self.hints.validate(value, where)

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        (self.family if isinstance(expected, Mapping) else self.hints).compare(expected, actual, path, out)


NUMA_IDS = Nullable(IntList())
HINT = Record({"numaAffinity": NUMA_IDS, "preferred": Scalar("bool")})
BLOCK = Record(
    {"numaAffinity": NUMA_IDS, "type": Scalar("str"), "size": Scalar("int", minimum=0)},
    required=("numaAffinity", "type", "size"),
)
HINT_LIST = HintListOrFamily(
    Collection(HINT, multiset=False),
    Record({"count": Nullable(Scalar("int", minimum=0)), "preferredWidth": Nullable(Scalar("int", minimum=0)),
            "best": Nullable(HINT), "numaNodes": Scalar("int", minimum=0)}),
)
READER_BLOCKS = Nullable(Collection(BLOCK, multiset=True), empty_is_null=True)
CHECKPOINT_BLOCKS = Nullable(Collection(BLOCK, multiset=True))
U64 = Scalar("int", minimum=0)
MEMORY_TABLE = Record(
    {"total": U64, "systemReserved": U64, "allocatable": U64, "reserved": U64, "free": U64}
)
NODE_STATE = Record(
    {
        "numberOfAssignments": Scalar("int"),
        "memoryMap": Nullable(MapOf(Nullable(MEMORY_TABLE))),
        "cells": Nullable(IntList()),
    }
)

class StringSet(Spec):
    """A list of strings (device IDs) compared as a set."""

    def validate(self, value: Any, where: str) -> None:
        items = expect_list(value, where, null_is_empty=False)
        seen: set[str] = set()
        for i, item in enumerate(items):
            expect_str(item, index_path(where, i))
            if item in seen:
                raise InputError(index_path(where, i), f"{item!r} is listed twice")
            seen.add(item)

    def compare(self, expected: Any, actual: Any, path: str, out: list[Failure]) -> None:
        if not isinstance(actual, list) or set(expected) != set(actual):
            out.append(Failure(path, expected, actual))


# Every expectation key, its shape and comparison rule.
EXPECT_KEYS: dict[str, Spec] = {
    "error": Nullable(Substring()),  # a substring of the message; null: the step must not fail
    "admitted": Scalar("bool"),
    "reason": Scalar("str"),
    "message": Substring(),
    "affinity": MapOf(Nullable(HINT)),
    "hints": MapOf(Nullable(MapOf(Nullable(HINT_LIST)))),
    "memory": MapOf(READER_BLOCKS),
    "machineState": MapOf(Nullable(NODE_STATE), key_kind="numa"),
    "entries": MapOf(Nullable(MapOf(CHECKPOINT_BLOCKS))),
    "podEntries": MapOf(Nullable(Record({"memoryBlocks": CHECKPOINT_BLOCKS}))),
    "allocatable": READER_BLOCKS,
    "numaNodes": MapOf(Nullable(IntList())),
    "cpus": MapOf(Nullable(Scalar("str"))),  # 1.2: the CPU manager's exclusive CPUs ("" = the shared pool)
    "defaultCpuSet": Scalar("str"),  # 1.2: the shared pool
    "devices": MapOf(Nullable(MapOf(Nullable(StringSet())))),  # 1.2: device IDs by resource
}

# Keys every step can report; the rest only for some operations.
COMMON_KEYS = ("error", "affinity", "memory", "numaNodes", "machineState", "entries", "podEntries", "allocatable",
               "cpus", "defaultCpuSet", "devices")
KEYS_BY_OP: dict[str, tuple[str, ...]] = {
    "start": COMMON_KEYS,
    "admit": COMMON_KEYS + ("admitted", "reason", "message", "hints"),
    "hints": COMMON_KEYS + ("hints",),
    "remove": COMMON_KEYS,
    "restart": COMMON_KEYS,
    "check": COMMON_KEYS,
}


def validate_expect(value: Any, op: str, where: str) -> dict:
    """Check an `expect` map for a step of operation `op`; returns it as a dict."""
    if value is None:
        return {}
    value = expect_map(value, where, null_is_empty=False)
    allowed = KEYS_BY_OP[op]
    for key, item in value.items():
        if key not in EXPECT_KEYS:
            raise unknown_key_error(where, key, EXPECT_KEYS)
        if key not in allowed:
            raise InputError(join_path(where, key), f'a "{op}" step does not report this key')
        EXPECT_KEYS[key].validate(item, join_path(where, key))
    return value


def compare(expect: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Failure]:
    """Every failed expectation of a step; an error nobody expected is a failure of `error`."""
    out: list[Failure] = []
    for key, expected in expect.items():
        EXPECT_KEYS[key].compare(expected, actual.get(key, MISSING), key, out)
    if "error" not in expect and actual.get("error") is not None:
        out.insert(0, Failure("error", None, actual["error"]))
    return out
