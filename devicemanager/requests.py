"""How many devices a container or a pod asks for (getContainerDeviceRequest, getPodDeviceRequest).

Device plugin resources are extended resources: requests equal limits, and kubelet reads the
limits. A container asks for `int(limit.Value())` of every device plugin resource in its limits;
a pod asks for what component-helpers' PodLimits gives (pod overhead excluded): the larger of the
app containers plus sidecars and the peak of any init container next to the sidecars started
before it. Pod-level `spec.resources` cannot name a device resource, so it never changes the count.
"""
from __future__ import annotations

from kubeinputs.pod import Container, Pod, aggregate_container_resources

from devicemanager.device_state import DeviceState


def container_device_request(state: DeviceState, container: Container) -> dict[str, int]:
    """getContainerDeviceRequest: {resource: devices} for the device plugin resources in the limits."""
    limits = container.resources.limits or {}
    return {name: quantity.value_bytes() for name, quantity in limits.items() if state.is_device_plugin_resource(name)}


def pod_device_request(state: DeviceState, pod: Pod) -> dict[str, int]:
    """getPodDeviceRequest: {resource: devices} from the pod's effective limits."""
    limits = aggregate_container_resources(pod, "limits")
    return {name: quantity.value_bytes() for name, quantity in limits.items() if state.is_device_plugin_resource(name)}
