"""Go's `path.Match`: shell patterns as Go matches them, for names a Go component matches that way
(the nri-plugins agent's extended-resource ownership patterns).

The syntax and its meaning are Go's, byte for byte over the UTF-8 text:

- `*` matches any run of characters other than `/`; `?` one character other than `/`;
- `[...]` one character of a class of characters and ranges (`a-z`), negated by a leading `^`
  (Go knows no `[!...]`: a `!` there is a plain member of the class); `\\` escapes the next
  character, inside a class too;
- a malformed pattern (an empty class, a range missing an end, an unclosed `[`, a trailing `\\`,
  an unescaped `-` or `]` where a character is expected) is an error, `BadPatternError`, whose
  text is Go's `ErrBadPattern` — raised even when the name failed to match early, since Go checks
  the rest of the pattern before it answers "no match".

Invalid UTF-8 in the name reads as U+FFFD one byte at a time, as Go's decoder does.
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.errors import Error

_ERROR_RUNE = 0xFFFD
_SLASH = ord("/")
_STAR, _QUESTION, _OPEN, _CLOSE = ord("*"), ord("?"), ord("["), ord("]")
_ESCAPE, _CARET, _DASH = ord("\\"), ord("^"), ord("-")


class BadPatternError(Error, ValueError):
    """A malformed pattern (Go's `path.ErrBadPattern`)."""

    def __init__(self) -> None:
        super().__init__("syntax error in pattern")


def _rune(data: bytes) -> tuple[int, int]:
    """The first character of non-empty `data` and its length in bytes (U+FFFD, 1 when invalid)."""
    lead = data[0]
    if lead < 0x80:
        return lead, 1
    size = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    if size and len(data) >= size:
        try:
            return ord(data[:size].decode("utf-8")), size
        except UnicodeDecodeError:
            pass
    return _ERROR_RUNE, 1


def _split(pattern: bytes) -> tuple[bool, bytes, bytes]:
    """(whether stars lead, the star-free segment after them, the rest of the pattern)."""
    star = False
    while pattern[:1] == b"*":
        pattern, star = pattern[1:], True
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == _ESCAPE:
            i += 1  # the escaped byte (a trailing escape is the segment's error to find)
        elif c == _OPEN:
            in_class = True
        elif c == _CLOSE:
            in_class = False
        elif c == _STAR and not in_class:
            return star, pattern[:i], pattern[i:]
        i += 1
    return star, pattern, b""


def _class_char(segment: bytes) -> tuple[int, bytes]:
    """One (possibly escaped) character of a class and what follows it; BadPatternError when there is
    none, when it is an unescaped `-` or `]`, when it is not UTF-8, or when nothing follows it."""
    if not segment or segment[0] in (_DASH, _CLOSE):
        raise BadPatternError()
    if segment[0] == _ESCAPE:
        segment = segment[1:]
        if not segment:
            raise BadPatternError()
    char, size = _rune(segment)
    if (char == _ERROR_RUNE and size == 1) or len(segment) == size:
        raise BadPatternError()
    return char, segment[size:]


def _match_segment(segment: bytes, name: bytes) -> Optional[bytes]:
    """What is left of `name` after `segment` matched its start, None when it does not; the whole
    segment is checked for errors either way."""
    failed = False
    while segment:
        if not failed and not name:
            failed = True
        head = segment[0]
        if head == _OPEN:
            char = -1
            if not failed:
                char, size = _rune(name)
                name = name[size:]
            segment = segment[1:]
            negated = segment[:1] == b"^"
            if negated:
                segment = segment[1:]
            hit, ranges = False, 0
            while not (segment[:1] == b"]" and ranges > 0):
                low, segment = _class_char(segment)
                high = low
                if segment[0] == _DASH:
                    high, segment = _class_char(segment[1:])
                hit = hit or low <= char <= high
                ranges += 1
            segment = segment[1:]
            if hit == negated:
                failed = True
        elif head == _QUESTION:
            if not failed:
                failed = name[0] == _SLASH
                name = name[_rune(name)[1]:]
            segment = segment[1:]
        else:
            if head == _ESCAPE:
                segment = segment[1:]
                if not segment:
                    raise BadPatternError()
            if not failed:
                failed = segment[0] != name[0]
                name = name[1:]
            segment = segment[1:]
    return None if failed else name


def path_match(pattern: str, name: str) -> bool:
    """Whether `name` matches the whole of `pattern` as Go's `path.Match` decides; BadPatternError
    when the pattern is malformed."""
    pat = pattern.encode("utf-8", "surrogatepass")
    rest = name.encode("utf-8", "surrogatepass")
    while pat:
        star, segment, pat = _split(pat)
        if star and not segment:
            return b"/" not in rest  # a trailing star takes the rest, within one path element
        left = _match_segment(segment, rest)
        if left is not None and (not left or pat):
            rest = left
            continue
        if star:
            moved = False
            for skip in range(len(rest)):
                if rest[skip] == _SLASH:
                    break
                left = _match_segment(segment, rest[skip + 1:])
                if left is not None and not (not pat and left):
                    rest, moved = left, True
                    break
            if moved:
                continue
        while pat:  # no match: still report a malformed remainder
            _, segment, pat = _split(pat)
            _match_segment(segment, b"")
        return False
    return not rest
