"""NFD's resources aggregator (node-feature-discovery v0.19.0, `pkg/resourcemonitor/
noderesourcesaggregator.go`): the NUMA zones of a NodeResourceTopology, from the node's
topology, its `GetAllocatableResources` answer, the memory capacity per NUMA node and the
pods a scan found.

Built once (as the updater does at its start):

- allocatable CPU ids become a pseudo-device `cpu` per NUMA node (ids the topology does not
  place are dropped); with the real devices, each device id is counted on every NUMA node of
  its entry (an entry without topology counts nowhere), and a device id belongs to the last
  NUMA node its entry lists;
- every allocatable memory block with a topology adds its whole size to each of its nodes;
- a NUMA node's CPUs that are not allocatable are its reserved CPUs.

Each aggregation:

- one zone per entry of the topology, **numbered by its position** (NFD ranges over the
  slice of nodes; on a machine whose NUMA ids are 0..n-1 this is the id);
- a zone with allocatable resources lists each of them (minus excluded names): `cpu` with
  capacity = allocatable + its reserved CPUs, memory and hugepages with the capacity read
  from the node (the allocatable when the node has no entry for it), anything else with
  capacity = allocatable; a zone with nothing allocatable lists only `cpu` at 0/0 with its
  reserved CPUs as capacity;
- each CPU or device id of a scanned pod takes one from the zone of its NUMA node (unknown
  ids are skipped; the count may go below zero);
- each memory block of a scanned pod is taken from its NUMA nodes in the order listed: a node
  at zero is skipped, the first node gives what it has, the rest comes from the next, nothing
  goes below zero (what is left over is dropped);
- `costs` come from the distances of the node whose id equals the zone's number, named by
  their index; none when there is no such node or it has no distances.

Where NFD would dereference a missing entry (a device of an excluded resource), the id is
skipped here.
"""
from __future__ import annotations

from typing import AbstractSet, Any, Mapping, Optional, Sequence

from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import Quantity
from memorymanager.server.nrt_scanner import CPU, PodResources, ResourceInfo
from memorymanager.server.nrt_zones import ZoneAmounts, node_zones
from memorymanager.server.protos.v1 import api_pb2 as v1

HUGEPAGES_PREFIX = "hugepages-"
MEMORY = "memory"

MemoryCapacity = Mapping[int, Mapping[str, int]]
"""NUMA node id -> resource name -> bytes (NFD's `NumaMemoryResources`)."""


def is_memory(name: str) -> bool:
    """`memory` or a hugepages resource."""
    return name == MEMORY or name.startswith(HUGEPAGES_PREFIX)


def hugepage_resource_name(page_size_kib: int) -> str:
    """`hugepages-2Mi` from a page size in KiB (as kubelet names it)."""
    return HUGEPAGES_PREFIX + str(Quantity.from_int(int(page_size_kib) * 1024, "BinarySI"))


def memory_capacity(machine: MachineInfo) -> dict[int, dict[str, int]]:
    """What NFD reads per NUMA node from sysfs: MemTotal, and each hugepage size's pages x size.
    A node that lists no hugepage sizes (no `hugepages` folder) gets no entry at all, so its
    memory capacity falls back to the allocatable, as in NFD."""
    out: dict[int, dict[str, int]] = {}
    for node in machine.topology:
        if not node.hugepages:
            continue
        entry = {MEMORY: int(node.memory)}
        for pages in node.hugepages:
            entry[hugepage_resource_name(pages.page_size)] = int(pages.num_pages) * int(pages.page_size) * 1024
        out[node.node_id] = entry
    return out


def logical_cpu_to_node(machine: MachineInfo) -> dict[int, int]:
    """Logical CPU id -> NUMA node id (NFD's `MakeLogicalCoreIDToNodeIDMap`)."""
    return {int(t): node.node_id for node in machine.topology for core in (node.cores or [])
            for t in (core.get("thread_ids") or [])}


class ResourcesAggregator:
    """NFD's `nodeResources`: the node's allocatable resources, ready to aggregate scans."""

    def __init__(self, machine: MachineInfo, allocatable: v1.AllocatableResourcesResponse,
                 capacity: Optional[MemoryCapacity] = None, exclude: AbstractSet[str] = frozenset()) -> None:
        self.machine = machine
        self.capacity = memory_capacity(machine) if capacity is None else capacity
        self.exclude = frozenset(exclude)
        # (resource name, ids, NUMA ids) of every allocatable device, CPUs as device `cpu`
        devices = [(d.resource_name, list(d.device_ids), [int(n.ID) for n in d.topology.nodes])
                   for d in allocatable.devices]
        cpu_node = logical_cpu_to_node(machine)
        cpus_per_node: dict[int, list[str]] = {}
        for cpu in allocatable.cpu_ids:
            if int(cpu) in cpu_node:
                cpus_per_node.setdefault(cpu_node[int(cpu)], []).append(str(int(cpu)))
        devices += [(CPU, ids, [numa]) for numa, ids in cpus_per_node.items()]

        self.allocatable: dict[int, dict[str, int]] = {}
        self.resource_numa: dict[str, dict[str, int]] = {}
        for name, ids, nodes in devices:
            per_id = self.resource_numa.setdefault(name, {})
            for numa in nodes:
                res = self.allocatable.setdefault(numa, {})
                res[name] = res.get(name, 0) + len(ids)
                for device_id in ids:
                    per_id[device_id] = numa
        for block in allocatable.memory:
            if not block.HasField("topology"):
                continue
            for n in block.topology.nodes:
                res = self.allocatable.setdefault(int(n.ID), {})
                res[block.memory_type] = res.get(block.memory_type, 0) + int(block.size)

        allocatable_cpus = {cpu for name, ids, _ in devices if name == CPU for cpu in ids}
        self.reserved_cpus: dict[int, list[str]] = {}
        for node in machine.topology:
            for core in node.cores or []:
                for thread in core.get("thread_ids") or []:
                    if str(int(thread)) not in allocatable_cpus:
                        self.reserved_cpus.setdefault(node.node_id, []).append(str(int(thread)))

    def _initial(self) -> dict[int, dict[str, ZoneAmounts]]:
        """Every zone at its allocatable amounts."""
        per_zone: dict[int, dict[str, ZoneAmounts]] = {}
        for zone in range(len(self.machine.topology)):
            reserved = len(self.reserved_cpus.get(zone, []))
            if zone not in self.allocatable:
                per_zone[zone] = {CPU: ZoneAmounts(reserved, 0, 0)}
                continue
            per_zone[zone] = {}
            for name, value in self.allocatable[zone].items():
                if name in self.exclude:
                    continue
                if name == CPU:
                    capacity = value + reserved
                elif is_memory(name):
                    capacity = self.capacity.get(zone, {}).get(name, value)
                else:
                    capacity = value
                per_zone[zone][name] = ZoneAmounts(capacity, value, value)
        return per_zone

    def amounts(self, pods: Sequence[PodResources]) -> dict[int, dict[str, ZoneAmounts]]:
        """Per zone and resource, the three amounts once the pods are taken away."""
        per_zone = self._initial()
        for pod in pods:
            for container in pod.containers:
                for resource in container.resources:
                    if is_memory(resource.name):
                        update_memory_available(per_zone, resource)
                    else:
                        self._update_available(per_zone, resource)
        return per_zone

    def _update_available(self, per_zone: dict[int, dict[str, ZoneAmounts]], resource: ResourceInfo) -> None:
        """One unit per CPU or device id from the zone of its NUMA node."""
        per_id = self.resource_numa.get(resource.name)
        if per_id is None:
            return
        for device_id in resource.data:
            numa = per_id.get(device_id)
            if numa is None or numa not in per_zone or resource.name not in per_zone[numa]:
                continue
            per_zone[numa][resource.name].available -= 1

    def costs_source(self, zone: int) -> Optional[Sequence[int]]:
        """The distances of the node whose id is `zone` (NFD's `findNodeByID`), else None."""
        for node in self.machine.topology:
            if node.node_id == zone:
                return node.distances
        return None

    def aggregate(self, pods: Sequence[PodResources]) -> list[dict[str, Any]]:
        """The zones, sorted by number (the updater's order comes from a Go map)."""
        amounts = self.amounts(pods)
        return node_zones({zone: self.costs_source(zone) for zone in amounts}, amounts)


def update_memory_available(per_zone: dict[int, dict[str, ZoneAmounts]], resource: ResourceInfo) -> None:
    """A memory block taken from its NUMA nodes in the order listed (NFD's `updateMemoryAvailable`)."""
    if not resource.numa_node_ids or len(resource.data) != 1:
        return
    try:
        size = int(resource.data[0])
    except ValueError:
        return
    for numa in resource.numa_node_ids:
        if size == 0:
            return
        if numa not in per_zone:
            continue
        if resource.name not in per_zone[numa]:
            return
        entry = per_zone[numa][resource.name]
        if entry.available == 0:
            continue
        if size >= entry.available:
            size -= entry.available
            entry.available = 0
        else:
            entry.available -= size
            size = 0
