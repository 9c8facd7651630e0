"""The Policy interface and what all topology manager policies share (kubelet's policy.go).

A policy turns the hint maps of all providers into one hint and an admit decision.
The four policies live in policy_none.py, policy_best_effort.py, policy_restricted.py
and policy_single_numa_node.py; each merging policy calls its `merge_fn`
(`fast_merge.fast_merge_hints` unless another is given, e.g. the reference merge).
"""
from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints

POLICY_NONE = "none"
POLICY_BEST_EFFORT = "best-effort"
POLICY_RESTRICTED = "restricted"
POLICY_SINGLE_NUMA_NODE = "single-numa-node"


@runtime_checkable
class Policy(Protocol):
    """kubelet's topologymanager.Policy."""

    @property
    def name(self) -> str:
        """The policy name as configured (`none`, `best-effort`, ...)."""

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """The merged hint for one container (or pod) and whether to admit it."""


def is_alignment_guaranteed(policy: Policy) -> bool:
    """kubelet's IsAlignmentGuaranteed: only single-numa-node guarantees NUMA alignment."""
    return policy.name == POLICY_SINGLE_NUMA_NODE
