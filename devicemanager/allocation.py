"""Which devices a container gets (manager.go devicesToAllocate and filterByAffinity, kubelet v1.37).

The order, when the plugin offers no preferred allocation (GetPreferredAllocation is not
simulated: a declared plugin answers none):

1. devices the container already holds: it must hold exactly what it asks for (`pod "p" container
   "c" changed request ...`), and they must all still be healthy;
2. the resource must be registered and have a healthy device (`cannot allocate unregistered
   device`, `no healthy devices present; cannot allocate unhealthy devices`);
3. the pod's re-usable devices (left by its finished init containers) first;
4. then from the available devices (healthy, not held: `requested number of devices unavailable
   for R. Requested: n, Available: m` when too few), split by the container's stored topology
   affinity into aligned (on a node of the affinity), unaligned (elsewhere) and without topology;
   aligned devices first, then unaligned, then those without topology.

Within each group kubelet takes devices in Go's random set order; this module takes them in the
plugin's declaration order, so an answer kubelet could give is always the same one.
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.goformat import go_quote
from topologymanager.hint import TopologyHint

from devicemanager.device_state import DeviceState
from devicemanager.errors import DeviceManagerError


def filter_by_affinity(state: DeviceState, resource: str, hint: TopologyHint,
                       available: set[str]) -> tuple[set[str], set[str], set[str]]:
    """filterByAffinity: (aligned, unaligned, without topology) among `available`.

    Without an affinity (nil) or without topology on the resource, every available device is in the
    third set. A device on several nodes is aligned when any of its nodes is in the affinity."""
    if not state.plugins.has_topology_alignment(resource) or hint.numa_node_affinity is None:
        return set(), set(), set(available)
    affinity = hint.numa_node_affinity
    aligned, unaligned, no_topology = set(), set(), set()
    for device_id in available:
        device = state.plugins.device(resource, device_id)
        nodes = device.numa_nodes if device is not None else None
        if not nodes:
            no_topology.add(device_id)
        elif any(0 <= n < 64 and affinity >> n & 1 for n in nodes):
            aligned.add(device_id)
        else:
            unaligned.add(device_id)
    return aligned, unaligned, no_topology


def devices_to_allocate(state: DeviceState, pod_uid: str, container_name: str, resource: str, required: int,
                        reusable: set[str], hint: TopologyHint) -> Optional[list[str]]:
    """devicesToAllocate: the devices to give the container, in the order they were picked; None when it
    needs none (it already holds them, or asks for 0). Picked devices join `state.allocated` as they are
    picked (as in kubelet, also when a later step fails). Raises DeviceManagerError with kubelet's text."""
    needed = required
    held = state.pod_devices.container_devices(pod_uid, container_name, resource)
    if held is not None:
        needed -= len(held)
        if needed != 0:
            raise DeviceManagerError(
                f"pod {go_quote(pod_uid)} container {go_quote(container_name)} changed request for resource "
                f"{go_quote(resource)} from {len(held)} to {required}")
    # kubelet's "container already running after a restart" shortcut needs sources that are not ready yet;
    # in the simulation every source is ready, so it never applies.
    if not state.plugins.is_registered(resource):
        raise DeviceManagerError(f"cannot allocate unregistered device {resource}")
    healthy = state.plugins.healthy[resource]
    if not healthy:
        raise DeviceManagerError(f"no healthy devices present; cannot allocate unhealthy devices {resource}")
    if held is not None and not held <= healthy:
        raise DeviceManagerError(
            f"previously allocated devices are no longer healthy; cannot allocate unhealthy devices {resource}")
    if needed == 0:
        return None

    picked: list[str] = []
    in_use = state.allocated.setdefault(resource, set())

    def take(candidates: set[str]) -> bool:
        """allocateRemainingFrom: pick from `candidates` until nothing more is needed."""
        nonlocal needed
        for device_id in state.plugins.ordered(resource, candidates - set(picked)):
            in_use.add(device_id)
            picked.append(device_id)
            needed -= 1
            if needed == 0:
                return True
        return False

    if take(reusable):
        return picked
    available = healthy - in_use
    if len(available) < needed:
        raise DeviceManagerError(
            f"requested number of devices unavailable for {resource}. Requested: {needed}, Available: {len(available)}")
    aligned, unaligned, no_topology = filter_by_affinity(state, resource, hint, available)
    if needed < len(aligned):
        # a plugin's preferred allocation would be offered first here; declared plugins have none
        if take(aligned):
            return picked
        raise DeviceManagerError(
            f"unexpectedly allocated less resources than required. Requested: {required}, Got: {required - needed}")
    if take(aligned) or take(unaligned) or take(no_topology):
        return picked
    raise DeviceManagerError(
        f"unexpectedly allocated less resources than required. Requested: {required}, Got: {required - needed}")
