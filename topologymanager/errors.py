"""Errors raised by the topology manager package.

Every error whose text kubelet defines carries exactly kubelet's message in
`str(e)`, so callers (the runner, tests) can compare it with what a real kubelet
logs or returns.
"""
from __future__ import annotations

from kubeinputs.limits import WorkLimitError


class TopologyManagerError(Exception):
    """An error kubelet's topology manager reports (e.g. from NewManager); str(e) is kubelet's text."""


class PolicyOptionsError(TopologyManagerError, ValueError):
    """A `topologyManagerPolicyOptions` entry kubelet refuses (NewPolicyOptions)."""


class NUMAInfoError(TopologyManagerError, ValueError):
    """The machine's NUMA description cannot be used (missing distances, a distance row too short).

    Where Go would panic (indexing a distance row out of range) we raise this instead,
    with a message that says so.
    """


class HintProviderError(TopologyManagerError, TypeError):
    """A hint provider answered with something that is not a `ProviderHints` value."""


class BoundedWorkError(TopologyManagerError, WorkLimitError, RuntimeError):
    """kubelet's answer here needs more work than this project allows itself (bounded-work refusal).

    Raised instead of a hang, a MemoryError or a guess: e.g. kubelet would enumerate 2^34
    NUMA masks, and the exact shortcut (`topologymanager.family_merge`) cannot decide this
    input within its work budget. The message says which question could not be answered.
    """
