"""The NRT object of a fleet node, computed by `memorymanager.server.nrt` from the same
PodResources messages kubelet would answer (no gRPC: the messages are built in-process).

The simulated node has no CPU manager and no device plugins, so its PodResources answers carry
memory blocks only: the zones list memory and hugepages, never cpu or devices.
"""
from __future__ import annotations

from memorymanager.node.api import Node
from memorymanager.server.host import ContainerView, PodView, listed_containers
from memorymanager.server.nrt import node_resource_topology
from memorymanager.server.podresources import ProviderData, container_memory, pod_resources
from memorymanager.server.protos.v1 import api_pb2 as v1

_NO_PROVIDERS = ProviderData()


def pod_views(node: Node) -> list[PodView]:
    """The active pods as PodResources lists them (sidecars first, then app containers)."""
    views = []
    for pod in node.active_pods():
        containers = tuple(ContainerView(c.name, tuple(node.memory_blocks(pod.uid, c.name)))
                           for c in listed_containers(pod, True))
        views.append(PodView(pod.name, pod.namespace, pod.uid, containers, tuple(node.pod_memory_blocks(pod.uid))))
    return views


def node_nrt(name: str, node: Node) -> dict:
    """The whole NRT object of `node`, named `name`."""
    allocatable = v1.AllocatableResourcesResponse(memory=container_memory(node.allocatable_blocks()))
    listing = v1.ListPodResourcesResponse(pod_resources=[pod_resources(v, _NO_PROVIDERS) for v in pod_views(node)])
    specs = {(p.namespace, p.name): p for p in node.active_pods()}
    return node_resource_topology(name, node.machine, node.kubelet, allocatable, listing, specs)
