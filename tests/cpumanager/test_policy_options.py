"""cpuManagerPolicyOptions: availability by maturity, values, incompatible pairs, machine checks
(kubelet's policy_options_test.go shape)."""
from types import SimpleNamespace

import pytest

from kubeinputs.features import FeatureGates
from cpumanager.errors import CPUManagerError
from cpumanager.policy_options import StaticPolicyOptions, new_static_policy_options, validate_static_policy_options
from tests.cpumanager import topologies as t
from tests.cpumanager.helpers import FakeStore
from topologymanager.manager import new_manager as new_topology_manager

ALPHA = {"CPUManagerPolicyAlphaOptions": True}
NO_BETA = {"CPUManagerPolicyBetaOptions": False}


@pytest.mark.parametrize("options,gates,expected", [
    ({}, {}, StaticPolicyOptions()),
    ({"full-pcpus-only": "true"}, {}, StaticPolicyOptions(full_physical_cpus_only=True)),
    ({"full-pcpus-only": "true"}, NO_BETA, StaticPolicyOptions(full_physical_cpus_only=True)),
    ({"strict-cpu-reservation": "T"}, NO_BETA, StaticPolicyOptions(strict_cpu_reservation=True)),
    ({"prefer-align-cpus-by-uncorecache": "1"}, NO_BETA, StaticPolicyOptions(prefer_align_by_uncore_cache=True)),
    ({"distribute-cpus-across-numa": "True"}, {}, StaticPolicyOptions(distribute_cpus_across_numa=True)),
    ({"align-by-socket": "true"}, ALPHA, StaticPolicyOptions(align_by_socket=True)),
    ({"distribute-cpus-across-cores": "true"}, ALPHA, StaticPolicyOptions(distribute_cpus_across_cores=True)),
    ({"full-pcpus-only": "false", "distribute-cpus-across-cores": "true"}, ALPHA,
     StaticPolicyOptions(distribute_cpus_across_cores=True)),
    ({"full-pcpus-only": "true", "distribute-cpus-across-numa": "true"}, {},
     StaticPolicyOptions(full_physical_cpus_only=True, distribute_cpus_across_numa=True)),
])
def test_options(options, gates, expected):
    assert new_static_policy_options(options, FeatureGates.from_config(gates)) == expected


@pytest.mark.parametrize("options,gates,message", [
    ({"foo": "true"}, {}, 'unknown CPU Manager Policy option: "foo"'),
    ({"align-by-socket": "true"}, {}, 'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided'),
    ({"distribute-cpus-across-cores": "true"}, {},
     'CPU Manager Policy Alpha-level Options not enabled, but option "distribute-cpus-across-cores" provided'),
    ({"distribute-cpus-across-numa": "true"}, NO_BETA,
     'CPU Manager Policy Beta-level Options not enabled, but option "distribute-cpus-across-numa" provided'),
    ({"full-pcpus-only": "yes"}, {}, 'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": invalid syntax'),
    ({"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"}, ALPHA,
     "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at the same time"),
    ({"distribute-cpus-across-numa": "true", "distribute-cpus-across-cores": "true"}, ALPHA,
     "static policy options distribute-cpus-across-numa and distribute-cpus-across-cores can not be used at the same time"),
    ({"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-cores": "true"}, ALPHA,
     "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-cores can not be used at the same time"),
    ({"prefer-align-cpus-by-uncorecache": "true", "distribute-cpus-across-numa": "true"}, {},
     "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa can not be used at the same time"),
])
def test_option_errors(options, gates, message):
    with pytest.raises(CPUManagerError) as err:
        new_static_policy_options(options, FeatureGates.from_config(gates))
    assert str(err.value) == message


@pytest.mark.parametrize("topo,policy,message", [
    (t.dual_socket_multi_numa_ht, "best-effort", None),
    (t.dual_socket_multi_numa_ht, "single-numa-node",
     "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option"),
    (lambda: t.build(4, lambda c: (0, c // 2, c, 0), 2, 4), "none",
     "Align by socket is not compatible with hardware where number of sockets are more than number of NUMA"),
])
@pytest.mark.parametrize("real_store", [False, True])
def test_align_by_socket_against_machine_and_topology_manager(topo, policy, message, real_store):
    opts = StaticPolicyOptions(align_by_socket=True)
    # the real topology manager too: its policy's name is a property (reading it as a method crashed)
    store = new_topology_manager([SimpleNamespace(node_id=0, distances=[10, 20]), SimpleNamespace(node_id=1, distances=[20, 10])],
                                 policy, "container") if real_store else FakeStore(policy=policy)
    if message is None:
        validate_static_policy_options(opts, topo(), store)
        return
    with pytest.raises(CPUManagerError) as err:
        validate_static_policy_options(opts, topo(), store)
    assert str(err.value) == message
