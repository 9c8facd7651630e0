"""A small validator for the OpenAPI v3 subset CRD schemas use (type, format int64, required,
properties, items, anyOf, pattern, x-kubernetes-int-or-string); unknown fields are errors."""
from __future__ import annotations

import re
from typing import Any

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def problems(value: Any, schema: dict, path: str = "") -> list[str]:
    """Every way `value` breaks `schema`, as `path: reason` lines."""
    out: list[str] = []
    where = path or "(root)"
    if "anyOf" in schema:
        if all(problems(value, option, path) for option in schema["anyOf"]):
            out.append(f"{where}: matches none of anyOf")
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            return out + [f"{where}: expected an integer"]
        if schema.get("format") == "int64" and not -(1 << 63) <= value < (1 << 63):
            out.append(f"{where}: out of int64")
    elif kind is not None:
        if not isinstance(value, TYPES[kind]) or (kind != "boolean" and isinstance(value, bool)):
            return out + [f"{where}: expected {kind}"]
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        out.append(f"{where}: {value!r} does not match the pattern")
    if isinstance(value, dict) and "properties" in schema:
        for name in schema.get("required", []):
            if name not in value:
                out.append(f"{where}: missing required {name}")
        for name, item in value.items():
            if name not in schema["properties"]:
                out.append(f"{path}.{name}: not in the schema")
            else:
                out += problems(item, schema["properties"][name], f"{path}.{name}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out += problems(item, schema["items"], f"{path}[{i}]")
    return out
