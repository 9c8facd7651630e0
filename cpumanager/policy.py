"""The CPU-manager policy interface (kubelet's cpumanager `Policy`) and the stores it reads.

A policy decides which CPUs a container gets. The Manager owns the state store and hands it
to the policy on every call; the static policy keeps in memory only what kubelet keeps there
too (the CPUs a pod's later containers may re-use from its init containers).
"""
from __future__ import annotations

from typing import Protocol

from kubeinputs.cpuset import CPUSet
from topologymanager.hint import TopologyHint
from memorymanager.policy_manager import Policy as PolicyBase

from cpumanager.policy_options import TopologyStore
from cpumanager.state.state import State

# kubelet's policy names (cpuManagerPolicy values and the checkpoint's policyName): lower case.
POLICY_NONE = "none"
POLICY_STATIC = "static"


class AffinityStore(TopologyStore, Protocol):
    """The topology manager's `Store`: the merged hint stored per container, and its policy (`get_policy`,
    of which only the name is read)."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint, or the zero hint `TopologyHint()` for an unknown container."""


class Policy(PolicyBase[State], Protocol):
    """kubelet's CPU-manager `Policy` interface, over an explicit state store: the calls every manager
    policy has (`memorymanager.policy_manager.Policy`), and the allocatable CPUs."""

    def get_allocatable_cpus(self, state: State) -> CPUSet:
        """The CPUs exclusive allocations can ever take."""
