"""The `None` memory-manager policy: kubelet's default, which pins nothing.

It gives no hints, allocates nothing and reports no allocatable memory; its
checkpoint is still written (policyName "None", empty machine state).
"""
from __future__ import annotations

from state.state import State
from state.types import Block

from memorymanager.policy import POLICY_NONE
from memorymanager.policy_manager import NoOpPolicy


class NonePolicy(NoOpPolicy):
    """kubelet's `none` policy (policy_none.go): every call is a no-op."""

    def name(self) -> str:
        """`None`."""
        return POLICY_NONE

    def get_allocatable_memory(self, state: State) -> list[Block]:
        """An empty list: the None policy manages no memory."""
        return []


def new_policy_none() -> NonePolicy:
    """kubelet's NewPolicyNone: the policy that pins nothing."""
    return NonePolicy()
