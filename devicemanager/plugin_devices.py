"""The devices the plugins registered: kubelet's allDevices, healthyDevices, unhealthyDevices and endpoints.

A plugin's ListAndWatch answer replaces every device of its resource at once (`update`:
genericDeviceUpdateCallback). A resource named only in a restored checkpoint is known with no
device at all until its plugin registers (`restore_resource`): kubelet then keeps an empty
healthy set and a stopped endpoint for it, so the resource still counts as a device plugin
resource (a pod asking for it is refused with "no healthy devices present").

Sets are Python sets; wherever kubelet iterates a Go set (random order) this module answers in the
plugin's declaration order (`ordered`), then, for IDs no plugin declares, in sorted order.
"""
from __future__ import annotations

from typing import Iterable, Optional

from kubeinputs.devices import Device


class PluginDevices:
    """Registered devices per resource, their health and the resources with an endpoint."""

    def __init__(self) -> None:
        """No plugin registered yet."""
        self.all_devices: dict[str, dict[str, Device]] = {}
        self.healthy: dict[str, set[str]] = {}
        self.unhealthy: dict[str, set[str]] = {}
        self.endpoints: dict[str, bool] = {}  # resource -> True: a running plugin, False: stopped (restored)
        self._rank: dict[str, dict[str, int]] = {}

    def update(self, resource: str, devices: Iterable[Device]) -> None:
        """genericDeviceUpdateCallback: the plugin of `resource` now reports exactly `devices`."""
        self.endpoints[resource] = True
        self.healthy[resource] = set()
        self.unhealthy[resource] = set()
        self.all_devices[resource] = {}
        for device in devices:
            self.all_devices[resource][device.id] = device
            (self.healthy if device.healthy else self.unhealthy)[resource].add(device.id)
        self._rank[resource] = {device_id: i for i, device_id in enumerate(self.all_devices[resource])}

    def mark_unhealthy(self, resource: str) -> None:
        """markResourceUnhealthy (the plugin disconnected): every healthy device of the resource turns
        unhealthy and its endpoint stops; the devices stay registered."""
        healthy = self.healthy.get(resource, set())
        self.healthy[resource] = set()
        self.unhealthy[resource] = self.unhealthy.get(resource, set()) | healthy
        if resource in self.endpoints:
            self.endpoints[resource] = False

    def restore_resource(self, resource: str) -> None:
        """readCheckpoint for a registered resource: empty device sets and a stopped endpoint."""
        self.healthy[resource] = set()
        self.unhealthy[resource] = set()
        self.endpoints[resource] = False

    def is_registered(self, resource: str) -> bool:
        """Whether kubelet has a healthy-device entry for the resource (a plugin or a restored checkpoint)."""
        return resource in self.healthy

    def device(self, resource: str, device_id: str) -> Optional[Device]:
        """The registered device, or None (kubelet then reads a zero Device: no topology)."""
        return self.all_devices.get(resource, {}).get(device_id)

    def has_topology_alignment(self, resource: str) -> bool:
        """deviceHasTopologyAlignment: some device of the resource reports NUMA nodes."""
        return any(d.numa_nodes for d in self.all_devices.get(resource, {}).values())

    def device_numa_nodes(self, resource: str, machine_nodes: Iterable[int]) -> list[int]:
        """The NUMA nodes of every registered device of the resource (healthy or not, allocated or not) that
        are also the machine's, ascending: the nodes kubelet v1.37 iterates masks over (#138244)."""
        machine = set(machine_nodes)
        found = {n for d in self.all_devices.get(resource, {}).values() for n in d.numa_nodes or () if n in machine}
        return sorted(found)

    def ordered(self, resource: str, ids: Iterable[str]) -> list[str]:
        """`ids` in the plugin's declaration order; IDs it does not declare last, sorted."""
        rank = self._rank.get(resource, {})
        known = len(rank)
        return sorted(ids, key=lambda d: (rank.get(d, known), "" if d in rank else d))

    def allocatable(self) -> dict[str, dict[str, Device]]:
        """GetAllocatableDevices: the healthy devices of every resource that has registered devices."""
        result: dict[str, dict[str, Device]] = {}
        for resource, healthy in self.healthy.items():
            if resource not in self.all_devices:
                continue
            result[resource] = {d: dev for d, dev in self.all_devices[resource].items() if d in healthy}
        return result

    def capacity(self) -> tuple[dict[str, int], dict[str, int]]:
        """GetCapacity's counts per resource: (capacity = healthy + unhealthy, allocatable = healthy).

        kubelet drops a resource whose plugin stopped more than 5 minutes ago; the simulation has no
        clock, so every known resource is reported."""
        capacity = {r: len(h) + len(self.unhealthy.get(r, ())) for r, h in self.healthy.items()}
        for resource, unhealthy in self.unhealthy.items():
            capacity.setdefault(resource, len(unhealthy))
        return capacity, {r: len(h) for r, h in self.healthy.items()}
