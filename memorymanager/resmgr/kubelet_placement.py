"""What every concern of the `kubelet-static` backend works on: kubelet (a `memorymanager.Node`), the
container cache, the claim records, the owner; and the reads they share (a container's blocks and
memory set, whether a pod is active). The concerns themselves: `kubelet_containers.py`,
`kubelet_claims.py`, `kubelet_exports.py`, `kubelet_restore.py`; `kubelet_backend.py` holds them
together behind the nri-plugins Backend interface.
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.machine import MachineInfo
from memorymanager.node.api import Node
from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.claims import ClaimStore
from memorymanager.resmgr.protocols import Owner
from state.types import Block

DEFAULT_DRIVER = "memory.resmgr.memorymanager.io"
CLAIM_POD_PREFIX = "dra-claim-"


def claim_pod_uid(claim_uid: str) -> str:
    """The UID of the synthetic pod holding a claim's memory in the memory manager's state."""
    return CLAIM_POD_PREFIX + claim_uid


def is_claim_pod_uid(pod_uid: str) -> bool:
    """Whether a pod UID is in the claims' key space (no container's pod may have one)."""
    return pod_uid.startswith(CLAIM_POD_PREFIX)


class KubeletPlacement:
    """Kubelet and what the backend keeps beside it, for one configuration (a reconfiguration builds
    another). `static`: kubelet's Static memory policy (else `kubelet-none`: nothing is placed)."""

    def __init__(self, node: Node, cache: ContainerCache, owner: Optional[Owner], system: MachineInfo,
                 claims: ClaimStore, driver: str, container_zones: bool) -> None:
        self.node = node
        self.cache = cache
        self.owner = owner
        self.system = system
        self.claims = claims
        self.driver = driver
        self.container_zones = container_zones
        self.static = node.kubelet.memory_manager_policy == "Static"

    def blocks(self, pod_uid: str, name: str) -> Optional[list[Block]]:
        """The memory manager's blocks of (pod UID, container name), None when it holds none. Cost: O(blocks)."""
        return self.node.simulated_node.memory_manager.get_memory(pod_uid, name)

    def memset(self, pod_uid: str, name: str) -> list[int]:
        """The NUMA nodes of those blocks, ascending."""
        nodes: set[int] = set()
        for block in self.blocks(pod_uid, name) or []:
            nodes.update(block.numa_affinity or [])
        return sorted(nodes)

    def container_memset(self, container: Container) -> list[int]:
        """A container's memory set: its (pod UID, name)'s blocks, never a claim's."""
        if is_claim_pod_uid(container.pod_uid):
            return []
        return self.memset(container.pod_uid, container.name)

    def exclusive_cpus(self, container: Container) -> CPUSet:
        """The CPU manager's exclusive CPUs of the container (empty in the shared pool, and for a claim's key)."""
        if is_claim_pod_uid(container.pod_uid):
            return CPUSet()
        return self.node.simulated_node.cpu_manager.get_exclusive_cpus(container.pod_uid, container.name)

    def cpuset_cpus(self, container: Container) -> str:
        """The `cpuset.cpus` kubelet would set for the container: its exclusive CPUs, else the shared pool
        ("" under the CPU manager's none policy, where kubelet sets none, and for a claim's key)."""
        if is_claim_pod_uid(container.pod_uid):
            return ""
        return str(self.node.simulated_node.cpu_manager.get_cpu_affinity(container.pod_uid, container.name))

    def shared_cpus(self) -> CPUSet:
        """The CPU manager's shared pool (its default cpuset: empty under the none policy)."""
        return self.node.simulated_node.cpu_manager.get_default_cpu_set()

    def reserved_cpus(self) -> CPUSet:
        """The CPU manager's reserved CPUs (empty under the none policy)."""
        return self.node.simulated_node.cpu_manager.reserved_cpus()

    def all_cpus(self) -> CPUSet:
        """Every CPU of the machine, as the CPU manager's topology has them (GetAllCPUs)."""
        return self.node.simulated_node.cpu_manager.get_all_cpus()

    def numa_cpus(self, numa_node: int) -> CPUSet:
        """The CPUs of one NUMA node, as the CPU manager's topology has them."""
        return self.node.simulated_node.cpu_manager.topology.details().cpus_in_numa_nodes(numa_node)

    def is_active(self, pod_uid: str) -> bool:
        """Whether kubelet holds a pod of this UID as active (nothing is started for the question). Cost: O(1)."""
        return self.node.simulated_node.is_active(pod_uid)

    def remove_pod(self, pod_uid: str) -> None:
        """kubelet's removal of the active pod of this UID (nothing when there is none)."""
        sim = self.node.simulated_node
        pod = sim.active_pod(pod_uid)
        if pod is not None:
            sim.remove(pod)
