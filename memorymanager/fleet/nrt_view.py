"""The NRT object of a fleet node, computed by `memorymanager.server.nrt` from the same
PodResources messages kubelet would answer (no gRPC: the messages are built in-process).

The simulated node has no CPU manager and no device plugins, so its PodResources answers carry
memory blocks only: the zones list memory and hugepages, never cpu or devices.

`NodeNRT` keeps that object up to date pod by pod, so that its cost per admission or deletion
does not grow with the pods on the node: the updater counts the pods its scanner watches
(`nrt_scanner.is_watchable`: Guaranteed, or holding a device) and draws each counted pod's blocks
down from their NUMA nodes, greedily and never below zero, and for blocks on one NUMA node each
(every block, under single-numa-node, the only policy the filter acts on) that draw is a sum
taken from allocatable, clamped at zero, in any order. The pods fingerprint attribute is signed
from each listed pod's hash, computed once per pod. While a counted pod holds a block on several
NUMA nodes (the draw then depends on the order of the pods) the object is computed whole, as
`node_nrt` does (tests/fleet/test_nrt_view.py compares the two after every step).
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.pod import Pod
from kubeinputs.quantity import parse_quantity
from memorymanager.node.api import Node
from memorymanager.server.host import ContainerView, PodView, listed_containers
from kubeinputs.features import POD_LEVEL_RESOURCES_GATE, FeatureGates
from memorymanager.server import podfingerprint
from memorymanager.server.nrt import attributes, node_resource_topology
from memorymanager.server.nrt_zones import ZoneAmounts, node_zones
from memorymanager.server.nrt_scanner import ScanOptions, is_watchable
from memorymanager.server.podresources import ProviderData, container_memory, pod_resources
from memorymanager.server.protos.v1 import api_pb2 as v1

_NO_PROVIDERS = ProviderData()


def pod_view(node: Node, pod: Pod) -> PodView:
    """One active pod as PodResources lists it (sidecars first, then app containers)."""
    containers = tuple(ContainerView(c.name, tuple(node.memory_blocks(pod.uid, c.name)))
                       for c in listed_containers(pod, True))
    return PodView(pod.name, pod.namespace, pod.uid, containers, tuple(node.pod_memory_blocks(pod.uid)))


def pod_views(node: Node) -> list[PodView]:
    """The active pods as PodResources lists them."""
    return [pod_view(node, pod) for pod in node.active_pods()]


def _nrt(name: str, node: Node, views: list[PodView]) -> dict:
    """The whole NRT object of `node` with these pods listed."""
    allocatable = v1.AllocatableResourcesResponse(memory=container_memory(node.allocatable_blocks()))
    listing = v1.ListPodResourcesResponse(pod_resources=[pod_resources(v, _NO_PROVIDERS) for v in views])
    specs = {(p.namespace, p.name): p for p in node.active_pods()}
    return node_resource_topology(name, node.machine, node.kubelet, allocatable, listing, specs)


def node_nrt(name: str, node: Node) -> dict:
    """The whole NRT object of `node`, named `name`."""
    return _nrt(name, node, pod_views(node))


Drawn = list[tuple[int, str, int]]  # (NUMA node, resource, bytes) a pod draws down


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
        gates = FeatureGates.from_config(node.kubelet.feature_gates)
        self.scan_options = ScanOptions(pod_level_resources=gates.enabled(POD_LEVEL_RESOURCES_GATE))
        self.hashes: dict[str, int] = {}  # listed pods (every active pod) -> podfingerprint.pod_hash
        self.drawn: dict[tuple[int, str], int] = {}
        self.pods: dict[str, Drawn] = {}  # counted pods on one NUMA node per block: what each draws
        self.spanning: set[str] = set()  # counted pods with a block on several NUMA nodes
        self._object: Optional[dict] = None
        for pod in node.active_pods():
            self.added(pod)

    def _draws(self, pod: Pod) -> Optional[Drawn]:
        """What a counted pod draws down, or None when one of its blocks spans NUMA nodes."""
        draws: Drawn = []
        for container in listed_containers(pod, True):
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
        self._object = None
        self.hashes[pod.uid] = podfingerprint.pod_hash(pod.namespace, pod.name)
        listed = v1.PodResources(name=pod.name, namespace=pod.namespace)  # no devices on a fleet node
        if not is_watchable(listed, pod, self.scan_options)[0]:
            return
        draws = self._draws(pod)
        if draws is None:
            self.spanning.add(pod.uid)
            return
        self.pods[pod.uid] = draws
        for numa, resource, size in draws:
            self.drawn[(numa, resource)] = self.drawn.get((numa, resource), 0) + size

    def removed(self, pod: Pod) -> None:
        """A deleted pod."""
        self._object = None
        self.hashes.pop(pod.uid, None)
        self.spanning.discard(pod.uid)
        for numa, resource, size in self.pods.pop(pod.uid, ()):
            self.drawn[(numa, resource)] -= size

    def nrt(self) -> dict:
        """The NRT object now (the same dict until the node changes: treat it as read-only)."""
        if self._object is None:
            if self.spanning:
                self._object = node_nrt(self.name, self.node)
            else:
                amounts = {numa: {res: ZoneAmounts(cap, alloc, max(0, alloc - self.drawn.get((numa, res), 0)))
                                  for res, (cap, alloc) in resources.items()}
                           for numa, resources in self.amounts.items()}
                scanned = ((podfingerprint.ATTRIBUTE, podfingerprint.sign_hashes(self.hashes.values())),) \
                    if self.hashes and self.scan_options.pods_fingerprint else ()
                self._object = dict(self.base, attributes=attributes(self.node.kubelet, scanned),
                                    zones=node_zones(self.distances, amounts))
        return self._object
