"""The memory-manager policy interface (kubelet's `memorymanager.Policy`) and its shared vocabulary.

A policy decides where a container's memory goes. The Manager owns the state store
and hands it to the policy on every call; the policy keeps no state of its own
except what kubelet keeps in memory too (the static policy's re-usable
init-container memory).
"""
from __future__ import annotations

from typing import Protocol

from kubeinputs.errors import Error

from memorymanager.policy_manager import Policy as PolicyBase
from state.state import State
from state.types import Block
from topologymanager.hint import TopologyHint

# kubelet's policy type names (memoryManagerPolicy values); note the capital letters.
POLICY_NONE = "None"
POLICY_STATIC = "Static"
POLICY_BEST_EFFORT = "BestEffort"

# Admission rejection reason for the pod-level shared pool error (kubelet's ErrorReasonEmptyPodSharedPool).
EMPTY_POD_SHARED_POOL_REASON = "EmptyPodSharedPoolError"


class MemoryManagerError(Error):
    """Any error the kubelet memory manager reports; str(e) is kubelet's exact message."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class EmptyPodSharedPoolError(MemoryManagerError):
    """KEP-5526 pod-level allocation refused because the pod's shared pool would be empty.

    kubelet wraps the inner message unchanged and rejects the pod with reason
    `EmptyPodSharedPoolError` instead of `UnexpectedAdmissionError`.
    """

    reason = EMPTY_POD_SHARED_POOL_REASON
    # the topology manager's admission code reads the rejection reason from `error_type`
    error_type = EMPTY_POD_SHARED_POOL_REASON


class AffinityStore(Protocol):
    """The topology manager's `Store`: the merged hint stored for a container at admission."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint, or the zero hint `TopologyHint()` for an unknown container."""


class Policy(PolicyBase[State], Protocol):
    """kubelet's memory-manager `Policy` interface, over an explicit state store: the calls every manager
    policy has (`memorymanager.policy_manager.Policy`), and the allocatable memory."""

    def get_allocatable_memory(self, state: State) -> list[Block]:
        """One block per (NUMA node, resource) with non-zero allocatable memory."""
