"""The `none` CPU-manager policy: kubelet's default, which pins nothing (policy_none.go).

It gives no hints and allocates nothing; its checkpoint is still written (policyName "none",
an empty shared pool). It takes no options.
"""
from __future__ import annotations

from typing import Mapping, Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.goformat import go_map_string
from memorymanager.policy_manager import NoOpPolicy

from cpumanager.errors import CPUManagerError
from cpumanager.policy import POLICY_NONE
from cpumanager.state.state import State


class NonePolicy(NoOpPolicy):
    """kubelet's `none` policy: every call is a no-op."""

    def name(self) -> str:
        """`none`."""
        return POLICY_NONE

    def get_allocatable_cpus(self, state: State) -> CPUSet:
        """No CPU can be exclusively allocated under this policy: the empty set."""
        return CPUSet()


def new_policy_none(policy_options: Optional[Mapping[str, str]] = None) -> NonePolicy:
    """NewNonePolicy: refuses any option (`None policy: received unsupported options=map[...]`)."""
    if policy_options:
        raise CPUManagerError(f"None policy: received unsupported options={go_map_string(dict(policy_options))}")
    return NonePolicy()
