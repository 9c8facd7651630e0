"""What a container or a pod asks the memory manager for: `memory` and `hugepages-*` bytes.

kubelet (policy_static.go getRequestedResources / getPodRequestedResources) reads the
container's requests (limits were already copied into missing requests by
defaulting). The pod total follows the sidecar-aware rule of KEP-753: the larger of
the long-running sum (app containers + sidecars) and the peak of any regular init
container running next to the sidecars started before it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from state.types import MEMORY, is_memory_resource

from kubeinputs.pod import Container, Pod, is_pod_level_resources_set
from memorymanager.policy import MemoryManagerError
from kubeinputs.quantity import Quantity, QuantityError

UINT64_MASK = (1 << 64) - 1
INT64_ERROR = "[memorymanager] failed to represent quantity as int64"

def _ordered(names) -> list[str]:
    """Resource names with `memory` first, then the rest sorted (Go leaves map order random)."""
    return sorted(names, key=lambda name: (name != MEMORY, name))


def _quantity_bytes(quantity: Quantity) -> int:
    """The request as Go's uint64(AsInt64()); not an int64 -> kubelet's int64 error."""
    try:
        value = quantity.as_int64()
    except QuantityError:
        raise MemoryManagerError(INT64_ERROR) from None
    return value & UINT64_MASK


def is_restartable_init_container(container: Container) -> bool:
    """A sidecar: an init container with `restartPolicy: Always`."""
    return getattr(container, "restart_policy", None) == "Always"


def is_regular_init_container(pod: Pod, container: Container) -> bool:
    """Whether `container` names a non-restartable init container of `pod` (first match by name)."""
    for init_container in pod.init_containers:
        if init_container.name == container.name:
            return not is_restartable_init_container(init_container)
    return False


def _equal_nonzero(requests: dict, limits: dict, name: str) -> bool:
    """A non-zero request equal (by value) to the limit."""
    request = requests.get(name)
    limit = limits.get(name)
    if request is None or request.value == 0:
        return False
    if limit is None:
        return False
    return request.value == limit.value


def is_container_equivalent_guaranteed(container: Container) -> bool:
    """cm/qos IsContainerEquivalentQOSGuaranteed: cpu and memory requests non-zero and equal to limits."""
    requests = container.resources.requests or {}
    limits = container.resources.limits or {}
    return _equal_nonzero(requests, limits, "cpu") and _equal_nonzero(requests, limits, MEMORY)


def get_container_requested_resources(pod: Pod, container: Container, pod_level_managers: bool = False) -> dict[str, int]:
    """The container's memory and hugepage requests in bytes.

    With the PodLevelResourceManagers gate on and pod-level resources set, a
    container that is not "equivalent Guaranteed" requests nothing of its own (it
    lives in the pod's shared pool). Raises MemoryManagerError with kubelet's text
    when a value is not an int64.
    """
    if pod_level_managers and is_pod_level_resources_set(pod) and not is_container_equivalent_guaranteed(container):
        return {}
    requests = container.resources.requests or {}
    return {name: _quantity_bytes(requests[name]) for name in _ordered(n for n in requests if is_memory_resource(n))}


def get_pod_requested_resources(pod: Pod, pod_level_managers: bool = False) -> dict[str, int]:
    """The pod's total memory and hugepage request in bytes (pod scope).

    Per resource: max(app sum + sidecar sum, max over regular init containers of
    (sidecars declared before it + its request)); only resources some app
    container requests are kept. With PodLevelResourceManagers on and pod-level
    resources set, the pod's own positive requests are used instead.
    """
    if pod_level_managers and is_pod_level_resources_set(pod):
        requests = pod.resources.requests or {}
        result: dict[str, int] = {}
        for name in _ordered(n for n in requests if is_memory_resource(n)):
            try:
                value = requests[name].as_int64()
            except QuantityError:
                raise MemoryManagerError(INT64_ERROR) from None
            if value <= 0:
                continue
            result[name] = value
        return result

    return {name: part.total for name, part in pod_request_parts(pod, pod_level_managers).items()}


@dataclass(frozen=True)
class PodRequestPart:
    """How the pod-scope request of one resource comes about: the app containers' sum plus the
    sidecars' sum, against the peak of a regular init container (with the sidecars started
    before it); `total` is the larger. `peak_container` names the init container of the peak."""

    app: int
    sidecars: int
    init_peak: int
    peak_container: Optional[str] = None

    @property
    def total(self) -> int:
        """What the Static policy requests for the pod."""
        return max(self.app + self.sidecars, self.init_peak)


def pod_request_parts(pod: Pod, pod_level_managers: bool = False) -> dict[str, PodRequestPart]:
    """Per resource some app container requests, the parts of kubelet's pod-scope request
    (container requests only: not the pod-level-resources path)."""
    init_peak: dict[str, int] = {}
    peak_name: dict[str, str] = {}
    sidecar_sum: dict[str, int] = {}
    for container in pod.init_containers:
        for name, size in get_container_requested_resources(pod, container, pod_level_managers).items():
            init_peak.setdefault(name, 0)
            if is_restartable_init_container(container):
                sidecar_sum[name] = sidecar_sum.get(name, 0) + size
            elif sidecar_sum.get(name, 0) + size > init_peak[name]:
                init_peak[name] = sidecar_sum.get(name, 0) + size
                peak_name[name] = container.name

    app_sum: dict[str, int] = {}
    for container in pod.containers:
        for name, size in get_container_requested_resources(pod, container, pod_level_managers).items():
            app_sum[name] = app_sum.get(name, 0) + size

    return {
        name: PodRequestPart(app_sum[name], sidecar_sum.get(name, 0), init_peak.get(name, 0), peak_name.get(name))
        for name in _ordered(app_sum)
    }


def first_container_name(pod: Pod) -> Optional[str]:
    """The first init container, else the first app container (kubelet keys pod-level affinity on it)."""
    containers = [*pod.init_containers, *pod.containers]
    return containers[0].name if containers else None
