"""kubeinputs.limits: the --limit flag, bounded reads, depth, and the API-server name rules."""
import json
import os

import pytest

from kubeinputs import limits, validation
from kubeinputs.errors import InputError
from kubeinputs.reader import load_json_text, load_yaml_text


@pytest.fixture(autouse=True)
def _reset():
    yield
    limits.reset()


def test_set_limit_takes_dashes_or_underscores_and_refuses_nonsense():
    limits.set_limit("max-depth=7")
    limits.set_limit("max_number_digits=1_000_000")
    assert limits.LIMITS.max_depth == 7 and limits.LIMITS.max_number_digits == 1_000_000
    for bad in ("max-depth", "nope=1", "max-depth=x", "max-depth=0"):
        with pytest.raises(ValueError):
            limits.set_limit(bad)


def test_a_raised_limit_lets_the_input_through():
    deep = "[" * 150 + "]" * 150
    with pytest.raises(InputError, match="max_depth"):
        load_json_text(deep)
    limits.set_limit("max-depth=200")
    assert load_json_text(deep) is not None
    assert load_yaml_text("a: " + deep) is not None


def _container_depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_container_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_container_depth, value), default=0)
    return 0


@pytest.mark.parametrize("levels", range(1, 8))
def test_json_depth_is_refused_exactly_past_the_limit(levels):
    limits.set_limit("max-depth=6")
    doc: object = "leaf"
    for i in range(levels):  # alternate maps and lists, with shallow siblings beside the deep branch
        doc = {"deep": doc, "flat": [1, {}], "n": i} if i % 2 else [[], doc, {"x": [2]}]
    text = json.dumps(doc)
    if _container_depth(doc) > 6:
        with pytest.raises(InputError, match="nested deeper than 6 levels"):
            load_json_text(text)
    else:
        assert load_json_text(text) == doc


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="a FIFO, not a regular file"):
        limits.read_bytes(fifo)


def test_lone_surrogates_decode_as_go_does():
    assert load_json_text('{"a": "x\\ud800y", "\\udfff": 1}') == {"a": "x\ufffdy", "\ufffd": 1}
    assert load_json_text('"\\ud83d\\ude00"') == "\U0001F600"


@pytest.mark.parametrize("name, ok", [("app", True), ("a-1", True), ("1a", True), ("a" * 63, True),
                                      ("a" * 64, False), ("App", False), ("-a", False), ("a-", False),
                                      ("a.b", False), ("app\n", False), ("", False)])
def test_dns1123_label(name, ok):
    assert (validation.dns1123_label_error(name) is None) == ok


@pytest.mark.parametrize("name, ok", [("cpu", True), ("memory", True), ("hugepages-2Mi", True),
                                      ("example.com/gpu", True), ("kubernetes.io/x", True), ("gpu", False),
                                      ("pods", False), ("a/b/c", False), ("example.com/", False),
                                      ("requests.example.com/x", False), ("Example.com/x", False)])
def test_container_resource_names(name, ok):
    assert (validation.container_resource_name_error(name) is None) == ok
