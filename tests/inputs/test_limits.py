"""kubeinputs.limits: the --limit flag, bounded reads, depth, and the API-server name rules."""
import json
import os

import pytest

from kubeinputs import limits, validation
from kubeinputs.errors import InputError
from kubeinputs.reader import load_json_text, load_yaml_text


def test_raised_takes_dashes_or_underscores_and_refuses_nonsense():
    raised = limits.DEFAULT_LIMITS.raised(["max-depth=7", "max_number_digits=1_000_000"])
    assert raised.max_depth == 7 and raised.max_number_digits == 1_000_000
    assert limits.DEFAULT_LIMITS.max_depth == 100  # a value: nothing process-wide changed
    for bad in ("max-depth", "nope=1", "max-depth=x", "max-depth=0"):
        with pytest.raises(ValueError):
            limits.DEFAULT_LIMITS.raised([bad])
    with pytest.raises(Exception):
        raised.max_depth = 8  # frozen


def test_a_raised_limit_lets_the_input_through():
    deep = "[" * 150 + "]" * 150
    with pytest.raises(InputError, match="max_depth"):
        load_json_text(deep)
    raised = limits.Limits(max_depth=200)
    assert load_json_text(deep, limits=raised) is not None
    assert load_yaml_text("a: " + deep, limits=raised) is not None
    with pytest.raises(InputError, match="max_depth"):
        load_json_text(deep)  # other readers keep their own limits


def test_a_raised_number_limit_reaches_the_quantities_of_a_pod():
    from kubeinputs.pod import parse_pod

    doc = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"memory": "1" + "0" * 1200}}}]}}
    with pytest.raises(InputError, match="max_number_digits"):
        parse_pod(doc)
    assert parse_pod(doc, limits=limits.Limits(max_number_digits=2000)).containers[0].resources.limits["memory"]


def _container_depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_container_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_container_depth, value), default=0)
    return 0


@pytest.mark.parametrize("levels", range(1, 8))
def test_json_depth_is_refused_exactly_past_the_limit(levels):
    six = limits.Limits(max_depth=6)
    doc: object = "leaf"
    for i in range(levels):  # alternate maps and lists, with shallow siblings beside the deep branch
        doc = {"deep": doc, "flat": [1, {}], "n": i} if i % 2 else [[], doc, {"x": [2]}]
    text = json.dumps(doc)
    if _container_depth(doc) > 6:
        with pytest.raises(InputError, match="nested deeper than 6 levels"):
            load_json_text(text, limits=six)
    else:
        assert load_json_text(text, limits=six) == doc


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
