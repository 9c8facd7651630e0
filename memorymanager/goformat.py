"""Go's fmt verbs that reach kubelet's error messages: %q for strings and %v for string maps.

Messages must match kubelet byte for byte, so quoting follows strconv.Quote and
maps print as Go prints them (`map[k1:v1 k2:v2]`, keys sorted).
"""
from __future__ import annotations

from typing import Mapping

_NAMED_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}


def go_quote(text: str) -> str:
    """strconv.Quote: double quotes, backslash escapes for quotes, controls and non-printables."""
    out = ['"']
    for char in text:
        if char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def go_map_string(mapping: Mapping[str, object]) -> str:
    """A map[string]string printed with %v: `map[key:value ...]`, keys in sorted order."""
    return "map[" + " ".join(f"{key}:{mapping[key]}" for key in sorted(mapping)) + "]"
