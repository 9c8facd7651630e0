"""NFD's PodResources scanner (node-feature-discovery v0.19.0, `pkg/resourcemonitor/
podresourcesscanner.go`): from a PodResources `List` answer, the pods and the resources of
theirs the topology-updater takes away from the NUMA zones, and the pod-set fingerprint.

- The fingerprint covers every listed pod (before any filtering) and is given only when the
  answer lists at least one pod and fingerprinting is on (the updater's `-pods-fingerprint`,
  on by default).
- A pod is *watchable* when it is in the watched namespace (`*`: all) and is Guaranteed or
  reports a device. Its CPU ids count only when it is Guaranteed and at least one of its
  containers (init or app) asks for a whole number of CPUs (`Value()*1000 == MilliValue()`,
  so `cpu: 0` counts as whole and `1500m` does not). The pod spec comes from the API server
  in NFD; here from the node (`PodLookup`). Without any pod specs (a PodResources socket
  asked from outside), a pod is watchable when it reports a CPU id, a device or a memory
  block, and its CPU ids count: kubelet reports CPU ids only for exclusive CPUs and memory
  blocks only for Guaranteed pods, so this gives NFD's answer on any kubelet's listing.
- Per container: the CPU ids (as decimal strings) under `cpu`, each device entry under its
  resource name with its NUMA nodes, each memory block of non-zero size under its memory type
  with its size as the one datum and its NUMA nodes in the order listed. A container with
  none of these is dropped, and a pod left without containers too. Pod-level blocks
  (`PodResources.memory`) and pod-level CPU ids are not read, as in NFD.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from kubeinputs.errors import Error
from kubeinputs.pod import Container, Pod
from kubeinputs.qos import GUARANTEED, get_pod_qos
from memorymanager.server import podfingerprint
from memorymanager.server.protos.v1 import api_pb2 as v1

ALL_NAMESPACES = "*"
CPU = "cpu"

PodLookup = Callable[[str, str], Optional[Pod]]
"""(namespace, name) -> the pod's spec, None when it is unknown."""


class ScanError(Error):
    """The scan cannot decide about a listed pod (its spec is unknown to the lookup)."""


@dataclass(frozen=True)
class ResourceInfo:
    """One resource of a container: name, IDs (or a memory block's size) and NUMA nodes."""

    name: str
    data: tuple[str, ...]
    numa_node_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class ContainerResources:
    """A container and the resources of its that count."""

    name: str
    resources: tuple[ResourceInfo, ...]


@dataclass(frozen=True)
class PodResources:
    """A watchable pod and its containers that hold something."""

    name: str
    namespace: str
    containers: tuple[ContainerResources, ...]


@dataclass(frozen=True)
class ScanResponse:
    """What one scan gives the updater: the pods to draw down and attributes (the fingerprint)."""

    pod_resources: tuple[PodResources, ...] = ()
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ScanOptions:
    """The updater's flags the scan reads, and the PodLevelResources gate of its QoS helper."""

    namespace: str = ALL_NAMESPACES
    pods_fingerprint: bool = True
    pod_level_resources: bool = True


def _ceil_scaled(value: Fraction, scale: int) -> int:
    """Go's Quantity.ScaledValue: the value in units of 10^scale, rounded up."""
    return math.ceil(value * Fraction(10) ** -scale)


def has_integral_cpus(container: Container) -> bool:
    """The container requests CPU and the request is a whole number of CPUs (NFD's
    `hasIntegralCPUs`: Value()*1000 == MilliValue(), both rounded up)."""
    cpu = container.resources.requests.get(CPU)
    if cpu is None:
        return False
    return _ceil_scaled(cpu.value, 0) * 1000 == _ceil_scaled(cpu.value, -3)


def check_pod_exclusive_cpus(pod: Pod) -> bool:
    """Any init or app container asks for whole CPUs (NFD's `checkPodExclusiveCPUs`)."""
    return any(has_integral_cpus(c) for c in [*pod.init_containers, *pod.containers])


def has_device(pod: v1.PodResources) -> bool:
    """Some container of the listed pod reports a device."""
    return any(len(c.devices) for c in pod.containers)


def is_watchable(pod: v1.PodResources, spec: Optional[Pod], options: ScanOptions) -> tuple[bool, bool]:
    """(the pod counts at all, its CPU ids count); `spec` None: the rule without pod specs."""
    if options.namespace != ALL_NAMESPACES and options.namespace != pod.namespace:
        return False, False
    if spec is None:
        reports = any(len(c.cpu_ids) or len(c.devices) or len(c.memory) for c in pod.containers)
        return reports, True
    guaranteed = get_pod_qos(spec, options.pod_level_resources) == GUARANTEED
    return guaranteed or has_device(pod), guaranteed and check_pod_exclusive_cpus(spec)


def _numa_ids(message: v1.ContainerDevices | v1.ContainerMemory) -> tuple[int, ...]:
    """The NUMA ids of a message's topology, in the order listed (none without a topology)."""
    if not message.HasField("topology"):
        return ()
    return tuple(int(n.ID) for n in message.topology.nodes)


def container_resources(container: v1.ContainerResources, count_cpus: bool) -> ContainerResources:
    """The resources of one listed container that the updater takes away."""
    resources: list[ResourceInfo] = []
    if count_cpus and len(container.cpu_ids):
        resources.append(ResourceInfo(CPU, tuple(str(int(c)) for c in container.cpu_ids)))
    for device in container.devices:
        resources.append(ResourceInfo(device.resource_name, tuple(device.device_ids), _numa_ids(device)))
    for block in container.memory:
        if int(block.size) == 0:
            continue
        resources.append(ResourceInfo(block.memory_type, (str(int(block.size)),), _numa_ids(block)))
    return ContainerResources(container.name, tuple(resources))


def scan(listing: v1.ListPodResourcesResponse, pods: Optional[PodLookup] = None,
         options: ScanOptions = ScanOptions()) -> ScanResponse:
    """One scan of a `List` answer. `pods` finds a pod's spec; None: no specs are known (the
    rule for a socket asked from outside). A listed pod the lookup does not know is a
    `ScanError`, as NFD fails a scan whose pod it cannot get from the API server."""
    attributes: tuple[tuple[str, str], ...] = ()
    if options.pods_fingerprint and len(listing.pod_resources):
        signature = podfingerprint.sign((p.namespace, p.name) for p in listing.pod_resources)
        attributes = ((podfingerprint.ATTRIBUTE, signature),)
    found: list[PodResources] = []
    for pod in listing.pod_resources:
        spec = None
        if pods is not None and (options.namespace == ALL_NAMESPACES or options.namespace == pod.namespace):
            spec = pods(pod.namespace, pod.name)
            if spec is None:
                raise ScanError(f"checking if pod in a namespace is watchable, namespace:{pod.namespace}, "
                                f"pod name {pod.name}: the pod is not known")
        watchable, count_cpus = is_watchable(pod, spec, options)
        if not watchable:
            continue
        containers = [container_resources(c, count_cpus) for c in pod.containers]
        kept = tuple(c for c in containers if c.resources)
        if kept:
            found.append(PodResources(pod.name, pod.namespace, kept))
    return ScanResponse(tuple(found), attributes)
