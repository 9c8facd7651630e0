"""The `none` topology manager policy (kubelet's policy_none.go): no alignment at all."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.policy import POLICY_NONE


@dataclass(frozen=True)
class NonePolicy:
    """Never merges: every pod is admitted with the zero hint `{nil, false}`."""

    @property
    def name(self) -> str:
        """`none`."""
        return POLICY_NONE

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        """Always admit."""
        return True

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The zero hint and admit."""
        return TopologyHint(), True
