"""The NRT object of a fleet node, computed by `memorymanager.server.nrt` from the same
PodResources messages kubelet would answer (no gRPC: the messages are built in-process).

The messages carry what the node's three managers hold: per listed container its exclusive CPUs
(the CPU manager's GetExclusiveCPUs), its devices (the device manager's GetDevices, one entry per
device and NUMA node as kubelet lists them) and its memory blocks; `GetAllocatableResources` the
CPU manager's allocatable CPUs (none under its `none` policy, so the zones then list no `cpu`), the
healthy devices and the memory manager's allocatable memory. So the zones list `cpu` (allocatable
CPUs per NUMA node, capacity adding the reserved ones), each device resource and memory and
hugepages. A pod's pod-level CPU set and memory blocks (PodLevelResourceManagers) are listed as `serve`
lists them and, as in NFD, not read: the zones count the pod-level set only through the CPU ids its
containers report (an exclusive container's own CPUs, a sharing container's rest of the set), so CPUs
of the set no container reports stay available in the zones although kubelet holds them.

`NodeNRT` keeps that object up to date pod by pod, so that its cost per admission or deletion
does not grow with the pods on the node: the updater counts the pods its scanner watches
(`nrt_scanner.is_watchable`: Guaranteed, or holding a device; CPUs only of a Guaranteed pod with
integer CPUs) and takes from the zone of each CPU and device one unit (a sum, which may go below
zero as in NFD) and draws each counted pod's memory blocks down from their NUMA nodes, greedily and
never below zero. For blocks on one NUMA node each (every block, under single-numa-node, the only
policy the filter acts on) that draw is a sum taken from allocatable, clamped at zero, in any order.
The pods fingerprint attribute is signed from each listed pod's hash, computed once per pod. While a
counted pod holds a memory block on several NUMA nodes (the draw then depends on the order of the
pods) the object is computed whole, as `node_nrt` does (tests/fleet/test_nrt_view.py compares the
two after every step).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Optional

from kubeinputs.pod import Pod
from kubeinputs.quantity import parse_quantity
from memorymanager.fleet.nrt_filter import MAX_NUMA_ID, NUMAZone, numa_zones
from memorymanager.node.api import Node
from memorymanager.server.host import (ContainerView, PodView, allocatable_of, container_cpus, container_devices,
                                       listed_containers)
from kubeinputs.features import POD_LEVEL_RESOURCES_GATE, FeatureGates
from memorymanager.server import podfingerprint
from memorymanager.server.nrt import attributes, node_resource_topology
from memorymanager.server.nrt_aggregator import ResourcesAggregator, is_memory
from memorymanager.server.nrt_scanner import CPU, ScanOptions, is_watchable
from memorymanager.server.nrt_zones import ZoneAmounts, node_zones
from memorymanager.server.podresources import Device, ProviderData, container_memory, devices_message, pod_resources
from memorymanager.server.protos.v1 import api_pb2 as v1

def provider_data(node: Node, pods: list[Pod]) -> ProviderData:
    """What the node's CPU and device managers report to PodResources for these pods' listed containers
    (the readers `serve` answers with: `memorymanager.server.host`)."""
    sim = node.simulated_node
    allocatable = allocatable_of(sim)
    data = ProviderData(allocatable_cpus=list(allocatable.cpus), allocatable_devices=list(allocatable.devices))
    for pod in pods:
        for container in listed_containers(pod, True):
            key = f"{pod.namespace}/{pod.name}/{container.name}"
            data.container_cpus[key] = list(container_cpus(sim, pod.uid, container.name))
            data.container_devices[key] = list(container_devices(sim, pod.uid, container.name))
    return data


def pod_view(node: Node, pod: Pod) -> PodView:
    """One active pod as PodResources lists it (sidecars first, then app containers), with its pod-level
    memory blocks and CPU set (PodLevelResourceManagers) as `serve` lists them; the updater's scanner reads
    neither, as NFD reads containers only."""
    containers = tuple(ContainerView(c.name, tuple(node.memory_blocks(pod.uid, c.name)))
                       for c in listed_containers(pod, True))
    pod_cpus = node.simulated_node.cpu_manager.get_pod_cpus(pod.uid)
    return PodView(pod.name, pod.namespace, pod.uid, containers, tuple(node.pod_memory_blocks(pod.uid)),
                   tuple(pod_cpus.list()) if pod_cpus is not None else ())


def pod_views(node: Node) -> list[PodView]:
    """The active pods as PodResources lists them."""
    return [pod_view(node, pod) for pod in node.active_pods()]


def allocatable_response(node: Node, providers: ProviderData) -> v1.AllocatableResourcesResponse:
    """GetAllocatableResources: allocatable CPUs, healthy devices and allocatable memory."""
    return v1.AllocatableResourcesResponse(devices=devices_message(providers.allocatable_devices),
                                           cpu_ids=list(providers.allocatable_cpus),
                                           memory=container_memory(node.allocatable_blocks()))


def _nrt(name: str, node: Node, pods: list[Pod]) -> dict:
    """The whole NRT object of `node` with these pods listed."""
    specs = {(p.namespace, p.name): p for p in node.active_pods()}  # (asking starts the node on first use)
    providers = provider_data(node, pods)
    listing = v1.ListPodResourcesResponse(pod_resources=[pod_resources(pod_view(node, p), providers) for p in pods])
    return node_resource_topology(name, node.machine, node.kubelet, allocatable_response(node, providers), listing,
                                  specs)


def node_nrt(name: str, node: Node) -> dict:
    """The whole NRT object of `node`, named `name`."""
    return _nrt(name, node, node.active_pods())


Drawn = list[tuple[int, str, int]]  # (NUMA node, resource, bytes or units) a pod draws down


class NodeNRT:
    """The NRT object of one fleet node, updated per admitted or deleted pod (see the module)."""

    def __init__(self, name: str, node: Node) -> None:
        """The node's NRT with the pods it holds now."""
        self.name = name
        self.node = node
        self.base = _nrt(name, node, [])  # no pod drawn: available == allocatable
        self.amounts: dict[int, dict[str, tuple[int, int]]] = {}  # numa -> resource -> (capacity, allocatable)
        for zone in self.base["zones"]:
            numa = int(zone["name"][len("node-"):])
            self.amounts[numa] = {r["name"]: (int(parse_quantity(r["capacity"]).value),
                                              int(parse_quantity(r["allocatable"]).value))
                                  for r in zone["resources"]}
        self.distances = {n.node_id: n.distances for n in node.machine.topology}
        providers = provider_data(node, [])  # the node is running: `_nrt` asked for its pods
        # CPU or device id -> the zone it is taken from, as the updater's aggregator maps them
        self.owner = ResourcesAggregator(node.machine, allocatable_response(node, providers)).resource_numa
        gates = FeatureGates.from_config(node.kubelet.feature_gates)
        self.scan_options = ScanOptions(pod_level_resources=gates.enabled(POD_LEVEL_RESOURCES_GATE))
        self.hashes: dict[str, int] = {}  # listed pods (every active pod) -> podfingerprint.pod_hash
        self.drawn: dict[tuple[int, str], int] = {}
        self.pods: dict[str, Drawn] = {}  # counted pods on one NUMA node per block: what each draws
        self.spanning: set[str] = set()  # counted pods with a block on several NUMA nodes
        self._object: Optional[dict] = None
        self._zones: Optional[list[tuple[int, dict[str, Fraction]]]] = None
        for pod in node.active_pods():
            self.added(pod)

    def _take(self, draws: Drawn, resource: str, ids: list[str]) -> None:
        """One unit per CPU or device id from the zone the updater maps it to (unknown ids are skipped)."""
        owner = self.owner.get(resource)
        if owner is None:
            return
        for unit in ids:
            numa = owner.get(unit)
            if numa is not None and resource in self.amounts.get(numa, {}):
                draws.append((numa, resource, 1))

    def _draws(self, pod: Pod, devices: list[tuple[Device, ...]], count_cpus: bool) -> Optional[Drawn]:
        """What a counted pod draws down (its listed containers' `devices`), or None when one of its
        memory blocks spans NUMA nodes."""
        draws: Drawn = []
        for container, held in zip(listed_containers(pod, True), devices):
            if count_cpus:
                self._take(draws, CPU, [str(c) for c in container_cpus(self.node.simulated_node, pod.uid, container.name)])
            for entry in held:
                self._take(draws, entry.resource_name, list(entry.device_ids))
            for block in self.node.memory_blocks(pod.uid, container.name):
                nodes = block.numa_affinity or []
                if block.size == 0:
                    continue
                if len(nodes) > 1:
                    return None
                if nodes and block.type in self.amounts.get(nodes[0], {}):
                    draws.append((nodes[0], block.type, block.size))
        return draws

    def added(self, pod: Pod) -> None:
        """An admitted pod (listed; counted when the updater's scanner watches it)."""
        self._object = self._zones = None
        self.hashes[pod.uid] = podfingerprint.pod_hash(pod.namespace, pod.name)
        devices = [container_devices(self.node.simulated_node, pod.uid, c.name) for c in listed_containers(pod, True)]
        listed = v1.PodResources(name=pod.name, namespace=pod.namespace, containers=[
            v1.ContainerResources(devices=devices_message(held)) for held in devices])
        counted, count_cpus = is_watchable(listed, pod, self.scan_options)
        if not counted:
            return
        draws = self._draws(pod, devices, count_cpus)
        if draws is None:
            self.spanning.add(pod.uid)
            return
        self.pods[pod.uid] = draws
        for numa, resource, size in draws:
            self.drawn[(numa, resource)] = self.drawn.get((numa, resource), 0) + size

    def removed(self, pod: Pod) -> None:
        """A deleted pod."""
        self._object = self._zones = None
        self.hashes.pop(pod.uid, None)
        self.spanning.discard(pod.uid)
        for numa, resource, size in self.pods.pop(pod.uid, ()):
            self.drawn[(numa, resource)] -= size

    def _available(self, numa: int, resource: str, allocatable: int) -> int:
        """Allocatable minus what the counted pods draw: memory never below zero, CPUs and devices as counted."""
        left = allocatable - self.drawn.get((numa, resource), 0)
        return max(0, left) if is_memory(resource) else left

    def nrt(self) -> dict:
        """The NRT object now (the same dict until the node changes: treat it as read-only)."""
        if self._object is None:
            if self.spanning:
                self._object = node_nrt(self.name, self.node)
            else:
                amounts = {numa: {res: ZoneAmounts(cap, alloc, self._available(numa, res, alloc))
                                  for res, (cap, alloc) in resources.items()}
                           for numa, resources in self.amounts.items()}
                scanned = ((podfingerprint.ATTRIBUTE, podfingerprint.sign_hashes(self.hashes.values())),) \
                    if self.hashes and self.scan_options.pods_fingerprint else ()
                self._object = dict(self.base, attributes=attributes(self.node.kubelet, scanned),
                                    zones=node_zones(self.distances, amounts))
        return self._object

    def numa_zones(self) -> list[NUMAZone]:
        """`nrt_filter.numa_zones(self.nrt())`, the zones' available amounts as the filter reads them, taken
        from the sums without printing the object and parsing it again (a fresh list each call: the
        filter subtracts from it)."""
        if self.spanning:
            return numa_zones(self.nrt())
        if self._zones is None:
            self._zones = [(numa, {res: Fraction(self._available(numa, res, alloc)) for res, (_, alloc) in resources.items()})
                           for numa, resources in sorted(self.amounts.items()) if numa < MAX_NUMA_ID]
        return [NUMAZone(numa, dict(resources)) for numa, resources in self._zones]
