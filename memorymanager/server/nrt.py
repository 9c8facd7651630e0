"""The `topology.node.k8s.io/v1alpha2` NodeResourceTopology object NFD's topology-updater would
publish for a node, computed from PodResources answers as the updater computes it.

Inputs are the wire messages (a v1 `ListPodResourcesResponse` and an
`AllocatableResourcesResponse`), the machine (what the updater reads from sysfs: NUMA nodes,
their CPUs, memory, hugepages and distances) and the kubelet configuration (what it reads
for the topology manager attributes). The same code serves a live socket and a scenario run
in-process. See docs/nrt.md for the rules, in short:

- one zone per NUMA node, `node-N`, type `Node`, `costs` from the node's distances;
- allocatable per zone and resource: the sum of the GetAllocatableResources memory blocks on
  that node, the count of allocatable CPU ids and device ids on it;
- capacity: memory and hugepages from the machine (MemTotal, pages x size), CPUs counted
  with the reserved ones, devices = allocatable;
- available starts at allocatable; each counted pod's blocks are drawn down, one block at a
  time, greedily over its NUMA nodes in ascending order (a multi-NUMA block empties the
  lowest node first), never below zero; CPU and device ids take one unit each;
- a pod counts when it has devices, or when its CPU requests are integral (NFD's
  "exclusive CPUs" test). Without the pod specs (a live socket) a pod counts when it reports
  any CPU id, device or memory block.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from kubeinputs.kubelet_config import KubeletConfig
from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import Quantity

API_VERSION = "topology.node.k8s.io/v1alpha2"
KIND = "NodeResourceTopology"
HUGEPAGES_PREFIX = "hugepages-"

# kubelet policy name -> the deprecated v1alpha2 `topologyPolicies` value stem
_POLICY_STEMS = {"none": "None", "best-effort": "BestEffort", "restricted": "Restricted",
                 "single-numa-node": "SingleNUMANode"}


def zone_name(numa: int) -> str:
    """The updater's zone name of a NUMA node."""
    return f"node-{numa}"


def quantity(value: int) -> str:
    """resource.NewQuantity(value, DecimalSI).String()."""
    return str(Quantity.from_int(int(value)))


def option_attribute(option: str) -> str:
    """`prefer-closest-numa-nodes` -> `topologyManagerOptionPreferClosestNumaNodes`."""
    return "topologyManagerOption" + "".join(part[:1].upper() + part[1:] for part in option.split("-") if part)


def topology_policy(policy: str, scope: str) -> str:
    """The deprecated `topologyPolicies` entry (`SingleNUMANodeContainerLevel`, `None`, ...)."""
    stem = _POLICY_STEMS.get(policy, "None")
    if stem == "None":
        return "None"
    return stem + ("PodLevel" if scope == "pod" else "ContainerLevel")


def attributes(config: KubeletConfig) -> list[dict[str, str]]:
    """The top-level attributes scheduler-plugins reads: policy, scope, then each policy option."""
    attrs = [
        {"name": "topologyManagerPolicy", "value": config.topology_manager_policy},
        {"name": "topologyManagerScope", "value": config.topology_manager_scope},
    ]
    for option, value in sorted(dict(config.topology_manager_policy_options).items()):
        attrs.append({"name": option_attribute(option), "value": str(value)})
    return attrs


@dataclass
class ZoneAmounts:
    """One resource of one NUMA zone: capacity >= allocatable >= available."""

    capacity: int
    allocatable: int
    available: int


def _node_cpus(machine: MachineInfo) -> dict[int, list[int]]:
    """The logical CPUs of each NUMA node."""
    return {
        node.node_id: [int(t) for core in (node.cores or []) for t in (core.get("thread_ids") or [])]
        for node in machine.topology
    }


def _memory_capacity(machine: MachineInfo) -> dict[int, dict[str, int]]:
    """Per NUMA node: MemTotal and each hugepage size's pages x size (what the updater reads)."""
    out: dict[int, dict[str, int]] = {}
    for node in machine.topology:
        entry = {"memory": int(node.memory)}
        for pages in node.hugepages or []:
            name = HUGEPAGES_PREFIX + str(Quantity.from_int(int(pages.page_size) * 1024, "BinarySI"))
            entry[name] = int(pages.num_pages) * int(pages.page_size) * 1024
        out[node.node_id] = entry
    return out


def _is_memory(name: str) -> bool:
    return name == "memory" or name.startswith(HUGEPAGES_PREFIX)


def integral_cpus(pod: Any) -> bool:
    """NFD's exclusive-CPU test: every container (init and app) requesting CPU asks for whole
    CPUs, and the pod asks for some."""
    total = 0
    for container in list(pod.init_containers) + list(pod.containers):
        cpu = container.resources.requests.get("cpu")
        if cpu is None:
            continue
        value = cpu.value
        if value != int(value):
            return False
        total += int(value)
    return total != 0


def _watched(pod: Any, specs: Optional[Mapping[tuple[str, str], Any]]) -> tuple[bool, bool]:
    """(counted at all, its CPU ids counted)."""
    has_device = any(len(c.devices) for c in pod.containers)
    if specs is None:
        reports = any(len(c.cpu_ids) or len(c.devices) or len(c.memory) for c in pod.containers)
        return reports, True
    spec = specs.get((pod.namespace, pod.name))
    exclusive = spec is not None and integral_cpus(spec)
    return exclusive or has_device, exclusive


def zones(machine: MachineInfo, allocatable: Any, listing: Any,
          specs: Optional[Mapping[tuple[str, str], Any]] = None) -> list[dict[str, Any]]:
    """The zones, sorted by NUMA id; resources sorted by name (the updater's map order is random)."""
    node_ids = [n.node_id for n in machine.topology]
    cpus_of = _node_cpus(machine)
    cpu_node = {cpu: numa for numa, cpus in cpus_of.items() for cpu in cpus}
    mem_capacity = _memory_capacity(machine)

    # allocatable per node: devices (CPUs are a device named cpu), then memory blocks
    device_node: dict[str, dict[str, int]] = {}
    per_node: dict[int, dict[str, int]] = {}
    allocatable_cpus = [int(c) for c in allocatable.cpu_ids if int(c) in cpu_node]
    for cpu in allocatable_cpus:
        per_node.setdefault(cpu_node[cpu], {}).setdefault("cpu", 0)
        per_node[cpu_node[cpu]]["cpu"] += 1
        device_node.setdefault("cpu", {})[str(cpu)] = cpu_node[cpu]
    for device in allocatable.devices:
        for numa in device.topology.nodes:
            res = per_node.setdefault(int(numa.ID), {})
            res[device.resource_name] = res.get(device.resource_name, 0) + len(device.device_ids)
            for device_id in device.device_ids:
                device_node.setdefault(device.resource_name, {})[device_id] = int(numa.ID)
    for block in allocatable.memory:
        for numa in block.topology.nodes:
            res = per_node.setdefault(int(numa.ID), {})
            res[block.memory_type] = res.get(block.memory_type, 0) + int(block.size)
    allocatable_set = set(allocatable_cpus)
    reserved_cpus = {numa: [c for c in cpus if c not in allocatable_set] for numa, cpus in cpus_of.items()}

    amounts: dict[int, dict[str, ZoneAmounts]] = {}
    for numa in node_ids:
        if numa not in per_node:  # nothing allocatable: all its CPUs are reserved
            amounts[numa] = {"cpu": ZoneAmounts(len(reserved_cpus.get(numa, [])), 0, 0)}
            continue
        amounts[numa] = {}
        for name, value in per_node[numa].items():
            if name == "cpu":
                capacity = value + len(reserved_cpus.get(numa, []))
            elif _is_memory(name):
                capacity = mem_capacity.get(numa, {}).get(name, value)
            else:
                capacity = value
            amounts[numa][name] = ZoneAmounts(capacity, value, value)

    for pod in listing.pod_resources:
        counted, count_cpus = _watched(pod, specs)
        if not counted:
            continue
        for container in pod.containers:
            if count_cpus:
                for cpu in container.cpu_ids:
                    _take_unit(amounts, device_node, "cpu", str(cpu))
            for device in container.devices:
                for device_id in device.device_ids:
                    _take_unit(amounts, device_node, device.resource_name, device_id)
            for block in container.memory:
                if int(block.size) == 0:
                    continue
                _draw_down(amounts, block.memory_type, int(block.size), [int(n.ID) for n in block.topology.nodes])

    return node_zones({n.node_id: n.distances for n in machine.topology}, amounts)


def node_zones(distances: Mapping[int, Optional[list[int]]],
               amounts: Mapping[int, Mapping[str, ZoneAmounts]]) -> list[dict[str, Any]]:
    """The one builder of NUMA-node zones in the NRT form, for the NRT export and the resource
    manager's topology zones alike: per node (by id) `node-N`, type `Node`, `costs` from the
    distances (when known) and the resources sorted by name with their three amounts."""
    out = []
    for numa in sorted(distances):
        zone: dict[str, Any] = {"name": zone_name(numa), "type": "Node"}
        if distances[numa] is not None:
            zone["costs"] = [{"name": zone_name(j), "value": int(d)} for j, d in enumerate(distances[numa])]
        zone["resources"] = [
            {"name": name, "capacity": quantity(a.capacity), "allocatable": quantity(a.allocatable),
             "available": quantity(a.available)}
            for name, a in sorted(amounts.get(numa, {}).items())
        ]
        out.append(zone)
    return out


def _take_unit(amounts: dict[int, dict[str, ZoneAmounts]], device_node: dict[str, dict[str, int]],
               resource: str, device_id: str) -> None:
    """One CPU or device taken from its NUMA node (unknown ones are skipped, as the updater does)."""
    numa = device_node.get(resource, {}).get(device_id)
    if numa is None or numa not in amounts or resource not in amounts[numa]:
        return
    amounts[numa][resource].available -= 1


def _draw_down(amounts: dict[int, dict[str, ZoneAmounts]], resource: str, size: int, nodes: list[int]) -> None:
    """A memory block taken from its NUMA nodes in the order listed (ascending from kubelet)."""
    for numa in nodes:
        if size == 0:
            return
        if numa not in amounts:
            continue
        if resource not in amounts[numa]:
            return
        entry = amounts[numa][resource]
        if entry.available == 0:
            continue
        if size >= entry.available:
            size -= entry.available
            entry.available = 0
        else:
            entry.available -= size
            size = 0


def node_resource_topology(node_name: str, machine: MachineInfo, config: KubeletConfig, allocatable: Any,
                           listing: Any, specs: Optional[Mapping[tuple[str, str], Any]] = None) -> dict[str, Any]:
    """The whole NRT object."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": node_name},
        "topologyPolicies": [topology_policy(config.topology_manager_policy, config.topology_manager_scope)],
        "attributes": attributes(config),
        "zones": zones(machine, allocatable, listing, specs),
    }


def from_host(host: Any, node_name: str, providers: Any = None) -> dict[str, Any]:
    """The NRT of a served node, from the same PodResources messages its server answers
    (`providers`: the CPU ids and devices it reports, a `ProviderData`)."""
    from memorymanager.server.podresources import ProviderData, container_memory, devices_message, pod_resources
    from memorymanager.server.protos.v1 import api_pb2 as v1

    providers = providers or ProviderData()
    listing = v1.ListPodResourcesResponse(pod_resources=[pod_resources(v, providers) for v in host.pod_views()])
    allocatable = v1.AllocatableResourcesResponse(
        devices=devices_message(providers.allocatable_devices), cpu_ids=list(providers.allocatable_cpus),
        memory=container_memory(host.allocatable_blocks()))
    specs = {(p.namespace, p.name): p for p in host.locked(host.node.active_pods)}
    return node_resource_topology(node_name, host.node.machine, host.node.kubelet, allocatable, listing, specs)
