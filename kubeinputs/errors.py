"""Input errors and the typed field readers shared by every parser of user input.

Manifests, machine info, kubelet configuration and scenarios are all read with the same
helpers, so a malformed value is reported the same way everywhere: an `InputError` names
the file (when there is one), the path of the bad value inside the document
(`steps[3].admit.spec.containers[0].resources`) and what is wrong with it. A user never
sees a traceback for a malformed file. Loading files (YAML, JSON) is `kubeinputs.reader`.

Null: Kubernetes documents decode `null` the way Go does, as an empty map or list, so
`expect_map` and `expect_list` take None as empty by default; readers of documents where
null means something else (the scenario format) pass `null_is_empty=False`.
"""
from __future__ import annotations

from collections import abc
from typing import Any, Iterable, Mapping, Optional

ROOT = "(document)"  # the `where` of the document itself

# Unknown keys list the allowed ones when there are no more than this many (else only a suggestion).
_LIST_ALLOWED_KEYS_UP_TO = 12


class Error(Exception):
    """Base of every error this project raises to its callers for something they asked
    (a bad input, a node that cannot start or cannot do the operation, a bounded-work refusal);
    `memorymanager.Error` at the front door. kubelet's own refusals of a pod are not errors
    but answers (`Admission.admitted` False)."""


class InputError(Error, ValueError):
    """A malformed input: `file` (or None), `where` the path inside it, `reason` what is wrong.

    str() is `file: where: reason`, leaving out the parts that are empty.
    """

    def __init__(self, where: str, reason: str, file: Optional[str] = None) -> None:
        super().__init__(where, reason)
        self.where = where
        self.reason = reason
        self.file = None if file is None else str(file)

    def __str__(self) -> str:
        return ": ".join(part for part in (self.file, self.where, self.reason) if part)

    def in_file(self, file: str) -> "InputError":
        """The same error, naming `file` (an error that already names a file keeps it)."""
        if self.file is not None:
            return self
        return type(self)(self.where, self.reason, file)


# Characters of a value (or key) a message echoes; longer ones are cut, so that no input makes an error
# text huge (a gRPC status carries it in a header of at most 8 KiB).
MAX_ECHO_CHARS = 256


def echo(text: str) -> str:
    """`text` for a message: as it is, or its first MAX_ECHO_CHARS characters and how long it was."""
    if len(text) <= MAX_ECHO_CHARS:
        return text
    return f"{text[:MAX_ECHO_CHARS]}...({len(text):,} characters)"


def join_path(where: str, key: Any) -> str:
    """The path of map entry `key` below `where` ("" is the document root); a huge key is cut (`echo`)."""
    key = str(key)
    if len(key) > MAX_ECHO_CHARS:
        key = echo(key)
    return f"{where}.{key}" if where else key


def index_path(where: str, index: int) -> str:
    """The path of list element `index` below `where`."""
    return f"{where}[{index}]"


def type_name(value: Any) -> str:
    """The YAML name of a decoded value's type, for messages ("map", "list", "string", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def suggest(key: str, known: Iterable[str]) -> Optional[str]:
    """The known name closest to a misspelt `key`, or None when nothing is close."""
    import difflib  # only on the error path: slow to import

    matches = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_key_error(where: str, key: Any, allowed: Iterable[str]) -> InputError:
    """`<where>.<key>: unknown key; did you mean "x"?`, or the allowed keys when there are few."""
    allowed = sorted(allowed)
    guess = suggest(str(key), allowed) if allowed else None
    if guess is not None:
        reason = f'unknown key; did you mean "{guess}"?'
    elif not allowed:
        reason = "unknown key; no keys are allowed here"
    elif len(allowed) <= _LIST_ALLOWED_KEYS_UP_TO:
        reason = "unknown key; expected one of: " + ", ".join(allowed)
    else:
        reason = "unknown key"
    return InputError(join_path(where, key), reason)


def _check_string_keys(value: Mapping, where: str) -> None:
    """Refuse a map with a key that is not a string (YAML allows `1: x`; Kubernetes does not)."""
    for key in value:
        if not isinstance(key, str):
            raise InputError(where or ROOT, f"keys must be strings, got {type_name(key)} {key!r}")


def check_keys(doc: Mapping[str, Any], where: str, known: Iterable[str], required: Iterable[str] = ()) -> None:
    """Refuse any key of `doc` not in `known` (naming its path and the closest known key) and
    report the first `required` key that is missing."""
    _check_string_keys(doc, where)
    known = set(known)
    for key in doc:
        if key not in known:
            raise unknown_key_error(where, key, known)
    for key in required:
        if key not in doc:
            raise InputError(join_path(where, key), "required key is missing")


def expect_map(value: Any, where: str, what: str = "a map", *, null_is_empty: bool = True) -> dict:
    """`value` as a dict if it is a map with string keys (null: empty, unless `null_is_empty` is off)."""
    if value is None and null_is_empty:
        return {}
    if type(value) is not dict and not isinstance(value, abc.Mapping):  # typing.Mapping: slower, same answer
        raise InputError(where or ROOT, f"expected {what}, got {type_name(value)}")
    _check_string_keys(value, where)
    return dict(value)


def expect_list(value: Any, where: str, what: str = "a list", *, null_is_empty: bool = True) -> list:
    """`value` as a list if it is one (null: empty, unless `null_is_empty` is off)."""
    if value is None and null_is_empty:
        return []
    if not isinstance(value, (list, tuple)):
        raise InputError(where or ROOT, f"expected {what}, got {type_name(value)}")
    return list(value)


def expect_str(value: Any, where: str, *, hint: str = "") -> str:
    """`value` if it is a string, else an InputError (with an optional hint appended)."""
    if not isinstance(value, str):
        raise InputError(where, f"expected a string, got {type_name(value)}" + (f"; {hint}" if hint else ""))
    return value


def show_int(value: int) -> str:
    """An integer for a message: its digits, or `an integer of N digits` past 1,000 of them (Python
    refuses to print more than 4,300)."""
    if value.bit_length() > 3300:  # more than ~1,000 digits
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    return str(value)


def brief(value: Any) -> str:
    """repr() of a value for a message, integers of any length and long values shortened."""
    if isinstance(value, int) and not isinstance(value, bool):
        return show_int(value)
    if isinstance(value, (list, tuple, dict)) and len(value) > 50:
        return f"of {len(value):,} items"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - nested past the recursion limit, or a repr that raises
        return "(not shown)"
    return text if len(text) <= 200 else text[:200] + "..."


def describe(value: Any) -> str:
    """A value for a message, with its type: `null`, `integer 5`, `string 'x'`, `map {...}` (shortened)."""
    return "null" if value is None else f"{type_name(value)} {brief(value)}"


def expect_int(value: Any, where: str, *, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    """`value` if it is an integer (not a boolean, not a float) within the bounds, else an InputError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(where, f"expected an integer, got {type_name(value)} {brief(value)}")
    if minimum is not None and value < minimum:
        raise InputError(where, f"must be >= {minimum}, got {show_int(value)}")
    if maximum is not None and value > maximum:
        raise InputError(where, f"must be <= {maximum}, got {show_int(value)}")
    return value


def expect_int_list(value: Any, where: str, *, minimum: Optional[int] = None,
                    maximum: Optional[int] = None, null_is_empty: bool = True) -> list[int]:
    """A list of integers, each checked with `expect_int`."""
    items = expect_list(value, where, null_is_empty=null_is_empty)
    return [expect_int(v, index_path(where, i), minimum=minimum, maximum=maximum) for i, v in enumerate(items)]


def expect_bool(value: Any, where: str) -> bool:
    """`value` if it is a boolean, else an InputError."""
    if not isinstance(value, bool):
        raise InputError(where, f"expected a boolean (true or false), got {type_name(value)} {brief(value)}")
    return value
