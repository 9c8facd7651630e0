"""Go type descriptors of the memory manager's state types.

The checkpoint's bytes and its checksum depend on Go's view of each value: the Go type
names (go-spew prints them), the JSON tags and `omitempty` (encoding/json), and whether a
value is a pointer, a map or a slice (nil versus empty). These descriptors carry that view
so that one generic JSON codec (gojson.py) and one generic go-spew printer (checksum.py)
serve every checkpoint version.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional



class GoType:
    """Base of the descriptors; `type_string` is Go's reflect.Type.String()."""

    @property
    def type_string(self) -> str:  # pragma: no cover - overridden
        """Go's reflect.Type.String() of this type."""
        raise NotImplementedError


@dataclass(frozen=True)
class GoInt(GoType):
    """A signed 64-bit integer kind (Go `int` on 64-bit platforms)."""

    name: str = "int"

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return self.name


@dataclass(frozen=True)
class GoUint(GoType):
    """An unsigned 64-bit integer kind (`uint64`, `checksum.Checksum`)."""

    name: str = "uint64"

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return self.name


@dataclass(frozen=True)
class GoString(GoType):
    """A string kind (`string`, `v1.ResourceName`)."""

    name: str = "string"

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return self.name


@dataclass(frozen=True)
class GoSlice(GoType):
    """A slice; None in Python is Go's nil slice."""

    elem: GoType
    name: Optional[str] = None

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return self.name or "[]" + self.elem.type_string


@dataclass(frozen=True)
class GoMap(GoType):
    """A map with int or string keys; None in Python is Go's nil map."""

    key: GoType
    elem: GoType
    name: Optional[str] = None

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return self.name or f"map[{self.key.type_string}]{self.elem.type_string}"


@dataclass(frozen=True)
class GoPtr(GoType):
    """A pointer to a struct; None in Python is Go's nil pointer."""

    elem: "GoStruct"

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return "*" + self.elem.type_string


@dataclass(frozen=True)
class GoField:
    """One struct field: Go name, JSON name, Python attribute, type and JSON options.

    `embedded` names the embedded struct a promoted field comes from (its Go field name),
    which encoding/json reports in error paths; `json` False is the tag `json:"-"`.
    """

    go_name: str
    json_name: str
    attr: str
    type: GoType
    omitempty: bool = False
    embedded: Optional[str] = None
    json: bool = True


@dataclass(frozen=True)
class GoStruct(GoType):
    """A struct: qualified Go name, fields in declaration order, and a zero-value factory."""

    name: str
    fields: tuple[GoField, ...]
    factory: Callable[[], Any] = field(compare=False)

    @property
    def type_string(self) -> str:
        """Go's reflect.Type.String() of this type."""
        return self.name

    @property
    def short_name(self) -> str:
        """reflect.Type.Name(): the name without its package, used in JSON error messages."""
        return self.name.rsplit(".", 1)[-1]

    def json_fields(self) -> tuple[GoField, ...]:
        """The fields encoding/json sees (tag `-` excluded)."""
        return tuple(f for f in self.fields if f.json)


INT = GoInt()
UINT64 = GoUint()
STRING = GoString()
RESOURCE_NAME = GoString("v1.ResourceName")
CHECKSUM = GoUint("checksum.Checksum")
INT_SLICE = GoSlice(INT)
