"""The `resources.sh` export: a backend's `export_resource_data` as a shell fragment.

One `NAME="value"` line per variable, sorted by name, the value double-quoted for a POSIX
shell (`\\`, `"`, `$` and backquote escaped), so that `. resources.sh` sets exactly these
variables and runs nothing. The file is written atomically into the container's folder.
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
    for name in sorted(data):
        if not _NAME.match(name):
            raise PolicyError(f"cannot export {name!r}: not a shell variable name")
        value = data[name]
        if not isinstance(value, str):
            raise PolicyError(f"cannot export {name}: value must be a string, got {type(value).__name__}")
        lines.append(f"{name}={shell_quote(value)}\n")
    return "".join(lines)


def write_exports(directory: str, data: Mapping[str, str]) -> str:
    """Write `<directory>/resources.sh` atomically (mode 0644); returns its path."""
    path = os.path.join(directory, ExportedResources)
    atomic_write(path, format_exports(data).encode(), 0o644)
    return path
