"""Go's path.Match (kubeinputs.gopath): the cases of Go's own table (src/path/match_test.go), the
points where it differs from a POSIX shell, and properties."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeinputs.gopath import BadPatternError, path_match

BAD = "ErrBadPattern"


@pytest.mark.parametrize("pattern, name, expected", [
    ("abc", "abc", True), ("*", "abc", True), ("*c", "abc", True), ("a*", "a", True), ("a*", "abc", True),
    ("a*", "ab/c", False), ("a*/b", "abc/b", True), ("a*/b", "a/c/b", False),
    ("a*b*c*d*e*/f", "axbxcxdxe/f", True), ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", False), ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", False),
    ("a*b?c*x", "abxbbxdbxebxczzx", True), ("a*b?c*x", "abxbbxdbxebxczzy", False),
    ("ab[c]", "abc", True), ("ab[b-d]", "abc", True), ("ab[e-g]", "abc", False), ("ab[^c]", "abc", False),
    ("ab[^b-d]", "abc", False), ("ab[^e-g]", "abc", True), ("a\\*b", "a*b", True), ("a\\*b", "ab", False),
    ("a?b", "a☺b", True), ("a[^a]b", "a☺b", True), ("a???b", "a☺b", False), ("a[^a][^a][^a]b", "a☺b", False),
    ("[a-ζ]*", "α", True), ("*[a-ζ]", "A", False), ("a?b", "a/b", False), ("a*b", "a/b", False),
    ("[\\]a]", "]", True), ("[\\-]", "-", True), ("[x\\-]", "x", True), ("[x\\-]", "-", True),
    ("[x\\-]", "z", False), ("[\\-x]", "x", True), ("[\\-x]", "-", True), ("[\\-x]", "a", False),
    ("[]a]", "]", BAD), ("[-]", "-", BAD), ("[x-]", "x", BAD), ("[x-]", "-", BAD), ("[x-]", "z", BAD),
    ("[-x]", "x", BAD), ("[-x]", "-", BAD), ("[-x]", "a", BAD), ("\\", "a", BAD), ("[a-b-c]", "a", BAD),
    ("[", "a", BAD), ("[^", "a", BAD), ("[^bc", "a", BAD), ("a[", "a", BAD), ("a[", "ab", BAD),
    ("a[", "x", BAD), ("a/b[", "x", BAD), ("*x", "xxx", True),
])
def test_go_table(pattern: str, name: str, expected: object) -> None:
    if expected == BAD:
        with pytest.raises(BadPatternError, match="^syntax error in pattern$"):
            path_match(pattern, name)
    else:
        assert path_match(pattern, name) is expected


@pytest.mark.parametrize("pattern, name, expected", [
    # '!' does not negate a class in Go (it does in a POSIX shell): it is a member
    ("[!a]", "b", False), ("[!a]", "!", True), ("[!a]", "a", True),
    ("[^!]", "!", False), ("[^!]", "x", True),
    # '*' and '?' stop at '/', also inside the nri.io domain pattern
    ("*.nri.io/*", "cpuclass.balloons.nri.io/pct-hp", True), ("*.nri.io/*", "x.nri.io/a/b", False),
    ("*.nri.io/*", "nri.io/x", False), ("*.nri.io/*", "example.com/x", False), ("*.nri.io/*", "a/b.nri.io/x", False),
    ("a.nri.io/?", "a.nri.io//", False), ("a.nri.io/?", "a.nri.io/x", True),
    # an escaped metacharacter is literal; a malformed remainder is reported even after a mismatch
    ("a.nri.io/\\?", "a.nri.io/x", False), ("a.nri.io/\\?", "a.nri.io/?", True),
    ("x*[", "y", BAD), ("x*[", "xyz", BAD),
    # byte-wise, as Go: a star may stop inside a multi-byte character, '?' then reads one invalid byte
    ("*??", "☺", True),
])
def test_go_semantics_beyond_the_table(pattern: str, name: str, expected: object) -> None:
    if expected == BAD:
        with pytest.raises(BadPatternError):
            path_match(pattern, name)
    else:
        assert path_match(pattern, name) is expected


SEGMENT = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), max_size=12)


def escape(text: str) -> str:
    return "".join("\\" + ch for ch in text)


@settings(max_examples=60, deadline=None)
@given(SEGMENT, SEGMENT)
def test_escaped_text_matches_only_itself(text: str, other: str) -> None:
    assert path_match(escape(text), text)
    assert path_match(escape(text), other) == (text == other)


@settings(max_examples=60, deadline=None)
@given(SEGMENT, SEGMENT, SEGMENT)
def test_star_is_any_run_within_one_element(head: str, middle: str, tail: str) -> None:
    name = head + middle + tail
    assert path_match(escape(head) + "*" + escape(tail), name)
    assert not path_match(escape(head) + "*" + escape(tail), head + middle + "/" + tail)
