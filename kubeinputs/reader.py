"""Reading and writing scenario documents (YAML; JSON is valid YAML).

Loading is PyYAML's safe loader, made strict about one thing YAML silently allows:
a key written twice in one map is an error (the second would hide the first).
Writing keeps key order and never sorts; YAML comments are not preserved.
"""
from __future__ import annotations

from typing import Any

import yaml

from kubeinputs.errors import InputError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    """A mapping node as a dict; a key seen twice is a ConstructorError."""
    loader.flatten_mapping(node)
    result: dict = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, "found an unhashable key", key_node.start_mark
            )
        if key in result:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
            )
        result[key] = loader.construct_object(value_node, deep=deep)
    return result


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_text(text: str, where: str = "") -> Any:
    """Parse one YAML document; a syntax error becomes an InputError with line and column."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if mark is not None:
            reason = f"not valid YAML: line {mark.line + 1}, column {mark.column + 1}: {problem}"
        else:
            reason = f"not valid YAML: {problem}"
        raise InputError(where or "(document)", reason) from None


def load_file(path: str) -> Any:
    """Read and parse a YAML/JSON file; unreadable files become an InputError."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError("(document)", f"cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError("(document)", f"not UTF-8 text: {exc.reason}") from None
    return load_text(text)


def _is_scalar(value: Any) -> bool:
    """A YAML scalar (null, string, number, boolean)."""
    return value is None or isinstance(value, (str, int, float, bool))


def _is_leaf(value: Any) -> bool:
    """A scalar or a list of scalars."""
    return _is_scalar(value) or (isinstance(value, list) and all(_is_scalar(v) for v in value))


class _Dumper(yaml.SafeDumper):
    """Block style, except small leaf structures (NUMA id lists, hints, blocks) on one line."""


def _represent_list(dumper: _Dumper, data: list) -> yaml.Node:
    """Lists of scalars inline (`[0, 1]`), others as blocks."""
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=all(map(_is_scalar, data)))


def _represent_dict(dumper: _Dumper, data: dict) -> yaml.Node:
    """Small maps of leaves inline (a hint, a block, a memory table), others as blocks."""
    flow = 0 < len(data) <= 6 and all(_is_leaf(v) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(dict, _represent_dict)


def dump_yaml(doc: Any) -> str:
    """YAML text of `doc`: keys in their current order, leaf structures inline, unicode kept."""
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
