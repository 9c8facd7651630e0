"""Shape checks for scenario documents: types, required keys, unknown keys with suggestions.

Every failure is an `InputError` whose `where` is the path of the bad value inside the
document (`steps[3].expect.hint`), so a user can find it without reading a traceback.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from kubeinputs.errors import InputError, suggest, type_name

__all__ = [
    "InputError", "check_keys", "expect_bool", "expect_int", "expect_int_list", "expect_list", "expect_map",
    "expect_str", "index", "join", "suggest", "type_name", "unknown_key_error",
]


def join(where: str, key: Any) -> str:
    """The path of `key` inside the map at `where` (top-level keys have no leading dot)."""
    return f"{where}.{key}" if where else str(key)


def index(where: str, i: int) -> str:
    """The path of item `i` of the list at `where`."""
    return f"{where}[{i}]"


def unknown_key_error(where: str, key: Any, allowed: Iterable[str]) -> InputError:
    """`<where>.<key>: unknown key; did you mean "x"?` (or the list of allowed keys)."""
    allowed = sorted(allowed)
    guess = suggest(str(key), allowed) if allowed else None
    if guess is not None:
        reason = f'unknown key; did you mean "{guess}"?'
    elif allowed:
        reason = "unknown key; expected one of: " + ", ".join(allowed)
    else:
        reason = "unknown key; no keys are allowed here"
    return InputError(join(where, key), reason)


def expect_map(value: Any, where: str, what: str = "a map") -> dict:
    """`value` itself when it is a map with string keys; else an InputError."""
    if not isinstance(value, Mapping):
        raise InputError(where, f"expected {what}, got {type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            raise InputError(join(where, key), f"map keys must be strings, got {type_name(key)}")
    return dict(value)


def check_keys(value: Mapping, where: str, allowed: Iterable[str], required: Iterable[str] = ()) -> None:
    """Refuse keys outside `allowed` (with a suggestion) and report missing `required` keys."""
    allowed = list(allowed)
    for key in value:
        if key not in allowed:
            raise unknown_key_error(where, key, allowed)
    for key in required:
        if key not in value:
            raise InputError(join(where, key), "required key is missing")


def expect_list(value: Any, where: str) -> list:
    """`value` when it is a list; else an InputError."""
    if not isinstance(value, list):
        raise InputError(where, f"expected a list, got {type_name(value)}")
    return value


def expect_str(value: Any, where: str) -> str:
    """`value` when it is a string; else an InputError."""
    if not isinstance(value, str):
        raise InputError(where, f"expected a string, got {type_name(value)}")
    return value


def expect_bool(value: Any, where: str) -> bool:
    """`value` when it is true or false; else an InputError."""
    if not isinstance(value, bool):
        raise InputError(where, f"expected true or false, got {type_name(value)}")
    return value


def expect_int(value: Any, where: str, minimum: Optional[int] = None) -> int:
    """`value` when it is an integer (not a boolean) no smaller than `minimum`; else an InputError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(where, f"expected an integer, got {type_name(value)}")
    if minimum is not None and value < minimum:
        raise InputError(where, f"must be at least {minimum}, got {value}")
    return value


def expect_int_list(value: Any, where: str, minimum: Optional[int] = None) -> list[int]:
    """A list of integers (each checked with `expect_int`)."""
    items = expect_list(value, where)
    return [expect_int(v, index(where, i), minimum) for i, v in enumerate(items)]
