"""The checkpoint checksum: 32-bit FNV-1a over go-spew's `%#v` rendering.

kubelet's checksum.New(obj) hashes `dump.ForHash(obj)` (k8s.io/utils, formerly
hashutil.DeepHashObject): go-spew with SortKeys, DisableMethods, SpewKeys,
DisablePointerAddresses and DisableCapacities, printed with `%#v`. This module
reproduces that text byte for byte from the Go type descriptors in gotypes.py:

* a value that is not a map or slice element gets its Go type in parentheses:
  `(string)static`, `(state.NUMANodeMap)map[...]`, `(*state.MemoryManagerCheckpoint){...}`;
* map and slice elements get no type; a non-nil pointer element prints `<*>` and then
  its target; structs print `{Name:value Name:value}`; maps `map[k:v k:v]` with keys
  sorted (integers numerically, strings bytewise); slices `[a b]`;
* nil maps, slices and pointers print `<nil>`, empty ones `map[]` and `[]`;
* go-spew forgets to clear its "omit the next type" flag after a nil pointer element, so
  the field that follows such a map (or slice) is printed without its type. That is
  reproduced, since kubelet hashes what go-spew prints.
"""
from __future__ import annotations

from array import array
from typing import Any, Iterable

from kubeinputs.gotypes import GoInt, GoMap, GoPtr, GoSlice, GoString, GoStruct, GoType, GoUint

FNV32_OFFSET = 0x811C9DC5
FNV32_PRIME = 0x01000193


def fnv32a(data: bytes, h: int = FNV32_OFFSET) -> int:
    """32-bit FNV-1a (Go's hash/fnv New32a), continuing from the running value `h`.

    Four bytes per loop step, reduced to 32 bits once per step (the low 32 bits of a
    product depend only on the low 32 bits of its factors, and XOR with a byte only
    touches the low 8): the same value as fnv32a_plain with a quarter of the loop
    overhead. Cost: O(len(data)).
    """
    prime = FNV32_PRIME
    whole = len(data) & ~3
    quads = iter(data[:whole])
    for a, b, c, d in zip(quads, quads, quads, quads):
        h = (((((h ^ a) * prime ^ b) * prime ^ c) * prime ^ d) * prime) & 0xFFFFFFFF
    for b in data[whole:]:
        h = ((h ^ b) * prime) & 0xFFFFFFFF
    return h


class FNVMemo:
    """FNV-1a over texts made of pieces that recur from one checksum to the next (a busy
    node's checkpoint is rewritten after every change, mostly with unchanged nodes and
    entries).

    Over a piece of n bytes FNV-1a maps the running value h to h * P^n + C (mod 2^32), where
    C depends only on the piece and on h's low byte: XOR with a byte changes h by an amount
    set by h's low byte alone, and the low byte of a product depends only on the low bytes
    of its factors, so every step's change is fixed once the piece and h's low byte are.
    C is remembered per (piece, low byte). Pieces shorter than MIN_PIECE characters are
    just hashed; at most MAX_PIECES pieces are remembered (the memo then starts afresh).
    Cost: O(1) per remembered (piece, low byte), O(bytes) otherwise.
    """

    MIN_PIECE = 32
    MAX_PIECES = 2048

    def __init__(self) -> None:
        """An empty memo."""
        # piece -> (P^bytes mod 2^32, C + 1 by the running value's low byte; 0 = not known yet)
        self._pieces: dict[str, tuple[int, array]] = {}

    def checksum(self, pieces: Iterable[str]) -> int:
        """fnv32a of the UTF-8 (surrogatepass) bytes of the pieces joined."""
        h = FNV32_OFFSET
        memo = self._pieces
        for piece in pieces:
            if len(piece) < self.MIN_PIECE:
                for b in piece.encode("utf-8", "surrogatepass"):
                    h = ((h ^ b) * FNV32_PRIME) & 0xFFFFFFFF
                continue
            known = memo.get(piece)
            if known is None:
                if len(memo) >= self.MAX_PIECES:
                    memo.clear()
                size = len(piece.encode("utf-8", "surrogatepass"))
                known = memo[piece] = (pow(FNV32_PRIME, size, 1 << 32), array("Q", bytes(8 * 256)))
            power, offsets = known
            offset = offsets[h & 0xFF]
            if offset:
                h = (h * power + offset - 1) & 0xFFFFFFFF
            else:
                after = fnv32a(piece.encode("utf-8", "surrogatepass"), h)
                offsets[h & 0xFF] = ((after - h * power) & 0xFFFFFFFF) + 1
                h = after
        return h


def fnv32a_plain(data: bytes) -> int:
    """32-bit FNV-1a, one byte per step (the oracle of fnv32a). Cost: O(len(data))."""
    h = FNV32_OFFSET
    for b in data:
        h = ((h ^ b) * FNV32_PRIME) & 0xFFFFFFFF
    return h


class _Printer:
    """go-spew's formatState for the `%#v` verb (type flag set, no `+`)."""

    def __init__(self) -> None:
        """An empty output and the type flag cleared."""
        self.out: list[str] = []
        self.ignore_next_type = False

    def format(self, value: Any, gotype: GoType) -> None:
        """Print one value: its type unless omitted, then the value."""
        if isinstance(gotype, GoPtr):
            self.format_ptr(value, gotype)
            return
        if not self.ignore_next_type:
            self.out.append("(" + gotype.type_string + ")")
        self.ignore_next_type = False
        if isinstance(gotype, (GoInt, GoUint)):
            self.out.append(str(int(value)))
        elif isinstance(gotype, GoString):
            self.out.append(value)
        elif isinstance(gotype, GoSlice):
            if value is None:
                self.out.append("<nil>")
                return
            self.out.append("[")
            for i, item in enumerate(value):
                if i:
                    self.out.append(" ")
                self.ignore_next_type = True
                self.format(item, gotype.elem)
            self.out.append("]")
        elif isinstance(gotype, GoMap):
            if value is None:
                self.out.append("<nil>")
                return
            self.out.append("map[")
            for i, key in enumerate(_sorted_keys(value, gotype)):
                if i:
                    self.out.append(" ")
                self.ignore_next_type = True
                self.format(key, gotype.key)
                self.out.append(":")
                self.ignore_next_type = True
                self.format(value[key], gotype.elem)
            self.out.append("]")
        elif isinstance(gotype, GoStruct):
            self.out.append("{")
            for i, f in enumerate(gotype.fields):
                if i:
                    self.out.append(" ")
                self.out.append(f.go_name + ":")
                self.format(getattr(value, f.attr), f.type)
            self.out.append("}")
        else:  # pragma: no cover
            raise TypeError(f"unsupported Go type {gotype!r}")

    def format_ptr(self, value: Any, gotype: GoPtr) -> None:
        """Print a pointer: `(*T)` or `<*>`, then its target; nil as `<nil>`."""
        if value is None and self.ignore_next_type:
            self.out.append("<nil>")  # and, as in go-spew, the flag stays set
            return
        if value is None:
            self.out.append("(" + gotype.type_string + ")<nil>")
            return
        if self.ignore_next_type:
            self.out.append("<*>")
        else:
            self.out.append("(*" + gotype.elem.type_string + ")")
        self.ignore_next_type = True
        self.format(value, gotype.elem)


def _sorted_keys(mapping: dict, gotype: GoMap) -> list:
    """go-spew's sortValues: integers by value, strings by their bytes."""
    if isinstance(gotype.key, (GoInt, GoUint)):
        return sorted(mapping)
    return sorted(mapping, key=lambda k: k.encode("utf-8", "surrogatepass"))


def spew(value: Any, gotype: GoType) -> str:
    """`printer.Sprintf("%#v", value)` with kubelet's hashing configuration."""
    printer = _Printer()
    printer.format(value, gotype)
    return "".join(printer.out)


def checksum_of(value: Any, gotype: GoType, rename: tuple[str, str] | None = None) -> int:
    """checksum.New(value): FNV-1a 32 of the spew text.

    `rename` = (old, new) replaces the first occurrence of `old` in the text first, as
    kubelet does to hash a `MemoryManagerCheckpointV1`/`V2` under its legacy type name.
    """
    text = spew(value, gotype)
    if rename is not None:
        text = text.replace(rename[0], rename[1], 1)
    return fnv32a(text.encode("utf-8", "surrogatepass"))


def string_checksum(data: str) -> int:
    """checksum.New of a Go string (the v3 `dataChecksum`): FNV-1a 32 of `(string)` + data."""
    return fnv32a(("(string)" + data).encode("utf-8", "surrogatepass"))
