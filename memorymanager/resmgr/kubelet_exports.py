"""What the `kubelet-static` backend tells about placements: a container's exported variables (its
CPUs as topology-aware exports them, its cpuset.mems, the NUMA nodes of the claims it uses), every
cached container's memory set and cpuset.cpus with its CPU request (the system collector's), and the
NodeResourceTopology zones."""
from __future__ import annotations

from cpumanager.requests import milli_value
from kubeinputs.cpuset import CPUSet, cpuset_string
from memorymanager.resmgr.cache import Container
from memorymanager.resmgr.kubelet_placement import KubeletPlacement
from memorymanager.resmgr.types import (
    CLAIMED_MEMS,
    CPUS_ATTRIBUTE,
    EXCLUSIVE_CPUS,
    MEMS,
    RESERVED_CPUS_ATTRIBUTE,
    SHARED_CPUS,
    SHARED_CPUS_ATTRIBUTE,
    TopologyZone,
    ZoneAttribute,
)
from memorymanager.resmgr.zones import numa_zones


def requests_cpu(container: Container) -> bool:
    """Whether the container requests any CPU (topology-aware exports SHARED_CPUS only for a shared portion)."""
    request = container.spec.resources.requests.get("cpu")
    return request is not None and request.sign() > 0


def export_resource_data(p: KubeletPlacement, container: Container) -> dict[str, str]:
    """As topology-aware exports a grant's CPUs: `EXCLUSIVE_CPUS`, the CPU manager's exclusive CPUs of the
    container (when it has any); else `SHARED_CPUS`, the shared pool it runs in (when the CPU manager pins
    one and the container requests CPU from it). Then `MEMS`: the container's cpuset.mems (when kubelet
    sets one); `CLAIMED_MEMS`: the NUMA nodes of the memory claims it uses (when any)."""
    data: dict[str, str] = {}
    exclusive = p.exclusive_cpus(container)
    if exclusive:
        data[EXCLUSIVE_CPUS] = str(exclusive)
    else:
        shared = p.cpuset_cpus(container)
        if shared and requests_cpu(container):
            data[SHARED_CPUS] = shared
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


def cpu_allocations(p: KubeletPlacement) -> list[tuple[list[int], int]]:
    """Every cached container's `cpuset.cpus` (the CPUs kubelet would set: exclusive, else the shared pool; none
    under the CPU manager's none policy) and its CPU request in milli-CPU, in cache order."""
    out = []
    for c in p.cache:
        text = p.cpuset_cpus(c)
        cpus = CPUSet.parse(text).list() if text else []
        out.append((cpus, milli_value(c.spec.resources.requests.get("cpu"))))
    return out


def cpu_attributes(p: KubeletPlacement) -> dict[int, tuple[ZoneAttribute, ...]]:
    """Per NUMA node, when the CPU manager pins CPUs (its static policy): `cpuset`, the node's CPUs it can
    assign (all but the reserved); `shared cpuset`, the node's CPUs in the shared pool now; `reserved
    cpuset`, the node's reserved CPUs (when it has any). None under the none policy."""
    shared, reserved = p.shared_cpus(), p.reserved_cpus()
    if not shared:
        return {}
    out: dict[int, tuple[ZoneAttribute, ...]] = {}
    for numa in p.node.machine_state():
        cpus = p.numa_cpus(numa)
        attributes = [ZoneAttribute(CPUS_ATTRIBUTE, str(cpus.difference(reserved))),
                      ZoneAttribute(SHARED_CPUS_ATTRIBUTE, str(cpus.intersection(shared)))]
        if cpus.intersection(reserved):
            attributes.append(ZoneAttribute(RESERVED_CPUS_ATTRIBUTE, str(cpus.intersection(reserved))))
        out[numa] = tuple(attributes)
    return out


def topology_zones(p: KubeletPlacement) -> list[TopologyZone]:
    """One zone per NUMA node (`memory set` attribute, and the CPU attributes of `cpu_attributes`);
    per-container sub-zones with `containerZones` (`cpuset`, when the container has one, and `memory set`)."""
    subzones = []
    if p.container_zones:
        for c in p.cache:
            memory: dict[str, int] = {}
            for block in p.blocks(c.pod_uid, c.name) or []:
                memory[block.type] = memory.get(block.type, 0) + block.size
            subzones.append((c.pretty_name(), p.container_memset(c), memory, p.cpuset_cpus(c)))
    return numa_zones(p.node.machine_state(), subzones, cpu_attributes(p))
