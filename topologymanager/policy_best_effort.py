"""The `best-effort` topology manager policy (kubelet's policy_best_effort.go).

Merges all hints and stores the best one, but admits the pod even when the best
hint is not preferred.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.merge import MergeFn, filter_providers_hints
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import POLICY_BEST_EFFORT
from topologymanager.policy_options import PolicyOptions


@dataclass(frozen=True)
class BestEffortPolicy:
    """Merge hints across providers; always admit."""

    numa_info: NUMAInfo
    opts: PolicyOptions = field(default_factory=PolicyOptions)
    merge_fn: MergeFn = fast_merge_hints

    @property
    def name(self) -> str:
        """`best-effort`."""
        return POLICY_BEST_EFFORT

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        """Always admit."""
        return True

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The best merged hint over all providers' hints, and whether to admit."""
        filtered = filter_providers_hints(providers_hints)
        best = self.merge_fn(self.numa_info, filtered, self.name, self.opts.prefer_closest_numa)
        return best, self.can_admit_pod_result(best)
