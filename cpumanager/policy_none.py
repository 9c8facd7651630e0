"""The `none` CPU-manager policy: kubelet's default, which pins nothing (policy_none.go).

It gives no hints and allocates nothing; its checkpoint is still written (policyName "none",
an empty shared pool). It takes no options.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.goformat import go_map_string
from topologymanager.hint_provider import ProviderHints

from cpumanager.errors import CPUManagerError
from cpumanager.policy import POLICY_NONE
from cpumanager.state.state import State


class NonePolicy:
    """kubelet's `none` policy: every call is a no-op."""

    def name(self) -> str:
        """`none`."""
        return POLICY_NONE

    def start(self, state: State) -> None:
        """Nothing to validate."""

    def allocate(self, state: State, pod: Any, container: Any) -> None:
        """Nothing is pinned."""

    def allocate_pod(self, state: State, pod: Any) -> None:
        """Nothing is pinned."""

    def remove_container(self, state: State, pod_uid: str, container_name: str) -> None:
        """Nothing to release."""

    def get_topology_hints(self, state: State, pod: Any, container: Any) -> ProviderHints:
        """No preference (nil)."""
        return None

    def get_pod_topology_hints(self, state: State, pod: Any) -> ProviderHints:
        """No preference (nil)."""
        return None

    def get_allocatable_cpus(self, state: State) -> CPUSet:
        """No CPU can be exclusively allocated under this policy: the empty set."""
        return CPUSet()


def new_policy_none(policy_options: Optional[Mapping[str, str]] = None) -> NonePolicy:
    """NewNonePolicy: refuses any option (`None policy: received unsupported options=map[...]`)."""
    if policy_options:
        raise CPUManagerError(f"None policy: received unsupported options={go_map_string(dict(policy_options))}")
    return NonePolicy()
