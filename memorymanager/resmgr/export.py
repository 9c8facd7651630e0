"""The `resources.sh` export: a backend's `export_resource_data` as a shell fragment.

One `NAME="value"` line per variable, sorted by name, the value double-quoted for a POSIX
shell (`\\`, `"`, `$` and backquote escaped; every other character, newlines included, as it is),
so that a shell sourcing the file (`. resources.sh`) gets exactly these values and runs nothing.
nri-plugins writes `%q` (Go's quoting) instead, which a shell reads differently: it leaves `$` and
backquotes live, and turns newlines, tabs and non-printable characters into backslash escapes the
shell keeps as two characters. A value no shell variable can hold (one with a NUL character) or that
is not text (a lone surrogate) is refused. The file is written atomically into the container's
folder with mode 0644.
"""
from __future__ import annotations

import os
import re
from typing import Mapping

from memorymanager.resmgr.durable import atomic_write
from memorymanager.resmgr.types import ExportedResources, PolicyError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SPECIAL = re.compile(r'([\\"$`])')


def shell_quote(value: str) -> str:
    """`value` inside double quotes, safe for a POSIX shell."""
    return '"' + _SPECIAL.sub(r"\\\1", value) + '"'


def format_exports(data: Mapping[str, str]) -> str:
    """The file's text: sorted `NAME="value"` lines; a name that is no shell variable name is refused."""
    lines = []
    for name in data:
        if not isinstance(name, str):
            raise PolicyError(f"cannot export {name!r}: a variable name must be a string")
    for name in sorted(data):
        if not _NAME.match(name):
            raise PolicyError(f"cannot export {name!r}: not a shell variable name")
        value = data[name]
        if not isinstance(value, str):
            raise PolicyError(f"cannot export {name}: value must be a string, got {type(value).__name__}")
        if "\0" in value:
            raise PolicyError(f"cannot export {name}: a shell variable cannot hold a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise PolicyError(f"cannot export {name}: not text (character {err.start} is a lone surrogate)") from None
        lines.append(f"{name}={shell_quote(value)}\n")
    return "".join(lines)


def write_exports(directory: str, data: Mapping[str, str]) -> str:
    """Write `<directory>/resources.sh` atomically (mode 0644); returns its path."""
    path = os.path.join(directory, ExportedResources)
    atomic_write(path, format_exports(data).encode(), 0o644)
    return path
