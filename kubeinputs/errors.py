"""Input errors shared by every parser of user input (manifests, machine info, kubelet config, scenarios).

An `InputError` names the place of the bad value as a path (`steps[3].admit.spec.containers[0].resources`)
and says what is wrong with it, so a user never sees a traceback for a malformed file. The small helpers
below check the shape of decoded YAML/JSON values and build those paths.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

import yaml


class InputError(ValueError):
    """A malformed input value: `where` is its path, `reason` what is wrong; str() is "where: reason"."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(where, reason)
        self.where = where
        self.reason = reason

    def __str__(self) -> str:
        if not self.where:
            return self.reason
        if self.where.endswith(":"):
            return f"{self.where} {self.reason}"
        return f"{self.where}: {self.reason}"


def join_path(where: str, key: str) -> str:
    """The path of map entry `key` below `where` ("" is the document root; a "file:" prefix keeps its colon)."""
    if not where:
        return key
    if where.endswith(":"):
        return f"{where} {key}"
    return f"{where}.{key}"


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
    matches = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def check_keys(doc: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    """Refuse any key of `doc` not in `known`, naming its path and the closest known key."""
    known = set(known)
    for key in doc:
        if not isinstance(key, str):
            raise InputError(where or "(document)", f"keys must be strings, got {type_name(key)} {key!r}")
        if key not in known:
            hint = suggest(key, known)
            reason = "unknown key" + (f'; did you mean "{hint}"?' if hint else "")
            raise InputError(join_path(where, key), reason)


def expect_map(value: Any, where: str, what: str = "a map") -> dict:
    """`value` if it is a map (None counts as an empty map), else an InputError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(where or "(document)", f"expected {what}, got {type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            raise InputError(where or "(document)", f"keys must be strings, got {type_name(key)} {key!r}")
    return dict(value)


def expect_list(value: Any, where: str, what: str = "a list") -> list:
    """`value` if it is a list (None counts as an empty list), else an InputError."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise InputError(where or "(document)", f"expected {what}, got {type_name(value)}")
    return list(value)


def expect_str(value: Any, where: str, *, hint: str = "") -> str:
    """`value` if it is a string, else an InputError (with an optional hint appended)."""
    if not isinstance(value, str):
        raise InputError(where, f"expected a string, got {type_name(value)}" + (f"; {hint}" if hint else ""))
    return value


def expect_int(value: Any, where: str, *, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    """`value` if it is an integer (not a boolean, not a float) within the bounds, else an InputError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(where, f"expected an integer, got {type_name(value)} {value!r}")
    if minimum is not None and value < minimum:
        raise InputError(where, f"must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InputError(where, f"must be <= {maximum}, got {value}")
    return value


def expect_bool(value: Any, where: str) -> bool:
    """`value` if it is a boolean, else an InputError."""
    if not isinstance(value, bool):
        raise InputError(where, f"expected a boolean (true or false), got {type_name(value)} {value!r}")
    return value


def load_yaml_file(path: Union[str, Path]) -> Any:
    """The decoded YAML/JSON document in `path`, or an InputError naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(str(path), f"cannot read file: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise InputError(str(path), f"not UTF-8 text: {err}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise InputError(str(path), f"invalid YAML: {err}") from None
