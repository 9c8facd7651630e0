"""Builders shared by the device manager tests: pods from manifests, device lists, a fixed affinity store."""
from __future__ import annotations

from typing import Iterable, Optional

from kubeinputs.devices import Device
from kubeinputs.pod import Pod, parse_pod
from topologymanager.bitmask import new_bitmask
from topologymanager.hint import TopologyHint

from devicemanager.device_state import DeviceState


def P(*nodes: int) -> TopologyHint:
    """A preferred hint on `nodes`."""
    return TopologyHint(new_bitmask(*nodes), True)


def N(*nodes: int) -> TopologyHint:
    """A non-preferred hint on `nodes`."""
    return TopologyHint(new_bitmask(*nodes), False)


def numa_device(device_id: str, *nodes: int, healthy: bool = True) -> Device:
    """makeNUMADevice: a device on `nodes` (none: no topology)."""
    return Device(device_id, tuple(nodes) if nodes else None, healthy)


def container(name: str, limits: dict, restart_policy: Optional[str] = None) -> dict:
    """A container manifest asking for `limits` (devices as integers)."""
    spec: dict = {"name": name, "resources": {"limits": {k: str(v) for k, v in limits.items()}}}
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    return spec


def pod(uid: str, containers: Iterable[dict], init_containers: Iterable[dict] = ()) -> Pod:
    """A parsed v1 Pod with uid `uid`."""
    return parse_pod({"metadata": {"name": "p", "uid": uid},
                      "spec": {"containers": list(containers), "initContainers": list(init_containers)}})


def single(uid: str, name: str, limits: dict) -> Pod:
    """A pod of one container."""
    return pod(uid, [container(name, limits)])


class FixedAffinity:
    """A topology manager Store answering the same hint for every container."""

    def __init__(self, hint: TopologyHint = TopologyHint()) -> None:
        self.hint = hint

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hint


def state_with(devices: dict[str, list[Device]], held: Optional[dict] = None) -> DeviceState:
    """A device state with `devices` registered and `held` {pod: {container: {resource: [ids]}}} allocated
    (recorded on NUMA 0, as upstream's tests do)."""
    state = DeviceState()
    for resource, devs in devices.items():
        state.plugins.update(resource, devs)
    for pod_uid, containers in (held or {}).items():
        for name, resources in containers.items():
            for resource, ids in resources.items():
                state.pod_devices.insert(pod_uid, name, resource, {0: list(ids)}, b"")
    state.allocated = state.pod_devices.devices()
    return state
