"""Synthetic machines and pods for the benchmarks (built in code, so sizes are easy to vary)."""
from __future__ import annotations

from kubeinputs.kubelet_config import KubeletConfig, MemoryReservation
from kubeinputs.machine import MachineInfo
from kubeinputs.pod import Container, Pod, ResourceRequirements
from kubeinputs.quantity import parse_quantity
from kubeinputs.synthetic_machine import synthetic_machine

GiB = 1 << 30


def numa_machine(nodes: int, memory_per_node: int = 64 * GiB, hugepages: bool = True) -> MachineInfo:
    """`nodes` NUMA nodes of `memory_per_node` bytes, each with 512 x 2Mi and 4 x 1Gi pages."""
    return synthetic_machine(
        nodes, memory_per_node, hugepages_2mi=512 if hugepages else 0, hugepages_1gi=4 if hugepages else 0
    )


def static_config(topology_policy: str = "restricted", max_numa: int = 8) -> KubeletConfig:
    """Static memory manager with the default 100Mi hard-eviction reservation on node 0."""
    options = {"max-allowable-numa-nodes": str(max_numa)} if max_numa > 8 else {}
    return KubeletConfig(
        memory_manager_policy="Static",
        reserved_memory=[MemoryReservation(numa_node=0, limits={"memory": parse_quantity("100Mi")})],
        topology_manager_policy=topology_policy,
        topology_manager_policy_options=options,
    )


def guaranteed_pod(name: str, memory: str = "1Gi", hugepages_2mi: str = "", hugepages_1gi: str = "") -> Pod:
    """A one-container Guaranteed pod (cpu 1, the given memory and hugepages)."""
    limits = {"cpu": parse_quantity("1"), "memory": parse_quantity(memory)}
    if hugepages_2mi:
        limits["hugepages-2Mi"] = parse_quantity(hugepages_2mi)
    if hugepages_1gi:
        limits["hugepages-1Gi"] = parse_quantity(hugepages_1gi)
    resources = ResourceRequirements(requests=dict(limits), limits=dict(limits))
    return Pod(name=name, uid=name, containers=[Container(name="app", resources=resources)])
