"""Go's strconv.Quote and %v of string maps (kubeinputs.goformat), the one emulation every package uses."""
import doctest

import pytest

from kubeinputs import goformat
from kubeinputs.goformat import go_map_string, go_quote


@pytest.mark.parametrize(
    "text, quoted",
    [("abc", '"abc"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("\n", '"\\n"'), ("\x01", '"\\x01"'),
     ("\x7f", '"\\x7f"'), ("é", '"é"'), ("\u00a0", '"\\u00a0"'), ("\u0085", '"\\u0085"'),
     ("\ufeff", '"\\ufeff"'), ("\U000e0001", '"\\U000e0001"'), ("😀", '"😀"'), ("\ufffd", '"\ufffd"')],
)
def test_go_quote(text, quoted):
    assert go_quote(text) == quoted


@pytest.mark.parametrize(
    "text, quoted",
    [
        # a lone surrogate: the invalid UTF-8 bytes it stands for (surrogatepass), each as \xNN
        ("x\ud800y", '"x\\xed\\xa0\\x80y"'),
        ("\udbff\udfff", '"\\xed\\xaf\\xbf\\xed\\xbf\\xbf"'),  # two lone surrogates are not a pair in Python
        ("\udc7f", '"\\xed\\xb1\\xbf"'),
        # surrogateescape: one undecodable byte of a file name or argument
        ("/var/lib/kubelet/\udcff\udc80", '"/var/lib/kubelet/\\xff\\x80"'),
    ],
)
def test_go_quote_lone_surrogates_are_invalid_bytes(text, quoted):
    assert go_quote(text) == quoted


def test_every_package_uses_the_one_go_quote():
    import state.state_checkpoint
    import topologymanager.policy_options

    assert topologymanager.policy_options.go_quote is go_quote
    assert state.state_checkpoint.go_quote is go_quote


def test_go_map_string():
    assert go_map_string({"b": "2", "a": "1"}) == "map[a:1 b:2]"
    assert go_map_string({}) == "map[]"


def test_doctests():
    failures, tried = doctest.testmod(goformat)
    assert tried >= 3 and failures == 0
