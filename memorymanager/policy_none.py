"""The `None` memory-manager policy: kubelet's default, which pins nothing.

It gives no hints, allocates nothing and reports no allocatable memory; its
checkpoint is still written (policyName "None", empty machine state).
"""
from __future__ import annotations

from typing import Any

from state.state import State
from state.types import Block
from topologymanager.hint_provider import ProviderHints

from memorymanager.policy import POLICY_NONE


class NonePolicy:
    """kubelet's `none` policy (policy_none.go): every call is a no-op."""

    def name(self) -> str:
        """`None`."""
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

    def get_allocatable_memory(self, state: State) -> list[Block]:
        """An empty list: the None policy manages no memory."""
        return []


def new_policy_none() -> NonePolicy:
    """kubelet's NewPolicyNone: the policy that pins nothing."""
    return NonePolicy()
