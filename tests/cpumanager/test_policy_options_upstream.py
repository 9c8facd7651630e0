"""Parity cases from kubelet's policy_options_test.go and TestStaticPolicyOptions: which option each
maturity gate lets through, parsing of good and bad option maps, align-by-socket against the machine and the
topology manager policy, and the options that cannot be combined. Maturities are v1.37's (full-pcpus-only,
strict-cpu-reservation and prefer-align-cpus-by-uncorecache GA; see cpumanager/policy_options.py)."""
import pytest

from kubeinputs.features import FeatureGates
from cpumanager.errors import CPUManagerError
from cpumanager.policy_options import (StaticPolicyOptions, check_policy_option_available, new_static_policy_options,
                                       validate_static_policy_options)
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore

ALPHA, BETA = "CPUManagerPolicyAlphaOptions", "CPUManagerPolicyBetaOptions"


@pytest.mark.parametrize("option,gate,enabled,available", [
    ("this-option-does-not-exist", None, None, False),
    ("full-pcpus-only", None, None, True),
    ("this-option-does-not-exist", BETA, False, False),
    ("this-option-does-not-exist", BETA, True, False),
    ("full-pcpus-only", BETA, True, True),
    ("full-pcpus-only", BETA, False, True),  # GA: no gate needed
    ("align-by-socket", ALPHA, True, True),
    ("align-by-socket", BETA, True, False),
    ("distribute-cpus-across-numa", BETA, True, True),
    ("distribute-cpus-across-numa", BETA, False, False),
    ("distribute-cpus-across-cores", ALPHA, True, True),
    ("distribute-cpus-across-cores", BETA, True, False),
    ("strict-cpu-reservation", BETA, False, True),
    ("prefer-align-cpus-by-uncorecache", BETA, False, True),
])
def test_option_available(option, gate, enabled, available):
    gates = FeatureGates.from_config({gate: enabled} if gate else {})
    try:
        check_policy_option_available(option, gates)
        got = True
    except CPUManagerError:
        got = False
    assert got == available


@pytest.mark.parametrize("options,expected", [
    (None, StaticPolicyOptions()),
    ({}, StaticPolicyOptions()),
    ({"badValue1": ""}, 'unknown CPU Manager Policy option: "badValue1"'),
    ({"badValue1": "", "badvalue2": "aaaa"}, "unknown CPU Manager Policy option"),
    ({"full-pcpus-only": "true"}, StaticPolicyOptions(full_physical_cpus_only=True)),
    ({"full-pcpus-only": "enabled!"},
     'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "enabled!": invalid syntax'),
    ({"full-pcpus-only": "1", "badvalue2": "lorem ipsum"}, 'unknown CPU Manager Policy option: "badvalue2"'),
], ids=["no options", "empty options", "one unknown option", "two unknown options", "a good option",
        "a good option with a bad value", "a good option beside an unknown one"])
def test_static_policy_options(options, expected):
    if isinstance(expected, StaticPolicyOptions):
        assert new_static_policy_options(options, FeatureGates()) == expected
        return
    with pytest.raises(CPUManagerError) as err:
        new_static_policy_options(options, FeatureGates())
    assert str(err.value).startswith(expected)


@pytest.mark.parametrize("options,topo,tm_policy,fails", [
    ({"full-pcpus-only": "true"}, t.dual_socket_multi_numa_ht, "single-numa-node", False),
    ({"align-by-socket": "true"}, t.dual_socket_multi_numa_ht, "single-numa-node", True),
    ({"align-by-socket": "true"}, t.multi_socket_per_numa_ht, "none", True),
    ({"align-by-socket": "true"}, t.dual_socket_multi_numa_ht, "none", False),
    ({"align-by-socket": "true"}, t.dual_socket_multi_numa_ht, "best-effort", False),
    ({"align-by-socket": "true"}, t.dual_socket_multi_numa_ht, "restricted", False),
], ids=["align-by-socket off", "align-by-socket with single-numa-node", "align-by-socket with more sockets than "
        "NUMA nodes", "align-by-socket with none", "align-by-socket with best-effort",
        "align-by-socket with restricted"])
def test_validate_static_policy_options(options, topo, tm_policy, fails):
    opts = new_static_policy_options(options, FeatureGates.from_config({ALPHA: True}))
    if fails:
        with pytest.raises(CPUManagerError):
            validate_static_policy_options(opts, topo(), FakeStore(policy=tm_policy))
    else:
        validate_static_policy_options(opts, topo(), FakeStore(policy=tm_policy))


@pytest.mark.parametrize("options,fails", [
    ({"full-pcpus-only": "true"}, False),
    ({"distribute-cpus-across-cores": "true"}, False),
    ({"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"}, True),
], ids=["full-pcpus-only alone", "distribute-cpus-across-cores alone", "the two together"])
def test_options_compatibility(options, fails):
    gates = FeatureGates.from_config({ALPHA: True})
    if fails:
        with pytest.raises(CPUManagerError):
            new_static_policy_options(options, gates)
    else:
        new_static_policy_options(options, gates)
