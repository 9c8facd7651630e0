"""Which devices every container holds (kubelet's podDevices, pod_devices.go).

Per pod UID, container name and resource: the device IDs grouped by NUMA node (kubelet's
DevicesPerNUMA: the node each device reported when it was allocated, -1 for no topology; a
device on two nodes is listed under both) and the plugin's Allocate answer (its protobuf
bytes; an entry without one does not count as allocated, as in kubelet).

>>> pd = PodDevices()
>>> pd.insert("p", "c", "nvidia.com/gpu", {0: ["gpu0"], -1: ["gpu9"]}, b"")
>>> sorted(pd.container_devices("p", "c", "nvidia.com/gpu")), sorted(pd.devices()["nvidia.com/gpu"])
(['gpu0', 'gpu9'], ['gpu0', 'gpu9'])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from devicemanager.constants import NODE_WITHOUT_TOPOLOGY

DevicesPerNUMA = dict[int, list[str]]
"""NUMA node id (or -1) -> device IDs, as the checkpoint stores them."""


def devices_of(per_numa: Optional[DevicesPerNUMA]) -> set[str]:
    """DevicesPerNUMA.Devices(): every device ID, once (a nil map has none)."""
    return {d for ids in (per_numa or {}).values() for d in ids or ()}


@dataclass
class DeviceAllocateInfo:
    """One container's devices of one resource (None: a nil map, as a checkpoint may hold) and the
    plugin's Allocate answer (None: missing)."""

    device_ids: Optional[DevicesPerNUMA]
    alloc_resp: Optional[bytes]


@dataclass(frozen=True)
class CheckpointEntry:
    """One PodDevicesEntry of the checkpoint (`alloc_resp` the raw protobuf bytes, None for JSON null)."""

    pod_uid: str
    container_name: str
    resource_name: str
    device_ids: Optional[DevicesPerNUMA]
    alloc_resp: Optional[bytes]


class PodDevices:
    """pod UID -> container -> resource -> DeviceAllocateInfo."""

    def __init__(self) -> None:
        """Nothing allocated."""
        self.devs: dict[str, dict[str, dict[str, DeviceAllocateInfo]]] = {}

    def pods(self) -> set[str]:
        """The pod UIDs holding an entry."""
        return set(self.devs)

    def has_pod(self, pod_uid: str) -> bool:
        """Whether the pod holds an entry."""
        return pod_uid in self.devs

    def insert(self, pod_uid: str, container_name: str, resource: str, devices: Optional[DevicesPerNUMA],
               alloc_resp: Optional[bytes]) -> None:
        """Record (or replace) a container's devices of one resource."""
        copied = None if devices is None else {numa: None if ids is None else list(ids) for numa, ids in devices.items()}
        self.devs.setdefault(pod_uid, {}).setdefault(container_name, {})[resource] = DeviceAllocateInfo(
            copied, alloc_resp)

    def delete(self, pod_uids: Iterable[str]) -> None:
        """Forget every entry of these pods."""
        for uid in pod_uids:
            self.devs.pop(uid, None)

    def pod_devices(self, pod_uid: str, resource: str) -> set[str]:
        """Every device of the resource held by any container of the pod (init containers too)."""
        result: set[str] = set()
        for name in self.devs.get(pod_uid, {}):
            result |= self.container_devices(pod_uid, name, resource) or set()
        return result

    def container_devices(self, pod_uid: str, container_name: str, resource: str) -> Optional[set[str]]:
        """The container's devices of the resource; None when it holds no entry for it."""
        info = self.devs.get(pod_uid, {}).get(container_name, {}).get(resource)
        return None if info is None else devices_of(info.device_ids)

    def add_container_allocated_resources(self, pod_uid: str, container_name: str,
                                          target: dict[str, set[str]]) -> None:
        """Add the container's devices of every resource into `target` (the pod's re-usable devices)."""
        for resource, info in self.devs.get(pod_uid, {}).get(container_name, {}).items():
            target[resource] = target.get(resource, set()) | devices_of(info.device_ids)

    def remove_container_allocated_resources(self, pod_uid: str, container_name: str,
                                             target: dict[str, set[str]]) -> None:
        """Take the container's devices of every resource out of `target`."""
        for resource, info in self.devs.get(pod_uid, {}).get(container_name, {}).items():
            target[resource] = target.get(resource, set()) - devices_of(info.device_ids)

    def devices(self) -> dict[str, set[str]]:
        """Allocated devices per resource: every entry that has an Allocate answer (a resource whose entries
        all lack one is still listed, with no device)."""
        result: dict[str, set[str]] = {}
        for containers in self.devs.values():
            for resources in containers.values():
                for resource, info in resources.items():
                    ids = result.setdefault(resource, set())
                    if info.alloc_resp is not None:
                        ids |= devices_of(info.device_ids)
        return result

    def pod_and_container_of(self, device_id: str) -> tuple[str, str]:
        """getPodAndContainerForDevice: who holds the device ("" and "" when nobody)."""
        for pod_uid, containers in self.devs.items():
            for name, resources in containers.items():
                if any(device_id in devices_of(info.device_ids) for info in resources.values()):
                    return pod_uid, name
        return "", ""

    def get_container_devices(self, pod_uid: str, container_name: str) -> Optional[dict[str, dict[str, Optional[tuple[int, ...]]]]]:
        """getContainerDevices: resource -> device ID -> the NUMA nodes recorded for it (ascending; None when it
        was recorded without topology). None when the container holds no entry; resources without devices
        are left out."""
        resources = self.devs.get(pod_uid, {}).get(container_name)
        if resources is None:
            return None
        result: dict[str, dict[str, Optional[tuple[int, ...]]]] = {}
        for resource, info in resources.items():
            if not info.device_ids:
                continue
            nodes: dict[str, Optional[set[int]]] = {}
            for numa, ids in info.device_ids.items():
                for device_id in ids or ():
                    if numa == NODE_WITHOUT_TOPOLOGY:
                        nodes.setdefault(device_id, None)
                    else:
                        known = nodes.get(device_id)
                        nodes[device_id] = (known or set()) | {numa}
            result[resource] = {d: None if n is None else tuple(sorted(n)) for d, n in nodes.items()}
        return result

    def to_checkpoint_data(self) -> list[CheckpointEntry]:
        """toCheckpointData: one entry per (pod, container, resource) that has an Allocate answer, sorted by
        pod UID, container and resource (kubelet writes them in Go's random map order)."""
        entries = []
        for pod_uid in sorted(self.devs):
            for name in sorted(self.devs[pod_uid]):
                for resource in sorted(self.devs[pod_uid][name]):
                    info = self.devs[pod_uid][name][resource]
                    if info.alloc_resp is None:
                        continue  # kubelet logs "allocation response is missing" and skips it
                    entries.append(CheckpointEntry(pod_uid, name, resource, info.device_ids, info.alloc_resp))
        return entries

    def from_checkpoint_data(self, entries: Iterable[CheckpointEntry]) -> None:
        """fromCheckpointData: insert every entry (the caller has dropped those whose answer does not decode)."""
        for entry in entries:
            self.insert(entry.pod_uid, entry.container_name, entry.resource_name, entry.device_ids,
                        entry.alloc_resp)
