"""Builders shared by the memory-manager core tests (machine states, pods, a fake affinity store).

Sizes follow upstream's test constants: MB = 1 MiB, GB = 1 GiB.
"""
from __future__ import annotations

from typing import Iterable, Optional

from kubeinputs.machine import HugePagesInfo, MachineInfo, Node
from kubeinputs.pod import Container, Pod, ResourceRequirements
from kubeinputs.quantity import parse_quantity
from state.state_mem import MemoryState
from state.types import Block, MemoryTable, NUMANodeState
from topologymanager.bitmask import new_bitmask
from kubeinputs.features import FeatureGates
from topologymanager.hint import TopologyHint

MB = 1024 * 1024
GB = 1024 * MB
MEM = "memory"
HP1G = "hugepages-1Gi"
HP2M = "hugepages-2Mi"
PAGE_1G_KIB = 1048576
PAGE_2M_KIB = 2048


def mt(allocatable: int, free: int, reserved: int, system_reserved: int, total: int) -> MemoryTable:
    """A memory table in upstream's field order (Allocatable, Free, Reserved, SystemReserved, TotalMemSize)."""
    return MemoryTable(
        total_mem_size=total, system_reserved=system_reserved, allocatable=allocatable, reserved=reserved, free=free
    )


def ns(tables: dict, cells: Optional[list[int]], assignments: int = 0) -> NUMANodeState:
    """A NUMA node state."""
    return NUMANodeState(number_of_assignments=assignments, memory_map=dict(tables), cells=cells)


def blk(nodes: list[int], rtype: str, size: int) -> Block:
    """A memory block."""
    return Block(numa_affinity=list(nodes), type=rtype, size=size)


def machine(*nodes: tuple) -> MachineInfo:
    """MachineInfo from (node_id, memory_bytes, [(page_size_kib, num_pages), ...]) tuples."""
    topology = []
    for node in nodes:
        node_id, memory = node[0], node[1]
        pages = node[2] if len(node) > 2 else []
        topology.append(Node(node_id=node_id, memory=memory, hugepages=[HugePagesInfo(p, n) for p, n in pages]))
    return MachineInfo(topology=topology)


def q(text: str):
    return parse_quantity(text)


def resources(requests: dict, limits: Optional[dict] = None) -> ResourceRequirements:
    """ResourceRequirements from {name: quantity string}; limits default to the requests."""
    limits = requests if limits is None else limits
    return ResourceRequirements(
        requests={k: q(v) for k, v in requests.items()}, limits={k: q(v) for k, v in limits.items()}
    )


def guaranteed(memory: str, **hugepages: str) -> ResourceRequirements:
    """Guaranteed container resources: cpu 1000Mi (as upstream), memory and hugepages (hp1g=..., hp2m=...)."""
    values = {"cpu": "1000Mi", MEM: memory}
    for key, value in hugepages.items():
        values[{"hp1g": HP1G, "hp2m": HP2M}[key]] = value
    return resources(values)


REQ_GUARANTEED = guaranteed("1Gi", hp1g="1Gi")
REQ_BURSTABLE = resources(
    {"cpu": "1000Mi", MEM: "1Gi", HP1G: "1Gi"}, {"cpu": "1000Mi", MEM: "2Gi", HP1G: "2Gi"}
)
POD_LEVEL_GUARANTEED = resources({"cpu": "1000m", MEM: "1Gi"})
POD_LEVEL_BURSTABLE = resources({"cpu": "500m", MEM: "1Gi"}, {"cpu": "1000m", MEM: "1Gi"})


def ctr(name: str, res: ResourceRequirements = None, restart_policy: Optional[str] = None) -> Container:
    return Container(name=name, resources=res if res is not None else ResourceRequirements(), restart_policy=restart_policy)


def get_pod(uid: str, container_name: str, res: ResourceRequirements, pod_resources=None) -> Pod:
    """upstream getPod / getPodWithPodLevelResources."""
    return Pod(name=uid, uid=uid, containers=[ctr(container_name, res)], resources=pod_resources)


def pod_with_init(uid: str, containers: Iterable[Container], init_containers: Iterable[Container]) -> Pod:
    """upstream getPodWithInitContainers."""
    return Pod(name=uid, uid=uid, containers=list(containers), init_containers=list(init_containers))


class FakeStore:
    """The topology manager's fake: GetAffinity returns one configured hint (default: the zero hint)."""

    def __init__(self, hint: Optional[TopologyHint] = None):
        self.hint = hint if hint is not None else TopologyHint()

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hint


def hint(nodes: Optional[list[int]], preferred: bool = False) -> TopologyHint:
    return TopologyHint(None if nodes is None else new_bitmask(*nodes), preferred)


def gates(**overrides: bool) -> FeatureGates:
    return FeatureGates.from_config(overrides)


def new_state(machine_state=None, assignments=None) -> MemoryState:
    state = MemoryState()
    if machine_state is not None:
        state.set_machine_state(machine_state)
    if assignments is not None:
        state.set_memory_assignments(assignments)
    return state


def blocks_equal(a: list[Block], b: list[Block]) -> bool:
    """Multiset equality of blocks (upstream areMemoryBlocksEqual)."""
    key = lambda x: (tuple(x.numa_affinity or []), x.type, x.size)  # noqa: E731
    return sorted(map(key, a or [])) == sorted(map(key, b or []))


def assignments_equal(a: dict, b: dict) -> bool:
    """upstream areContainerMemoryAssignmentsEqual (same pods, containers, block multisets)."""
    if len(a) != len(b):
        return False
    for pod_uid, containers in a.items():
        if pod_uid not in b or len(containers) != len(b[pod_uid]):
            return False
        for name, blocks in containers.items():
            if name not in b[pod_uid] or not blocks_equal(blocks, b[pod_uid][name]):
                return False
    return True


def hints_to_plain(hints):
    """{resource: [(nodes, preferred), ...]} for readable assertions (None stays None)."""
    if hints is None:
        return None
    return {r: [(h.nodes(), h.preferred) for h in hs] for r, hs in hints.items()}
