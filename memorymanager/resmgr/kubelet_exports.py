"""What the `kubelet-static` backend tells about placements: a container's exported variables (its
cpuset.mems, the NUMA nodes of the claims it uses), every cached container's memory set, and the
NodeResourceTopology zones."""
from __future__ import annotations

from kubeinputs.cpuset import cpuset_string
from memorymanager.resmgr.cache import Container
from memorymanager.resmgr.kubelet_placement import KubeletPlacement
from memorymanager.resmgr.types import CLAIMED_MEMS, MEMS, TopologyZone
from memorymanager.resmgr.zones import numa_zones


def export_resource_data(p: KubeletPlacement, container: Container) -> dict[str, str]:
    """`MEMS`: the container's cpuset.mems (when kubelet sets one); `CLAIMED_MEMS`: the NUMA nodes of the
    memory claims it uses (when any)."""
    data: dict[str, str] = {}
    mems = p.container_memset(container)
    if mems:
        data[MEMS] = cpuset_string(mems)
    claimed: set[int] = set()
    for uid in container.claims:
        record = p.claims.get(uid)
        if record is not None:
            claimed.update(record.numa_nodes())
    if claimed:
        data[CLAIMED_MEMS] = cpuset_string(claimed)
    return data


def memsets(p: KubeletPlacement) -> list[list[int]]:
    """The memory set of every cached container, in cache order."""
    return [p.container_memset(c) for c in p.cache]


def topology_zones(p: KubeletPlacement) -> list[TopologyZone]:
    """One zone per NUMA node (`memory set` attribute); per-container sub-zones with `containerZones`."""
    subzones = []
    if p.container_zones:
        for c in p.cache:
            memory: dict[str, int] = {}
            for block in p.blocks(c.pod_uid, c.name) or []:
                memory[block.type] = memory.get(block.type, 0) + block.size
            subzones.append((c.pretty_name(), p.container_memset(c), memory))
    return numa_zones(p.node.machine_state(), subzones)
