"""The device manager's allocation state in one place (the fields of kubelet's ManagerImpl it decides with).

`plugins` are the registered devices, `pod_devices` who holds what, `allocated` kubelet's
allocatedDevices (resource -> device IDs in use, recomputed from `pod_devices` when pods go away and
grown as devices are picked), `to_reuse` kubelet's devicesToReuse (pod UID -> resource -> device IDs
its finished init containers leave to the containers after them).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from devicemanager.plugin_devices import PluginDevices
from devicemanager.pod_devices import PodDevices


@dataclass
class DeviceState:
    """Registered devices, allocations and re-usable init-container devices."""

    plugins: PluginDevices = field(default_factory=PluginDevices)
    pod_devices: PodDevices = field(default_factory=PodDevices)
    allocated: dict[str, set[str]] = field(default_factory=dict)
    to_reuse: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    def is_device_plugin_resource(self, resource: str) -> bool:
        """isDevicePluginResource: a registered resource, or one devices were allocated from."""
        return self.plugins.is_registered(resource) or resource in self.allocated

    def available(self, resource: str) -> set[str]:
        """getAvailableDevices: the healthy devices nobody holds."""
        return self.plugins.healthy.get(resource, set()) - self.allocated.get(resource, set())

    def reusable(self, pod_uid: str, resource: str) -> set[str]:
        """The devices of the pod's finished init containers that later containers take first."""
        return self.to_reuse.get(pod_uid, {}).get(resource, set())
