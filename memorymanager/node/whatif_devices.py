"""The largest device request admitted now, on copies of a node: the refused container's request of one device
plugin resource (its limit, and its request when it names one) from one below down to one, each admitted on a
fork; the first admitted is the answer, with the next larger count tried (refused). Cost: one fork and one
admission per check, at most `MAX_CHECKS`."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from devicemanager.requests import container_device_request
from kubeinputs.pod import Container, Pod, ResourceRequirements
from kubeinputs.quantity import Quantity
from memorymanager.node.answers import Admission, admission_of
from memorymanager.node.simulated_node import SimulatedNode
from memorymanager.node.whatif import MAX_CHECKS, Extra


@dataclass(frozen=True)
class DeviceFit:
    """The largest request of one device resource by one container admitted now (checked): the container, the
    resource, what it asked, the devices admitted and the admission, the next larger count tried (refused)."""

    container: str
    resource: str
    requested: int
    devices: int
    admission: Admission
    refused_above: int
    checks: int


def _with_devices(pod: Pod, name: str, resource: str, count: int, uid: str) -> Pod:
    """The pod with container `name` asking `count` devices of `resource`."""
    def one(c: Container) -> Container:
        if c.name != name:
            return c
        requests = dict(c.resources.requests or {})
        if resource in requests:
            requests[resource] = Quantity.from_int(count)
        limits = {**(c.resources.limits or {}), resource: Quantity.from_int(count)}
        return replace(c, resources=ResourceRequirements(requests, limits))

    return replace(pod, uid=uid, init_containers=[one(c) for c in pod.init_containers],
                   containers=[one(c) for c in pod.containers])


def largest_device_request(node: SimulatedNode, pod: Pod, container: str, resource: str, extra: Extra = None,
                           max_checks: int = MAX_CHECKS) -> tuple[Optional[DeviceFit], int]:
    """(the largest request of `resource` by `container` admitted now, admissions checked); None when no smaller
    count (down to one) is admitted, or the container asks for no such device."""
    found = next((c for c in pod.all_containers() if c.name == container), None)
    if found is None or node.device_manager is None:
        return None, 0
    requested = container_device_request(node.device_manager.state(), found).get(resource, 0)
    uid = pod.uid if pod.uid not in {p.uid for p in node.active_pods()} else pod.uid + "-what-if"
    refused_above, checks = requested, 0
    for count in range(requested - 1, 0, -1):
        if checks >= max_checks:
            break
        trial = node.fork()
        smaller = _with_devices(pod, container, resource, count, uid)
        outcome = trial.admit(smaller, extra)
        checks += 1
        if outcome.admit:
            return DeviceFit(container, resource, requested, count, admission_of(trial, smaller, outcome),
                             refused_above, checks), checks
        refused_above = count
    return None, checks
