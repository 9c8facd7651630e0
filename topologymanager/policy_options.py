"""Topology manager policy options (`topologyManagerPolicyOptions`, kubelet's policy_options.go).

Options are checked against a maturity table: an alpha option needs the
`TopologyManagerPolicyAlphaOptions` gate, a beta option `TopologyManagerPolicyBetaOptions`,
a stable option nothing. In v1.37 both known options are stable (prefer-closest-numa-nodes
GA in 1.32, max-allowable-numa-nodes GA in 1.35); the alpha/beta machinery stays so a
different table can be passed in (tests do).

Go iterates the options map in random order, so with several bad options the error
kubelet reports is not deterministic; we check options in sorted name order.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

from topologymanager.errors import PolicyOptionsError
from kubeinputs.features import (TOPOLOGY_MANAGER_POLICY_ALPHA_OPTIONS_GATE, TOPOLOGY_MANAGER_POLICY_BETA_OPTIONS_GATE,
                                 FeatureGates)
from kubeinputs.goformat import go_quote

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8



@dataclass(frozen=True)
class OptionMaturity:
    """Which option names are alpha, beta and stable."""

    alpha: frozenset[str] = frozenset()
    beta: frozenset[str] = frozenset()
    stable: frozenset[str] = frozenset()


MATURITY_V1_37 = OptionMaturity(stable=frozenset({PREFER_CLOSEST_NUMA_NODES, MAX_ALLOWABLE_NUMA_NODES}))
"""The option maturity of the targeted release (v1.37)."""


@dataclass(frozen=True)
class PolicyOptions:
    """kubelet's PolicyOptions, defaults included."""

    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def check_policy_option_available(
    option: str, gates: Optional[FeatureGates] = None, maturity: OptionMaturity = MATURITY_V1_37
) -> None:
    """kubelet's CheckPolicyOptionAvailable: raise PolicyOptionsError unless `option` may be used."""
    gates = gates if gates is not None else FeatureGates()
    if option not in maturity.alpha and option not in maturity.beta and option not in maturity.stable:
        raise PolicyOptionsError(f"unknown Topology Manager Policy option: {go_quote(option)}")
    if option in maturity.alpha and not gates.enabled(TOPOLOGY_MANAGER_POLICY_ALPHA_OPTIONS_GATE):
        raise PolicyOptionsError(
            f"Topology Manager Policy Alpha-level Options not enabled, but option {go_quote(option)} provided"
        )
    if option in maturity.beta and not gates.enabled(TOPOLOGY_MANAGER_POLICY_BETA_OPTIONS_GATE):
        raise PolicyOptionsError(
            f"Topology Manager Policy Beta-level Options not enabled, but option {go_quote(option)} provided"
        )


def new_policy_options(
    options: Optional[Mapping[str, str]],
    gates: Optional[FeatureGates] = None,
    maturity: OptionMaturity = MATURITY_V1_37,
) -> PolicyOptions:
    """kubelet's NewPolicyOptions: parse the options map (sorted by name) into PolicyOptions.

    A name that passes the maturity check but has no parser (only possible with a
    custom `maturity`, as kubelet's tests do) is `unsupported topologymanager option`,
    kubelet's safety net.
    """
    prefer_closest = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted((options or {}).keys(), key=str):
        value = options[name]
        if not isinstance(name, str):
            raise PolicyOptionsError(f"topology manager policy option names must be strings, got {name!r}")
        if not isinstance(value, str):
            raise PolicyOptionsError(f"topology manager policy option {go_quote(name)}: value must be a string, got {value!r}")
        check_policy_option_available(name, gates, maturity)
        if name == PREFER_CLOSEST_NUMA_NODES:
            parsed, err = parse_go_bool(value)
            if err is not None:
                raise PolicyOptionsError(f"bad value for option {go_quote(name)}: {err}")
            prefer_closest = parsed
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            number, err = go_atoi(value)
            if err is not None:
                raise PolicyOptionsError(f"unable to convert policy option to integer {go_quote(name)}: {err}")
            if number < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise PolicyOptionsError(
                    f"the minimum value of {go_quote(name)} should not be less than {DEFAULT_MAX_ALLOWABLE_NUMA_NODES}"
                )
            # kubelet only logs a warning when the value is above the default.
            max_nodes = number
        else:
            raise PolicyOptionsError(f"unsupported topologymanager option: {go_quote(name)} ({value})")
    return PolicyOptions(prefer_closest_numa=prefer_closest, max_allowable_numa_nodes=max_nodes)


# --- Go parsing helpers (strconv.ParseBool, Atoi) ----------------------------------------

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def parse_go_bool(value: str) -> tuple[bool, Optional[str]]:
    """strconv.ParseBool: (value, None) or (False, Go's error text)."""
    if value in _TRUE:
        return True, None
    if value in _FALSE:
        return False, None
    return False, f"strconv.ParseBool: parsing {go_quote(value)}: invalid syntax"


_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def go_atoi(value: str) -> tuple[int, Optional[str]]:
    """strconv.Atoi on a 64-bit platform: optional sign and ASCII digits only, int64 range."""
    if not _ATOI.fullmatch(value):
        return 0, f"strconv.Atoi: parsing {go_quote(value)}: invalid syntax"
    number = int(value)
    if number < _INT64_MIN or number > _INT64_MAX:
        return 0, f"strconv.Atoi: parsing {go_quote(value)}: value out of range"
    return number, None
