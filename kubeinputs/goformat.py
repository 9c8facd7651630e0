"""Go's fmt verbs that reach kubelet's error messages: %q for strings and %v for string maps.

Messages must match kubelet byte for byte, so quoting follows strconv.Quote and
maps print as Go prints them (`map[k1:v1 k2:v2]`, keys sorted). This module is the
one home of that emulation: every package imports `go_quote` from here.
"""
from __future__ import annotations

from typing import Mapping

__all__ = ["go_quote", "go_map_string"]

# The escapes strconv.Quote writes with a letter (or a backslash) instead of a number.
_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}


def _surrogate_bytes(code: int) -> bytes:
    """The bytes a lone surrogate of a Python string stands for.

    U+DC80..U+DCFF is how Python's `surrogateescape` error handler (file names, argv,
    environment) carries one undecodable byte 0x80..0xFF; any other surrogate is taken
    as its surrogatepass/WTF-8 encoding (three bytes ED xx xx).
    """
    if 0xDC80 <= code <= 0xDCFF:
        return bytes([code - 0xDC00])
    return chr(code).encode("utf-8", "surrogatepass")


def go_quote(s: str) -> str:
    r"""Go's %q / strconv.Quote of a string: double quotes, Go escapes, printable Unicode kept.

    Printable characters (Go's unicode.IsPrint, which matches str.isprintable plus the
    ASCII space) stay as they are; the named control characters get their letter escape;
    other code points below U+0080 print as `\xNN`, the rest as `\uNNNN` or `\UNNNNNNNN`.

    A Go string is bytes, a Python string is code points, so a lone surrogate (which no
    valid UTF-8 holds) needs a decision: it stands for the bytes it would have been
    decoded from, which are invalid UTF-8 in Go, and strconv.Quote writes each invalid
    byte as `\xNN`. The bytes are the surrogatepass (WTF-8) encoding, except that
    U+DC80..U+DCFF are single bytes 0x80..0xFF, as Python's surrogateescape decodes
    file names and command-line arguments:

    >>> print(go_quote("x\ud800y"))
    "x\xed\xa0\x80y"
    >>> print(go_quote("/var/lib/\udcff"))
    "/var/lib/\xff"
    >>> print(go_quote('tab\there "é" \u00a0 \x7f \U0001f600'))
    "tab\there \"é\" \u00a0 \x7f 😀"
    """
    out = ['"']
    for ch in s:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
            continue
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            out.extend(f"\\x{byte:02x}" for byte in _surrogate_bytes(code))
        elif ch == " " or ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_map_string(mapping: Mapping[str, object]) -> str:
    """A map[string]string printed with %v: `map[key:value ...]`, keys in sorted order."""
    return "map[" + " ".join(f"{key}:{mapping[key]}" for key in sorted(mapping)) + "]"
