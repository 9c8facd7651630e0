"""The device manager as a hint provider (topology_hints.go, kubelet v1.37).

Per device plugin resource the container (or pod) asks for:

* no device of the resource reports NUMA nodes -> nil hints (no preference);
* the container already holds devices of it (after a restart) -> the hints of exactly those
  devices, or [] when it holds another number than it asks for;
* fewer available (healthy, unallocated) plus re-usable devices than asked -> [];
* else generateDeviceTopologyHints: every mask of D, the NUMA nodes hosting the resource's
  registered devices (#138244, in v1.37: masks over D only, not over every machine node; a
  machine of 64 nodes with GPUs on 8 has 255 masks to look at, not 2^64), in IterateBitMasks
  order, where the re-usable devices with topology all touch the mask and enough devices do;
  preferred = masks as narrow as the narrowest any registered devices could fill.

Devices without topology never count for a mask. Pod scope sums the pod's requests
(PodLimits) and ignores re-usable devices, as kubelet does.

Example: two GPUs on node 0, one on node 1, of a 4-node machine; one GPU asked for:

>>> from kubeinputs.devices import Device
>>> state = DeviceState()
>>> state.plugins.update("x.io/gpu", [Device("a", (0,)), Device("b", (0,)), Device("c", (1,))])
>>> generate_device_topology_hints(state.plugins, [0, 1, 2, 3], "x.io/gpu", {"a", "b", "c"}, set(), 1)
[TopologyHint([0], preferred=True), TopologyHint([1], preferred=True), TopologyHint([0, 1], preferred=False)]

Nodes 2 and 3 host no GPU, so no mask names them (kubelet before 1.36 also listed {0, 2}, {0, 1, 2, 3}...).
"""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from typing import Iterable, Optional, Sequence, Union

from kubeinputs.pod import Container, Pod
from topologymanager.errors import BoundedWorkError
from topologymanager.hint import MAX_MEMOISED_NODES, TopologyHint, hints_by_width
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints

from devicemanager.device_state import DeviceState
from devicemanager.hint_family import FAMILY_MIN_NODES, family_device_hints
from devicemanager.plugin_devices import PluginDevices
from devicemanager.requests import container_device_request, pod_device_request

# Up to this many device NUMA nodes the listing path below finishes (2^20 masks, seconds): where a family
# cannot describe the hints (devices on two NUMA nodes at once) it answers instead; beyond, a refusal.
LISTED_FALLBACK_MAX_NODES = 20

DeviceHints = Union[list[TopologyHint], HintFamily]


@lru_cache(maxsize=32)
def _iteration_order(k: int) -> tuple[int, ...]:
    """The positional masks of k nodes in IterateBitMasks order: by size, then lexicographic."""
    order = []
    for size in range(1, k + 1):
        for combo in combinations(range(k), size):
            mask = 0
            for p in combo:
                mask |= 1 << p
            order.append(mask)
    return tuple(order)


def _subset_sums(per_bit: Sequence[int]) -> list[int]:
    """For every positional mask m: the sum of per_bit over m's bits (built by doubling, one list per bit)."""
    sums = [0]
    for value in per_bit:
        sums += [x + value for x in sums]
    return sums


def _touching_counts(masks: list[int], k: int) -> list[int]:
    """For every positional mask m of k nodes: how many of `masks` share a node with m (0 never does).

    Devices on one node each: subset sums of per-node counts. Otherwise the count of masks inside
    every set (a zeta transform), subtracted from the total for m's complement. Cost: O(2^k), or
    O(k 2^k) with devices on several nodes."""
    size = 1 << k
    if all(m & (m - 1) == 0 for m in masks):
        per_bit = [0] * k
        for m in masks:
            if m:
                per_bit[m.bit_length() - 1] += 1
        return _subset_sums(per_bit)
    inside = [0] * size
    for m in masks:
        inside[m] += 1
    for bit in range(k):
        step = 1 << bit
        for s in range(size):
            if s & step:
                inside[s] += inside[s ^ step]
    full = size - 1
    total = len(masks)
    return [total - inside[full ^ m] for m in range(size)]


def listed_device_hints(plugins: PluginDevices, machine_nodes: Sequence[int], resource: str,
                        available: Iterable[str], reusable: Iterable[str], request: int) -> list[TopologyHint]:
    """generateDeviceTopologyHints as kubelet's list, counting devices per mask with subset sums over D."""
    nodes = plugins.device_numa_nodes(resource, machine_nodes)
    k = len(nodes)
    if k == 0:
        return []
    position = {n: i for i, n in enumerate(nodes)}

    def positional(numa_nodes: Optional[tuple[int, ...]]) -> int:
        mask = 0
        for n in numa_nodes or ():
            if n in position:
                mask |= 1 << position[n]
        return mask

    devices = plugins.all_devices.get(resource, {})
    all_touching = _touching_counts([positional(d.numa_nodes) for d in devices.values()], k)
    free_masks = []
    for device_id in available:
        device = plugins.device(resource, device_id)
        free_masks.append(0 if device is None else positional(device.numa_nodes))
    free_touching = _touching_counts(free_masks, k)
    forced = []
    for device_id in reusable:
        device = plugins.device(resource, device_id)
        if device is not None and device.numa_nodes is not None:
            forced.append(positional(device.numa_nodes))

    order = _iteration_order(k)
    min_affinity_size = len(machine_nodes)
    for m in order:  # smallest masks first: the first that all devices could fill is the narrowest
        if all_touching[m] >= request:
            min_affinity_size = min(min_affinity_size, m.bit_count())
            break
    need = request - len(forced)
    kept = [m for m in order if free_touching[m] >= need]
    if forced:
        kept = [m for m in kept if all(m & f for f in forced)]
    if k <= MAX_MEMOISED_NODES:  # shared hint objects: no 2^k new ones per call
        return list(map(hints_by_width(tuple(nodes), min_affinity_size).__getitem__, kept))
    real = [0]
    for n in nodes:
        bit = 1 << n
        real += [x | bit for x in real]
    return [TopologyHint(real[m], m.bit_count() == min_affinity_size) for m in kept]


def generate_device_topology_hints(plugins: PluginDevices, machine_nodes: Sequence[int], resource: str,
                                   available: Iterable[str], reusable: Iterable[str], request: int) -> DeviceHints:
    """kubelet's hints for one resource: a list, or a hint family from FAMILY_MIN_NODES device NUMA nodes on
    (BoundedWorkError where neither finishes: devices on several NUMA nodes each, over more than 20 nodes)."""
    available, reusable = list(available), list(reusable)
    k = len(plugins.device_numa_nodes(resource, machine_nodes))
    if k >= FAMILY_MIN_NODES:
        family = family_device_hints(plugins, machine_nodes, resource, available, reusable, request)
        if family is not None:
            if isinstance(family, HintFamily) and k <= LISTED_FALLBACK_MAX_NODES:
                family.relist = lambda: listed_device_hints(plugins, machine_nodes, resource, available, reusable,
                                                            request)
            return family
        if k > LISTED_FALLBACK_MAX_NODES:
            raise BoundedWorkError(
                f"kubelet would enumerate 2^{k} NUMA masks for {resource} here (its devices sit on {k} NUMA "
                "nodes, some on several at once, which no hint family describes); refusing instead of guessing"
            )
    return listed_device_hints(plugins, machine_nodes, resource, available, reusable, request)


def resource_hints(state: DeviceState, machine_nodes: Sequence[int], resource: str, requested: int,
                   allocated: Optional[set[str]], reusable: set[str]) -> Optional[DeviceHints]:
    """One resource's hints, the rule both hint calls share: None (no preference) for a resource whose
    plugin reports no topology; hints for the devices already held when they are as many as asked, else
    none; none when fewer devices are free (or re-usable) than asked; else the masks over the free ones."""
    if not state.plugins.has_topology_alignment(resource):
        return None
    if allocated:
        if len(allocated) != requested:
            return []
        return generate_device_topology_hints(state.plugins, machine_nodes, resource, allocated, set(), requested)
    available = state.available(resource)
    if len(available | reusable) < requested:
        return []
    return generate_device_topology_hints(state.plugins, machine_nodes, resource, available, reusable, requested)


def get_topology_hints(state: DeviceState, machine_nodes: Sequence[int], pod: Pod, container: Container) -> ProviderHints:
    """GetTopologyHints (after UpdateAllocatedDevices, which the caller runs): {resource: hints}, resources
    sorted by name (Go's map order is random)."""
    return {resource: resource_hints(state, machine_nodes, resource, requested,
                                     state.pod_devices.container_devices(pod.uid, container.name, resource),
                                     state.reusable(pod.uid, resource))
            for resource, requested in sorted(container_device_request(state, container).items())}


def get_pod_topology_hints(state: DeviceState, machine_nodes: Sequence[int], pod: Pod) -> ProviderHints:
    """GetPodTopologyHints (after UpdateAllocatedDevices): the same per resource for the pod's total request,
    with the devices the whole pod holds and without re-usable devices."""
    return {resource: resource_hints(state, machine_nodes, resource, requested,
                                     state.pod_devices.pod_devices(pod.uid, resource), set())
            for resource, requested in sorted(pod_device_request(state, pod).items())}
