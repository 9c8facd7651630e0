"""JSON exactly as Go's encoding/json reads and writes the checkpoint.

Python's json module differs from Go where it matters for a checkpoint: it accepts NaN
and Infinity, decodes lone surrogates, reports other error texts, and knows nothing of
Go's struct semantics. This module mirrors Go instead:

* `check_valid` is Go's scanner: the same accepted syntax and the same SyntaxError texts
  (`unexpected end of JSON input`, `invalid character 'x' looking for beginning of value`, ...);
* `unmarshal` decodes into a pre-initialised value the way json.Unmarshal does: field names
  matched exactly, then case-insensitively; unknown fields ignored; `null` sets maps, slices
  and pointers to nil and leaves other kinds alone; duplicate keys decode again into the same
  value (maps merge, slices reuse their elements); type errors are collected and the first one
  is returned after the whole document has been decoded;
* `marshal` is json.Marshal: compact, fields in declaration order, map keys sorted as strings,
  `omitempty`, nil as `null`, and Go's string escaping (HTML characters, U+2028/U+2029).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from kubeinputs.collector import collector_paused
from kubeinputs.gotypes import GoInt, GoMap, GoPtr, GoSlice, GoString, GoStruct, GoType, GoUint

MAX_NESTING_DEPTH = 10000
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class GoJSONError(ValueError):
    """An error with the exact text Go's encoding/json gives."""


class JSONSyntaxError(GoJSONError):
    """Go's *json.SyntaxError; `offset` counts the bytes read when it was found."""

    def __init__(self, msg: str, offset: int):
        """Record the message and its details."""
        super().__init__(msg)
        self.offset = offset


class UnmarshalTypeError(GoJSONError):
    """Go's *json.UnmarshalTypeError: a JSON value that does not fit the Go type."""

    def __init__(self, value: str, type_string: str, struct: str = "", field: str = ""):
        """Record the message and its details."""
        self.value, self.type_string, self.struct, self.field = value, type_string, struct, field
        if struct or field:
            text = f"json: cannot unmarshal {value} into Go struct field {struct}.{field} of type {type_string}"
        else:
            text = f"json: cannot unmarshal {value} into Go value of type {type_string}"
        super().__init__(text)


# ---------------------------------------------------------------------------------------
# scanner (syntax check with Go's messages)

_SPACE = frozenset(b" \t\r\n")
_NOT_SPACE = re.compile(rb"[^ \t\r\n]")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")


def _go_is_print(ch: str) -> bool:
    """unicode.IsPrint for one character of U+0000..U+00FF (all quote_char needs)."""
    cp = ord(ch)
    if cp < 0x20 or 0x7F <= cp <= 0x9F:
        return False
    return cp not in (0xA0, 0xAD)


def quote_char(c: int) -> str:
    """Go's quoteChar: a byte shown as a quoted character literal in error messages."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    ch = chr(c)  # Go converts the byte to the rune of the same value
    special = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\"}
    if ch in special:
        body = special[ch]
    elif _go_is_print(ch):
        body = ch
    elif c < 0x20 or c == 0x7F:
        body = f"\\x{c:02x}"
    else:
        body = f"\\u{c:04x}"
    return "'" + body + "'"


class _Scanner:
    """Go's JSON scanner state machine, byte by byte."""

    def __init__(self) -> None:
        """Record the message and its details."""
        self.step = self.begin_value
        self.parse_state: list[int] = []  # 0 object key, 1 object value, 2 array value
        self.end_top = False
        self.err: Optional[JSONSyntaxError] = None
        self.bytes = 0

    def error(self, c: int, context: str) -> None:
        """Stop with Go's `invalid character ... <context>` error."""
        self.step = self.state_error
        self.err = JSONSyntaxError(f"invalid character {quote_char(c)} {context}", self.bytes)

    def state_error(self, c: int) -> None:
        """After an error every byte is ignored."""
        return None

    def push(self, state: int) -> bool:
        """Enter an object or array; Go refuses nesting deeper than 10000."""
        self.parse_state.append(state)
        if len(self.parse_state) > MAX_NESTING_DEPTH:
            self.step = self.state_error
            self.err = JSONSyntaxError("exceeded max depth", self.bytes)
            return False
        return True

    def begin_value_or_empty(self, c: int) -> None:
        """After '[': a value or ']'."""
        if c in _SPACE:
            return
        if c == ord("]"):
            self.end_value(c)
            return
        self.begin_value(c)

    def begin_value(self, c: int) -> None:
        """Where a value must start."""
        if c in _SPACE:
            return
        if c == ord("{"):
            if self.push(0):
                self.step = self.begin_string_or_empty
        elif c == ord("["):
            if self.push(2):
                self.step = self.begin_value_or_empty
        elif c == ord('"'):
            self.step = self.in_string
        elif c == ord("-"):
            self.step = self.neg
        elif c == ord("0"):
            self.step = self.zero
        elif ord("1") <= c <= ord("9"):
            self.step = self.digits
        elif c == ord("t"):
            self.step = self._literal("true", 1)
        elif c == ord("f"):
            self.step = self._literal("false", 1)
        elif c == ord("n"):
            self.step = self._literal("null", 1)
        else:
            self.error(c, "looking for beginning of value")

    def begin_string_or_empty(self, c: int) -> None:
        """After '{': a key or '}'."""
        if c in _SPACE:
            return
        if c == ord("}"):
            self.parse_state[-1] = 1
            self.end_value(c)
            return
        self.begin_string(c)

    def begin_string(self, c: int) -> None:
        """Where an object key must start."""
        if c in _SPACE:
            return
        if c == ord('"'):
            self.step = self.in_string
            return
        self.error(c, "looking for beginning of object key string")

    def end_value(self, c: int) -> None:
        """After a complete value: ':', ',', '}' or ']' depending on the container."""
        if not self.parse_state:
            self.step = self.end_top_state
            self.end_top = True
            self.end_top_state(c)
            return
        if c in _SPACE:
            self.step = self.end_value
            return
        ps = self.parse_state[-1]
        if ps == 0:
            if c == ord(":"):
                self.parse_state[-1] = 1
                self.step = self.begin_value
                return
            self.error(c, "after object key")
        elif ps == 1:
            if c == ord(","):
                self.parse_state[-1] = 0
                self.step = self.begin_string
                return
            if c == ord("}"):
                self.pop()
                return
            self.error(c, "after object key:value pair")
        else:
            if c == ord(","):
                self.step = self.begin_value
                return
            if c == ord("]"):
                self.pop()
                return
            self.error(c, "after array element")

    def pop(self) -> None:
        """Leave an object or array."""
        self.parse_state.pop()
        if not self.parse_state:
            self.step = self.end_top_state
            self.end_top = True
        else:
            self.step = self.end_value

    def end_top_state(self, c: int) -> None:
        """After the top-level value only whitespace may follow."""
        if c not in _SPACE:
            self.error(c, "after top-level value")

    def in_string(self, c: int) -> None:
        """Inside a string literal: control characters are refused."""
        if c == ord('"'):
            self.step = self.end_value
        elif c == ord("\\"):
            self.step = self.in_string_esc
        elif c < 0x20:
            self.error(c, "in string literal")

    def in_string_esc(self, c: int) -> None:
        """After a backslash in a string."""
        if c in b'bfnrt\\/"':
            self.step = self.in_string
        elif c == ord("u"):
            self.step = self._esc_u(0)
        else:
            self.error(c, "in string escape code")

    def _esc_u(self, seen: int):
        """The four hex digits of a \\u escape."""
        def state(c: int) -> None:
            """One step of this sub-state."""
            if c in _HEX:
                self.step = self.in_string if seen == 3 else self._esc_u(seen + 1)
            else:
                self.error(c, "in \\u hexadecimal character escape")

        return state

    def neg(self, c: int) -> None:
        """After '-': a digit must follow."""
        if c == ord("0"):
            self.step = self.zero
        elif ord("1") <= c <= ord("9"):
            self.step = self.digits
        else:
            self.error(c, "in numeric literal")

    def digits(self, c: int) -> None:
        """Inside the integer part of a number."""
        if c in _DIGITS:
            return
        self.zero(c)

    def zero(self, c: int) -> None:
        """After a leading 0 (or the integer digits): '.', an exponent, or the end."""
        if c == ord("."):
            self.step = self.dot
        elif c in b"eE":
            self.step = self.exp
        else:
            self.end_value(c)

    def dot(self, c: int) -> None:
        """After the decimal point: a digit must follow."""
        if c in _DIGITS:
            self.step = self.dot0
        else:
            self.error(c, "after decimal point in numeric literal")

    def dot0(self, c: int) -> None:
        """Inside the fraction digits."""
        if c in _DIGITS:
            return
        if c in b"eE":
            self.step = self.exp
            return
        self.end_value(c)

    def exp(self, c: int) -> None:
        """After 'e': a sign or a digit."""
        if c in b"+-":
            self.step = self.exp_sign
            return
        self.exp_sign(c)

    def exp_sign(self, c: int) -> None:
        """After the exponent sign: a digit must follow."""
        if c in _DIGITS:
            self.step = self.exp0
        else:
            self.error(c, "in exponent of numeric literal")

    def exp0(self, c: int) -> None:
        """Inside the exponent digits."""
        if c in _DIGITS:
            return
        self.end_value(c)

    def _literal(self, word: str, index: int):
        """Inside true, false or null, expecting the next letter."""
        def state(c: int) -> None:
            """One step of this sub-state."""
            want = word[index]
            if c != ord(want):
                self.error(c, f"in literal {word} (expecting '{want}')")
            elif index + 1 == len(word):
                self.step = self.end_value
            else:
                self.step = self._literal(word, index + 1)

        return state

    def eof(self) -> None:
        """The end of input: complete values are fine, anything else is `unexpected end of JSON input`."""
        if self.err is not None or self.end_top:
            return
        self.step(ord(" "))
        if self.end_top or self.err is not None:
            return
        self.err = JSONSyntaxError("unexpected end of JSON input", self.bytes)


def check_valid(data: bytes) -> None:
    """Go's checkValid: raise JSONSyntaxError with Go's message unless `data` is one JSON value."""
    scanner = _Scanner()
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        scanner.bytes += 1
        scanner.step(c)
        if scanner.err is not None:
            raise scanner.err
        i += 1
        if c in _SPACE and i < n and data[i] in _SPACE:
            # after one blank every state ignores further blanks (or keeps them as string content)
            found = _NOT_SPACE.search(data, i)
            j = n if found is None else found.start()
            scanner.bytes += j - i
            i = j
    scanner.eof()
    if scanner.err is not None:
        raise scanner.err


# ---------------------------------------------------------------------------------------
# parse tree (input already validated)

@dataclass
class Node:
    """A parsed JSON value: kind is object/array/string/number/true/false/null.

    Objects keep every member in order (duplicates included) as (key, Node) pairs;
    numbers keep their literal text.
    """

    kind: str
    value: Any = None


def go_decode_rune(b: bytes, i: int) -> tuple[Optional[int], int]:
    """utf8.DecodeRune: (code point, size), or (None, 1) for an invalid byte."""
    c = b[i]
    if c < 0x80:
        return c, 1
    n = len(b)
    if 0xC2 <= c <= 0xDF:
        size, lo, hi = 2, 0x80, 0xBF
    elif 0xE0 <= c <= 0xEF:
        size = 3
        lo, hi = (0xA0, 0xBF) if c == 0xE0 else (0x80, 0x9F) if c == 0xED else (0x80, 0xBF)
    elif 0xF0 <= c <= 0xF4:
        size = 4
        lo, hi = (0x90, 0xBF) if c == 0xF0 else (0x80, 0x8F) if c == 0xF4 else (0x80, 0xBF)
    else:
        return None, 1
    if i + size > n or not lo <= b[i + 1] <= hi:
        return None, 1
    for k in range(2, size):
        if not 0x80 <= b[i + k] <= 0xBF:
            return None, 1
    return ord(b[i:i + size].decode("utf-8")), size


def _hex4(b: bytes, i: int) -> int:
    """getu4: the value of `\\uXXXX` starting at i, or -1."""
    if i + 6 > len(b) or b[i] != ord("\\") or b[i + 1] != ord("u"):
        return -1
    try:
        return int(b[i + 2:i + 6].decode("ascii"), 16)
    except ValueError:
        return -1


def unquote(raw: bytes) -> str:
    """Go's unquote of a string literal's content: escapes, surrogate pairs, and U+FFFD
    for lone surrogates and for each invalid UTF-8 byte."""
    if b"\\" not in raw:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    out: list[str] = []
    i, n = 0, len(raw)
    simple = {ord("b"): "\b", ord("f"): "\f", ord("n"): "\n", ord("r"): "\r", ord("t"): "\t",
              ord("\\"): "\\", ord("/"): "/", ord('"'): '"'}
    while i < n:
        c = raw[i]
        if c == ord("\\"):
            e = raw[i + 1]
            if e in simple:
                out.append(simple[e])
                i += 2
                continue
            r = _hex4(raw, i)
            i += 6
            if 0xD800 <= r <= 0xDFFF:
                r2 = _hex4(raw, i)
                if 0xD800 <= r < 0xDC00 and 0xDC00 <= r2 <= 0xDFFF:
                    out.append(chr(0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00)))
                    i += 6
                    continue
                r = 0xFFFD
            out.append(chr(r))
            continue
        cp, size = go_decode_rune(raw, i)
        out.append("\ufffd" if cp is None else chr(cp))
        i += size
    return "".join(out)


def parse(data: bytes) -> Node:
    """Validate like Go, then build the tree (iteratively: nesting depth is not limited by Python).

    Valid UTF-8 that Python's C JSON decoder accepts is valid for Go's scanner too (same grammar,
    whitespace, escapes and number syntax; NaN and Infinity are refused through parse_constant), so
    that common case is built from the C decoder's result, linear and fast on tens of megabytes. Any
    other input (invalid UTF-8, a byte-order mark, a syntax error, nesting Python's decoder does not
    reach) takes Go's byte-by-byte scanner, which gives Go's exact error text."""
    tree = _fast_tree(data)
    if tree is not None:
        return tree
    check_valid(data)
    return _TreeBuilder(data).build()


class _Number(str):
    """A number's literal text, told apart from a string while the fast tree is built."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _same(text: str) -> str:
    """A string as it is (the `fix` of a text without surrogates)."""
    return text


def _node(value: Any, fix: Callable[[str], str] = _same) -> Node:
    """The Node of a value the C decoder produced (objects are Nodes already); `fix` turns the
    lone surrogates of strings into U+FFFD (the identity when the text has none)."""
    if isinstance(value, Node):
        return value
    if isinstance(value, _Number):
        return Node("number", str(value))
    if isinstance(value, str):
        # Go decodes a lone surrogate escape as U+FFFD; Python keeps the surrogate
        return Node("string", fix(value))
    if value is True:
        return Node("true", True)
    if value is False:
        return Node("false", False)
    if value is None:
        return Node("null", None)
    return Node("array", [_node(v, fix) for v in value])


def _no_surrogate(text: str) -> str:
    """Lone surrogates as U+FFFD, as Go decodes them."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def _object(pairs: list) -> Node:
    return Node("object", [(_no_surrogate(k), _node(v, _no_surrogate)) for k, v in pairs])


def _plain_object(pairs: list) -> Node:
    """`_object` for a text without any surrogate (the common case: no per-string regex)."""
    return Node("object", [(k, _node(v)) for k, v in pairs])


def _fast_tree(data: bytes) -> Optional[Node]:
    """The tree through Python's C decoder, or None when the input needs Go's own scanner."""
    import json

    if data[:3] == b"\xef\xbb\xbf":
        return None  # Go refuses a byte-order mark; Python's bytes decoding would skip it
    try:
        # each invalid byte becomes one lone surrogate, then U+FFFD as Go's decoder makes it (one per byte)
        text = data.decode("utf-8", errors="surrogateescape")
        # a surrogate comes only from an invalid byte or a \\u escape: with neither, no string needs fixing
        plain = "\\u" not in text and _LONE_SURROGATE.search(text) is None
        return _node(json.loads(text, object_pairs_hook=_plain_object if plain else _object, parse_int=_Number,
                                parse_float=_Number, parse_constant=_refuse_constant),
                     _same if plain else _no_surrogate)
    except (ValueError, RecursionError):
        return None


# the first byte of a literal -> its node kind, value and length
_LITERALS = {ord("t"): ("true", True, 4), ord("f"): ("false", False, 5), ord("n"): ("null", None, 4)}


class _TreeBuilder:
    """Builds the tree of already validated JSON token by token, with an explicit stack."""

    def __init__(self, data: bytes) -> None:
        """Nothing read yet."""
        self.data = data
        self.stack: list[tuple[Node, Optional[str]]] = []  # open containers, each with its pending object key
        self.root: Optional[Node] = None

    def build(self) -> Node:
        """Read every token and return the root value (separators carry no information once valid)."""
        data, i, n = self.data, 0, len(self.data)
        while i < n:
            c = data[i]
            if c in _SPACE:
                found = _NOT_SPACE.search(data, i)
                i = n if found is None else found.start()
            elif c in b",:":
                i += 1
            elif c in b"{[":
                self.stack.append((Node("object" if c == ord("{") else "array", []), None))
                i += 1
            elif c in b"}]":
                self.attach(self.stack.pop()[0])
                i += 1
            elif c == ord('"'):
                i = self.string(i)
            elif c in _LITERALS:
                kind, value, length = _LITERALS[c]
                self.attach(Node(kind, value))
                i += length
            else:
                i = self.number(i)
        assert self.root is not None
        return self.root

    def attach(self, node: Node) -> None:
        """Put a finished value into its container under the pending key (or make it the root)."""
        if not self.stack:
            self.root = node
            return
        container, key = self.stack[-1]
        if container.kind == "array":
            container.value.append(node)
        else:
            container.value.append((key, node))
            self.stack[-1] = (container, None)

    def string(self, i: int) -> int:
        """Read the string at i as the pending key or as a value; returns the index after it."""
        data = self.data
        j = i + 1
        while data[j] != ord('"'):
            j += 2 if data[j] == ord("\\") else 1
        text = unquote(data[i + 1:j])
        stack = self.stack
        if stack and stack[-1][0].kind == "object" and stack[-1][1] is None and _expects_key(data, j + 1):
            stack[-1] = (stack[-1][0], text)
        else:
            self.attach(Node("string", text))
        return j + 1

    def number(self, i: int) -> int:
        """Read the number at i, kept as its literal text; returns the index after it."""
        data, j = self.data, i
        while j < len(data) and data[j] in b"+-0123456789.eE":
            j += 1
        self.attach(Node("number", data[i:j].decode("ascii")))
        return j


def _expects_key(data: bytes, i: int) -> bool:
    """True when the string just read is an object key (a ':' follows)."""
    while data[i] in _SPACE:
        i += 1
    return data[i] == ord(":")


# ---------------------------------------------------------------------------------------
# decoding into Go-typed values

def _go_fold(s: str) -> str:
    """Go's foldName: ASCII upper-casing, plus the few non-ASCII runes that fold onto ASCII
    letters (U+017F long s, U+212A Kelvin sign, U+0130 and U+0131 dotted/dotless i)."""
    special = {"\u017f": "S", "\u212a": "K", "\u0130": "I", "\u0131": "I"}
    out = []
    for ch in s:
        if ch < "\x80":
            out.append(ch.upper())
        elif ch in special:
            out.append(special[ch])
        else:
            out.append(ch)  # cannot fold onto the ASCII field names used here
    return "".join(out)


_KIND_NAMES = {"object": "object", "array": "array", "string": "string", "number": "number",
               "true": "bool", "false": "bool"}


class _Decoder:
    """One json.Unmarshal: the error context (struct and field path) and the first saved error."""

    def __init__(self) -> None:
        """Record the message and its details."""
        self.saved: Optional[UnmarshalTypeError] = None
        self.struct: Optional[GoStruct] = None
        self.fields: list[str] = []
        self.stale: dict[int, tuple[list, list]] = {}  # id(list) -> (list, elements between len and cap)
        self.names: dict[int, tuple[dict, dict]] = {}  # id(struct type) -> its field names (field_names)

    def save(self, value: str, type_string: str) -> None:
        """Keep the first type error, with Go's struct and field path context."""
        if self.saved is None:
            if self.struct is not None or self.fields:
                self.saved = UnmarshalTypeError(
                    value, type_string, self.struct.short_name if self.struct else "", ".".join(self.fields)
                )
            else:
                self.saved = UnmarshalTypeError(value, type_string)

    def mismatch(self, node: Node, gotype: GoType) -> None:
        """A JSON value of the wrong kind for the Go type."""
        self.save(_KIND_NAMES[node.kind], gotype.type_string)

    def value(self, node: Node, gotype: GoType, current: Any) -> Any:
        """Decode `node` into a value of `gotype` whose current content is `current`; return the result."""
        if isinstance(gotype, GoPtr):
            if node.kind == "null":
                return None
            target = current if current is not None else gotype.elem.factory()
            self.value(node, gotype.elem, target)
            return target
        if isinstance(gotype, GoStruct):
            if node.kind == "object":
                self.struct_object(node, gotype, current)
            elif node.kind != "null":
                self.mismatch(node, gotype)
            return current
        if isinstance(gotype, GoMap):
            if node.kind == "null":
                return None
            if node.kind != "object":
                self.mismatch(node, gotype)
                return current
            return self.map_object(node, gotype, current)
        if isinstance(gotype, GoSlice):
            if node.kind == "null":
                self.stale.pop(id(current), None)
                return None
            if node.kind != "array":
                self.mismatch(node, gotype)
                return current
            return self.array(node, gotype, current)
        if isinstance(gotype, GoString):
            if node.kind == "string":
                return node.value
            if node.kind != "null":
                self.mismatch(node, gotype)
            return current
        if isinstance(gotype, (GoInt, GoUint)):
            if node.kind == "number":
                parsed = _parse_integer(node.value, signed=isinstance(gotype, GoInt))
                if parsed is None:
                    self.save("number " + node.value, gotype.type_string)
                    return current
                return parsed
            if node.kind != "null":
                self.mismatch(node, gotype)
            return current
        raise TypeError(f"unsupported Go type {gotype!r}")  # pragma: no cover

    def field_names(self, gotype: GoStruct) -> tuple[dict, dict]:
        """(exact JSON name -> field, folded name -> first field of that name) of a struct, built
        once per decoding (a checkpoint decodes the same few structs thousands of times)."""
        names = self.names.get(id(gotype))
        if names is None:
            exact = {f.json_name: f for f in gotype.json_fields()}
            folded: dict[str, Any] = {}
            for f in gotype.json_fields():
                folded.setdefault(_go_fold(f.json_name), f)
            names = self.names[id(gotype)] = (exact, folded)
        return names

    def struct_object(self, node: Node, gotype: GoStruct, obj: Any) -> None:
        """Decode an object into a struct: exact then case-folded names, unknown keys skipped."""
        exact, folded = self.field_names(gotype)
        saved_struct, depth = self.struct, len(self.fields)
        for key, member in node.value:
            f = exact.get(key) or folded.get(_go_fold(key))
            if f is None:
                continue  # unknown fields are ignored
            if f.embedded:
                self.fields.append(f.embedded)
            self.fields.append(f.json_name)
            self.struct = gotype
            setattr(obj, f.attr, self.value(member, f.type, getattr(obj, f.attr)))
            del self.fields[depth:]
            self.struct = saved_struct

    def map_object(self, node: Node, gotype: GoMap, current: Optional[dict]) -> dict:
        """Decode an object into a map (creating it if nil); keys parsed like Go, values fresh."""
        result = current if current is not None else {}
        for key, member in node.value:
            elem = self.value(member, gotype.elem, _zero(gotype.elem))
            if isinstance(gotype.key, GoInt):
                k = _parse_integer(key, signed=True)
                if k is None:
                    self.save("number " + key, gotype.key.type_string)
                    continue
            else:
                k = key
            result[k] = elem
        return result

    def array(self, node: Node, gotype: GoSlice, current: Optional[list]) -> list:
        """Decode an array into a slice, reusing existing elements (and spare capacity) as Go does."""
        items = node.value
        if not items:
            self.stale.pop(id(current), None)
            return []
        result = current if current is not None else []
        _, spare = self.stale.pop(id(result), (result, []))
        for i, member in enumerate(items):
            if i < len(result):
                result[i] = self.value(member, gotype.elem, result[i])
            else:
                # Within the old capacity Go exposes the element left there before; beyond
                # it the slice grows with zero values.
                old = spare.pop(0) if spare else _zero(gotype.elem)
                result.append(self.value(member, gotype.elem, old))
        if len(items) < len(result):
            spare = result[len(items):] + spare
            del result[len(items):]
        if spare:
            self.stale[id(result)] = (result, spare)
        return result


def _zero(gotype: GoType) -> Any:
    """The zero value of a Go type, as a fresh Python value."""
    if isinstance(gotype, GoStruct):
        return gotype.factory()
    if isinstance(gotype, (GoInt, GoUint)):
        return 0
    if isinstance(gotype, GoString):
        return ""
    return None  # pointers, maps, slices


def _parse_integer(text: str, signed: bool) -> Optional[int]:
    """strconv.ParseInt / ParseUint in base 10 with 64-bit range; None on failure."""
    digits = text
    if signed and digits[:1] in ("+", "-"):
        digits = digits[1:]
    if not digits or len(digits) > 20 or not (digits.isascii() and digits.isdigit()):
        return None  # past 20 digits no value fits 64 bits (and Python's int() refuses 4,300)
    value = int(text)
    if signed:
        return value if INT64_MIN <= value <= INT64_MAX else None
    return value if value <= UINT64_MAX else None


def unmarshal(data: bytes, target: Any, gotype: GoStruct) -> None:
    """json.Unmarshal(data, &target): decode into the (pre-initialised) struct `target`.

    Raises JSONSyntaxError before touching `target` when the bytes are not JSON, or the first
    UnmarshalTypeError after the whole document was decoded (other fields are still set).
    """
    with collector_paused():  # millions of small acyclic objects: see kubeinputs.collector
        root = parse(data)
        decoder = _Decoder()
        decoder.value(root, gotype, target)
    if decoder.saved is not None:
        raise decoder.saved


# ---------------------------------------------------------------------------------------
# encoding

_HEXDIGITS = "0123456789abcdef"
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


# Every character encode_string does not copy as it is.
_NEEDS_ESCAPE = re.compile("[\x00-\x1f\"\\\\<>&\u2028\u2029\ud800-\udfff]")


def _escape(match: "re.Match[str]") -> str:
    """The escape of one character (as encode_string_plain writes it)."""
    return encode_string_plain(match.group())[1:-1]


def encode_string(s: str) -> str:
    """Go's appendString with HTML escaping (what json.Marshal uses).

    Same text as encode_string_plain; the characters to escape are found by one regular
    expression, so a string with none is copied whole. Cost: O(len(s)) in C, plus O(1)
    Python work per escaped character.
    """
    if _NEEDS_ESCAPE.search(s) is None:
        return '"' + s + '"'
    if '"' in s and _NEEDS_ESCAPE.search(s.replace('"', "")) is None:
        return '"' + s.replace('"', '\\"') + '"'  # e.g. JSON inside a string, the v3 `data`
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def encode_string_plain(s: str) -> str:
    """Go's appendString with HTML escaping, character by character (the oracle of
    encode_string). Cost: O(len(s)) Python steps."""
    out = ['"']
    for ch in s:
        cp = ord(ch)
        if cp < 0x80:
            if ch in _SHORT_ESCAPES:
                out.append(_SHORT_ESCAPES[ch])
            elif cp < 0x20 or ch in "<>&":
                out.append("\\u00" + _HEXDIGITS[cp >> 4] + _HEXDIGITS[cp & 0xF])
            else:
                out.append(ch)
        elif cp in (0x2028, 0x2029):
            out.append("\\u202" + _HEXDIGITS[cp & 0xF])
        elif 0xD800 <= cp <= 0xDFFF:
            out.append("\\ufffd")  # not valid UTF-8 in a Go string
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _is_empty(value: Any, gotype: GoType) -> bool:
    """encoding/json's isEmptyValue for the kinds used here."""
    if isinstance(gotype, (GoMap, GoSlice)):
        return not value
    if isinstance(gotype, GoPtr):
        return value is None
    if isinstance(gotype, (GoInt, GoUint)):
        return value == 0
    if isinstance(gotype, GoString):
        return value == ""
    return False


def encode_value(value: Any, gotype: GoType, out: list[str]) -> None:
    """Append the JSON text of `value` (of Go type `gotype`) to `out`."""
    if isinstance(gotype, GoPtr):
        if value is None:
            out.append("null")
        else:
            encode_value(value, gotype.elem, out)
    elif isinstance(gotype, GoStruct):
        out.append("{")
        first = True
        for f in gotype.json_fields():
            v = getattr(value, f.attr)
            if f.omitempty and _is_empty(v, f.type):
                continue
            if not first:
                out.append(",")
            first = False
            out.append(encode_string(f.json_name))
            out.append(":")
            encode_value(v, f.type, out)
        out.append("}")
    elif isinstance(gotype, GoMap):
        if value is None:
            out.append("null")
            return
        keyed = sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
        out.append("{")
        for i, (k, v) in enumerate(keyed):
            if i:
                out.append(",")
            out.append(encode_string(k))
            out.append(":")
            encode_value(v, gotype.elem, out)
        out.append("}")
    elif isinstance(gotype, GoSlice):
        if value is None:
            out.append("null")
            return
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            encode_value(v, gotype.elem, out)
        out.append("]")
    elif isinstance(gotype, GoString):
        out.append(encode_string(value))
    elif isinstance(gotype, (GoInt, GoUint)):
        out.append(str(int(value)))
    else:  # pragma: no cover
        raise TypeError(f"unsupported Go type {gotype!r}")


def marshal(value: Any, gotype: GoType) -> bytes:
    """json.Marshal: compact bytes, no trailing newline."""
    out: list[str] = []
    encode_value(value, gotype, out)
    return "".join(out).encode("utf-8", "surrogatepass")
