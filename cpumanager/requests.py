"""How many exclusive CPUs a container or a pod asks the static policy for (policy_static.go).

A container gets exclusive CPUs only in a Guaranteed pod and only for an integral `cpu`
request (`2`, not `1500m`); the number is the request's value. The pod total (pod scope)
follows the sidecar rule of KEP-753: the larger of the long-running sum (app containers +
sidecars) and the peak of a regular init container next to the sidecars started before it.
Containers that do not name `cpu` in their requests are left out of the pod total.

With the PodLevelResourceManagers gate on and pod-level resources set (KEP-5526), a container
gets exclusive CPUs only when it is "equivalent Guaranteed" (cpu and memory requests equal to
non-zero limits), and the pod total is the pod-level integral `cpu` request.
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, POD_LEVEL_RESOURCES_GATE, FeatureGates
from kubeinputs.pod import Container, Pod, is_pod_level_resources_set
from kubeinputs.qos import GUARANTEED, get_pod_qos
from kubeinputs.quantity import Quantity

CPU = "cpu"
MEMORY = "memory"


def cpu_value(quantity: Optional[Quantity]) -> int:
    """Quantity.Value(): rounded up to an integer (0 for no quantity)."""
    return 0 if quantity is None else quantity.value_bytes()


def milli_value(quantity: Optional[Quantity]) -> int:
    """Quantity.MilliValue(): thousandths, rounded up."""
    if quantity is None:
        return 0
    return Quantity(quantity.unscaled, quantity.exp10 + 3, quantity.format, quantity.is_dec).value_bytes()


def is_integral_cpu_amount(quantity: Optional[Quantity]) -> bool:
    """isIntegralCPUAmount: Value()*1000 == MilliValue() (`2` yes, `1500m` no, no quantity yes)."""
    return cpu_value(quantity) * 1000 == milli_value(quantity)


def is_restartable_init_container(container: Container) -> bool:
    """A sidecar: an init container with `restartPolicy: Always`."""
    return getattr(container, "restart_policy", None) == "Always"


def _equal_nonzero(requests: dict, limits: dict, name: str) -> bool:
    """A non-zero request equal (by value) to the limit."""
    request, limit = requests.get(name), limits.get(name)
    return request is not None and limit is not None and request.value != 0 and request.value == limit.value


def is_container_equivalent_guaranteed(container: Container) -> bool:
    """cm/qos IsContainerEquivalentQOSGuaranteed: cpu and memory requests non-zero and equal to limits."""
    requests = container.resources.requests or {}
    limits = container.resources.limits or {}
    return _equal_nonzero(requests, limits, CPU) and _equal_nonzero(requests, limits, MEMORY)


def pod_level_managed(pod: Pod, gates: FeatureGates) -> bool:
    """PodLevelResourceManagers on and the pod sets pod-level resources (KEP-5526's pod path)."""
    return gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE) and is_pod_level_resources_set(pod)


def skips_pod_level(pod: Pod, gates: FeatureGates) -> bool:
    """A pod with pod-level resources the policy leaves alone (no hints, no allocation): unless both
    PodLevelResources and PodLevelResourceManagers are on."""
    both = gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE) and gates.enabled(POD_LEVEL_RESOURCES_GATE)
    return not both and is_pod_level_resources_set(pod)


def is_guaranteed(pod: Pod, gates: FeatureGates) -> bool:
    """The pod's QoS class is Guaranteed (pod-level resources count when PodLevelResources is on)."""
    return get_pod_qos(pod, gates.enabled(POD_LEVEL_RESOURCES_GATE)) == GUARANTEED


def guaranteed_cpus(pod: Pod, container: Container, gates: FeatureGates) -> int:
    """guaranteedCPUs: the container's exclusive CPU count, 0 when it belongs in a shared pool."""
    if not is_guaranteed(pod, gates):
        return 0
    quantity = (container.resources.requests or {}).get(CPU)
    if pod_level_managed(pod, gates) and not is_container_equivalent_guaranteed(container):
        return 0
    if not is_integral_cpu_amount(quantity):
        return 0
    return cpu_value(quantity)


def pod_guaranteed_cpus(pod: Pod, gates: FeatureGates) -> int:
    """podGuaranteedCPUs: the pod's exclusive CPU count (pod scope), 0 for none."""
    if pod_level_managed(pod, gates):
        if not is_guaranteed(pod, gates):
            return 0
        quantity = (pod.resources.requests or {}).get(CPU)
        if quantity is not None and is_integral_cpu_amount(quantity):
            return cpu_value(quantity)
        return 0
    init_peak = 0
    sidecars = 0
    for container in pod.init_containers:
        if CPU not in (container.resources.requests or {}):
            continue
        requested = guaranteed_cpus(pod, container, gates)
        if is_restartable_init_container(container):
            sidecars += requested
        elif sidecars + requested > init_peak:
            init_peak = sidecars + requested
    app = 0
    for container in pod.containers:
        if CPU not in (container.resources.requests or {}):
            continue
        app += guaranteed_cpus(pod, container, gates)
    return max(init_peak, app + sidecars)
