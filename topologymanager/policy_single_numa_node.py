"""The `single-numa-node` topology manager policy (kubelet's policy_single_numa_node.go).

Only don't-care hints and preferred one-node hints take part in the merge; a result
that spans the whole machine is reported with a nil affinity; admit only if preferred.
prefer-closest has no effect here (every candidate has one node).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.merge import MergeFn, filter_providers_hints
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy import POLICY_SINGLE_NUMA_NODE
from topologymanager.policy_options import PolicyOptions


def filter_single_numa_hints(hint_lists: Sequence[Sequence[TopologyHint]]) -> list[list[TopologyHint]]:
    """Keep, in each list, the preferred hints whose affinity is nil or a single node.

    A list can become empty (its resource then has no acceptable placement).
    """
    return [
        hints.preferred_singles() if isinstance(hints, HintFamily) else [
            h
            for h in hints
            if h.preferred and (h.numa_node_affinity is None or h.numa_node_affinity.bit_count() == 1)
        ]
        for hints in hint_lists
    ]


@dataclass(frozen=True)
class SingleNumaNodePolicy:
    """Align every resource on one NUMA node or reject the pod."""

    numa_info: NUMAInfo
    opts: PolicyOptions = field(default_factory=PolicyOptions)
    merge_fn: MergeFn = fast_merge_hints

    @property
    def name(self) -> str:
        """`single-numa-node`."""
        return POLICY_SINGLE_NUMA_NODE

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        """Admit only a preferred hint."""
        return hint.preferred

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The best single-node hint; an all-nodes result becomes `{nil, preferred}`."""
        filtered = filter_single_numa_hints(filter_providers_hints(providers_hints))
        best = self.merge_fn(self.numa_info, filtered, self.name, self.opts.prefer_closest_numa)
        if best.numa_node_affinity == self.numa_info.default_affinity_mask():
            best = TopologyHint(None, best.preferred)
        return best, self.can_admit_pod_result(best)
