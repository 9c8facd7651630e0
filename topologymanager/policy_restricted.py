"""The `restricted` topology manager policy (kubelet's policy_restricted.go).

Merges exactly like best-effort but admits only when the merged hint is preferred.
"""
from __future__ import annotations

from dataclasses import dataclass

from topologymanager.hint import TopologyHint
from topologymanager.policy import POLICY_RESTRICTED
from topologymanager.policy_best_effort import BestEffortPolicy


@dataclass(frozen=True)
class RestrictedPolicy(BestEffortPolicy):
    """Best-effort merge; reject when the best hint is not preferred."""

    @property
    def name(self) -> str:
        """`restricted`."""
        return POLICY_RESTRICTED

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        """Admit only a preferred hint."""
        return hint.preferred
