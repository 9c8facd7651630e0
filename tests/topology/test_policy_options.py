"""kubelet's policy_options_test.go, translated, with the v1.37 maturity table."""
import pytest

from topologymanager.errors import PolicyOptionsError
from kubeinputs.features import FeatureGates
from kubeinputs.goformat import go_quote
from topologymanager.policy_options import (
    MATURITY_V1_37,
    OptionMaturity,
    PolicyOptions,
    check_policy_option_available,
    go_atoi,
    new_policy_options,
    parse_go_bool,
)

FANCY_BETA = "fancy-new-option"
FANCY_ALPHA = "fancy-alpha-option"
# kubelet's test inserts fake alpha/beta options into the tables; we pass a table instead
TEST_MATURITY = OptionMaturity(
    alpha=frozenset({FANCY_ALPHA}),
    beta=frozenset({FANCY_BETA}),
    stable=MATURITY_V1_37.stable,
)


def gates(**overrides):
    return FeatureGates.from_config(overrides)


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, PolicyOptions(False, 8)),
        (None, PolicyOptions(False, 8)),
        ({"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "8"}, PolicyOptions(True, 8)),
        ({"max-allowable-numa-nodes": "12"}, PolicyOptions(False, 12)),
        ({"prefer-closest-numa-nodes": "1"}, PolicyOptions(True, 8)),
        ({"prefer-closest-numa-nodes": "F"}, PolicyOptions(False, 8)),
        ({"max-allowable-numa-nodes": "+16"}, PolicyOptions(False, 16)),
        ({"max-allowable-numa-nodes": "0008"}, PolicyOptions(False, 8)),
    ],
)
def test_new_policy_options(options, expected):
    assert new_policy_options(options, gates()) == expected
    assert PolicyOptions() == PolicyOptions(prefer_closest_numa=False, max_allowable_numa_nodes=8)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"prefer-closest-numa-nodes": "not a boolean"},
         'bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "not a boolean": invalid syntax'),
        ({"prefer-closest-numa-nodes": "yes"},
         'bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "yes": invalid syntax'),
        ({"max-allowable-numa-nodes": "can't parse to int"},
         'unable to convert policy option to integer "max-allowable-numa-nodes": '
         'strconv.Atoi: parsing "can\'t parse to int": invalid syntax'),
        ({"max-allowable-numa-nodes": " 12"},
         'unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: parsing " 12": invalid syntax'),
        ({"max-allowable-numa-nodes": "1_0"},
         'unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: parsing "1_0": invalid syntax'),
        ({"max-allowable-numa-nodes": "99999999999999999999"},
         'unable to convert policy option to integer "max-allowable-numa-nodes": '
         'strconv.Atoi: parsing "99999999999999999999": value out of range'),
        ({"max-allowable-numa-nodes": "7"}, 'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
        ({"max-allowable-numa-nodes": "-8"}, 'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
        ({"unknown-option": "true"}, 'unknown Topology Manager Policy option: "unknown-option"'),
    ],
)
def test_new_policy_options_errors(options, message):
    with pytest.raises(PolicyOptionsError) as err:
        new_policy_options(options, gates())
    assert str(err.value) == message


def test_options_are_checked_in_sorted_order():
    # Go's map order is random; we report the first bad option by name
    with pytest.raises(PolicyOptionsError, match='"a-unknown"'):
        new_policy_options({"z-unknown": "1", "a-unknown": "1"}, gates())
    with pytest.raises(PolicyOptionsError, match="max-allowable"):
        new_policy_options({"prefer-closest-numa-nodes": "bad", "max-allowable-numa-nodes": "bad"}, gates())


@pytest.mark.parametrize(
    "options, gate_overrides, error",
    [
        ({FANCY_BETA: "true"}, {}, "unsupported topologymanager option"),  # available, but kubelet has no parser
        ({FANCY_BETA: "true"}, {"TopologyManagerPolicyBetaOptions": False},
         'Topology Manager Policy Beta-level Options not enabled, but option "fancy-new-option" provided'),
        ({FANCY_ALPHA: "true"}, {},
         'Topology Manager Policy Alpha-level Options not enabled, but option "fancy-alpha-option" provided'),
        ({FANCY_ALPHA: "true"}, {"TopologyManagerPolicyAlphaOptions": True}, "unsupported topologymanager option"),
    ],
)
def test_maturity_mechanism(options, gate_overrides, error):
    with pytest.raises(PolicyOptionsError) as err:
        new_policy_options(options, gates(**gate_overrides), TEST_MATURITY)
    assert error in str(err.value)


@pytest.mark.parametrize(
    "option, gate_overrides, available",
    [
        ("this-option-does-not-exist", {"TopologyManagerPolicyBetaOptions": False}, False),
        ("this-option-does-not-exist", {"TopologyManagerPolicyBetaOptions": True}, False),
        ("this-option-does-not-exist", {"TopologyManagerPolicyAlphaOptions": True}, False),
        ("prefer-closest-numa-nodes", {"TopologyManagerPolicyBetaOptions": False}, True),
        ("prefer-closest-numa-nodes", {"TopologyManagerPolicyAlphaOptions": False}, True),
        ("max-allowable-numa-nodes", {"TopologyManagerPolicyBetaOptions": False}, True),
        ("max-allowable-numa-nodes", {}, True),
        (FANCY_ALPHA, {"TopologyManagerPolicyAlphaOptions": True}, True),
        (FANCY_ALPHA, {"TopologyManagerPolicyAlphaOptions": False}, False),
        (FANCY_BETA, {"TopologyManagerPolicyBetaOptions": True}, True),
        (FANCY_BETA, {"TopologyManagerPolicyBetaOptions": False}, False),
    ],
)
def test_policy_options_available(option, gate_overrides, available):
    try:
        check_policy_option_available(option, gates(**gate_overrides), TEST_MATURITY)
        ok = True
    except PolicyOptionsError:
        ok = False
    assert ok is available


def test_stable_options_need_no_gates_in_v1_37():
    off = gates(TopologyManagerPolicyAlphaOptions=False, TopologyManagerPolicyBetaOptions=False)
    assert new_policy_options({"prefer-closest-numa-nodes": "true", "max-allowable-numa-nodes": "10"}, off) == \
        PolicyOptions(True, 10)


def test_non_string_values_are_named():
    with pytest.raises(PolicyOptionsError, match="max-allowable-numa-nodes"):
        new_policy_options({"max-allowable-numa-nodes": 12}, gates())


@pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
def test_parse_go_bool_true(text):
    assert parse_go_bool(text) == (True, None)


@pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
def test_parse_go_bool_false(text):
    assert parse_go_bool(text) == (False, None)


@pytest.mark.parametrize("text", ["", "tRuE", "yes", " true", "2"])
def test_parse_go_bool_invalid(text):
    value, err = parse_go_bool(text)
    assert err == f"strconv.ParseBool: parsing {go_quote(text)}: invalid syntax"


@pytest.mark.parametrize(
    "text, value, ok",
    [("8", 8, True), ("-3", -3, True), ("+9", 9, True), ("9223372036854775807", 2**63 - 1, True),
     ("-9223372036854775808", -2**63, True), ("", 0, False), ("+", 0, False), ("1e3", 0, False),
     ("٣", 0, False), ("12\n", 0, False)],
)
def test_go_atoi(text, value, ok):
    got, err = go_atoi(text)
    assert (err is None) is ok
    assert got == value
