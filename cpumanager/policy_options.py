"""The static policy's options (`cpuManagerPolicyOptions`, kubelet's cpumanager/policy_options.go, v1.37).

Each option is a string parsed as a Go boolean (`strconv.ParseBool`: 1, t, T, TRUE, true, True,
0, f, F, FALSE, false, False). Options are grouped by maturity; a group needs its feature gate:

| option | maturity (v1.37) | gate |
| --- | --- | --- |
| `full-pcpus-only` | GA (1.33) | none |
| `strict-cpu-reservation` | GA (1.35) | none |
| `prefer-align-cpus-by-uncorecache` | GA (1.36) | none |
| `distribute-cpus-across-numa` | beta | CPUManagerPolicyBetaOptions (default on) |
| `align-by-socket` | alpha | CPUManagerPolicyAlphaOptions (default off) |
| `distribute-cpus-across-cores` | alpha | CPUManagerPolicyAlphaOptions (default off) |

Pairs that cannot be combined, checked after every option parsed (kubelet's order):
full-pcpus-only + distribute-cpus-across-cores, distribute-cpus-across-numa +
distribute-cpus-across-cores, prefer-align-cpus-by-uncorecache + distribute-cpus-across-cores,
prefer-align-cpus-by-uncorecache + distribute-cpus-across-numa. `align-by-socket` further needs a
topology manager policy other than single-numa-node and no more sockets than NUMA nodes.

The maturity of the last three GA moves is taken from the Kubernetes documentation and the
KEPs (4540 strict-cpu-reservation GA 1.35, 4800 uncore cache GA 1.36); the newest
policy_options.go in the index still lists them as beta (see docs/architecture.md).

Go walks the options map in random order, so with several bad options kubelet reports any one
of them; here they are checked in sorted name order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Protocol

from kubeinputs.features import (CPU_MANAGER_POLICY_ALPHA_OPTIONS_GATE, CPU_MANAGER_POLICY_BETA_OPTIONS_GATE,
                                 FeatureGates)
from kubeinputs.goformat import go_quote

from cpumanager.errors import CPUManagerError
from cpumanager.topology import CPUTopology

FULL_PCPUS_ONLY_OPTION = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET_OPTION = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES_OPTION = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION_OPTION = "strict-cpu-reservation"
PREFER_ALIGN_BY_UNCORE_CACHE_OPTION = "prefer-align-cpus-by-uncorecache"

ALPHA_OPTIONS = frozenset({ALIGN_BY_SOCKET_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION})
BETA_OPTIONS = frozenset({DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION})
STABLE_OPTIONS = frozenset({FULL_PCPUS_ONLY_OPTION, STRICT_CPU_RESERVATION_OPTION,
                            PREFER_ALIGN_BY_UNCORE_CACHE_OPTION})

# The topology manager policy align-by-socket cannot work with.
POLICY_SINGLE_NUMA_NODE = "single-numa-node"

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

# option -> StaticPolicyOptions attribute
_ATTRS = {
    FULL_PCPUS_ONLY_OPTION: "full_physical_cpus_only",
    DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "distribute_cpus_across_numa",
    ALIGN_BY_SOCKET_OPTION: "align_by_socket",
    DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "distribute_cpus_across_cores",
    STRICT_CPU_RESERVATION_OPTION: "strict_cpu_reservation",
    PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: "prefer_align_by_uncore_cache",
}

# Incompatible pairs, in the order kubelet checks them.
_EXCLUSIVE = (
    (FULL_PCPUS_ONLY_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION),
    (DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION),
    (PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION),
    (PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION),
)


@dataclass(frozen=True)
class StaticPolicyOptions:
    """The parsed options (kubelet's StaticPolicyOptions); all off by default."""

    full_physical_cpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_by_uncore_cache: bool = False


class TopologyStore(Protocol):
    """What the options check needs of the topology manager: its policy's name."""

    def get_policy(self) -> "NamedPolicy":
        """The topology manager's policy."""


class NamedPolicy(Protocol):
    """A topology manager policy: only its name is read (a property, as topologymanager.policy.Policy has it)."""

    @property
    def name(self) -> str:
        """The policy name (`none`, `best-effort`, `restricted`, `single-numa-node`)."""


def _parse_bool(text: str) -> Optional[bool]:
    """strconv.ParseBool; None when invalid."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def check_policy_option_available(option: str, gates: FeatureGates) -> None:
    """CheckPolicyOptionAvailable: a known option whose maturity group is enabled."""
    if option not in ALPHA_OPTIONS and option not in BETA_OPTIONS and option not in STABLE_OPTIONS:
        raise CPUManagerError(f"unknown CPU Manager Policy option: {go_quote(option)}")
    if option in ALPHA_OPTIONS and not gates.enabled(CPU_MANAGER_POLICY_ALPHA_OPTIONS_GATE):
        raise CPUManagerError(f"CPU Manager Policy Alpha-level Options not enabled, but option {go_quote(option)} "
                              "provided")
    if option in BETA_OPTIONS and not gates.enabled(CPU_MANAGER_POLICY_BETA_OPTIONS_GATE):
        raise CPUManagerError(f"CPU Manager Policy Beta-level Options not enabled, but option {go_quote(option)} "
                              "provided")


def new_static_policy_options(policy_options: Optional[Mapping[str, str]],
                              gates: Optional[FeatureGates] = None) -> StaticPolicyOptions:
    """NewStaticPolicyOptions: parse and check every option, then the incompatible pairs."""
    gates = gates if gates is not None else FeatureGates()
    values: dict[str, bool] = {}
    for name in sorted(policy_options or {}):
        value = (policy_options or {})[name]
        check_policy_option_available(name, gates)
        parsed = _parse_bool(value)
        if parsed is None:
            raise CPUManagerError(
                f"bad value for option {go_quote(name)}: strconv.ParseBool: parsing {go_quote(value)}: invalid syntax"
            )
        values[_ATTRS[name]] = parsed
    opts = StaticPolicyOptions(**values)
    for first, second in _EXCLUSIVE:
        if getattr(opts, _ATTRS[first]) and getattr(opts, _ATTRS[second]):
            raise CPUManagerError(f"static policy options {first} and {second} can not be used at the same time")
    return opts


def validate_static_policy_options(opts: StaticPolicyOptions, topology: CPUTopology,
                                   topology_manager: Optional[TopologyStore]) -> None:
    """ValidateStaticPolicyOptions: align-by-socket against the machine and the topology manager policy."""
    if not opts.align_by_socket:
        return
    policy_name = topology_manager.get_policy().name if topology_manager is not None else "none"
    if policy_name == POLICY_SINGLE_NUMA_NODE:
        raise CPUManagerError(f"Topolgy manager {POLICY_SINGLE_NUMA_NODE} policy is incompatible with CPUManager "
                              f"{ALIGN_BY_SOCKET_OPTION} policy option")
    if topology.num_sockets > topology.num_numa_nodes:
        raise CPUManagerError("Align by socket is not compatible with hardware where number of sockets are more "
                              "than number of NUMA")
