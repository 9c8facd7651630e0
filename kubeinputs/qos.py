"""Pod QoS class, as kubelet's GetPodQOS computes it (pkg/apis/core/v1/helper/qos, released algorithm).

The static memory policy only serves Guaranteed pods, so the class decides whether a pod gets NUMA
memory at all. Only cpu and memory count; quantities <= 0 are ignored; requests and limits are summed
over app and init containers. Guaranteed needs every container (or, with PodLevelResources and
`spec.resources` set, the pod level alone) to carry positive cpu and memory limits, and the summed
requests to equal the summed limits for exactly the same resources. No request and no limit at all is
BestEffort; anything else is Burstable.

`status.qosClass` is not read (manifests are taken as specs; the API server would have stored the same
computed value). The newest upstream snapshot has a per-container variant that is not followed here.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from kubeinputs.pod import Pod
from kubeinputs.quantity import Quantity, zero_quantity

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

QOS_COMPUTE_RESOURCES = ("cpu", "memory")


def _add_positive(total: dict[str, Quantity], resources: Mapping[str, Quantity]) -> None:
    """Add each positive cpu/memory quantity of `resources` into `total`."""
    zero = zero_quantity()
    for name, quantity in resources.items():
        if name not in QOS_COMPUTE_RESOURCES or quantity.cmp(zero) <= 0:
            continue
        total[name] = quantity.add(total[name]) if name in total else quantity


def _missing_limits(limits: Mapping[str, Quantity]) -> list[str]:
    """What keeps `limits` from being Guaranteed's: `no cpu limit`, `a memory limit of 0`, ... (empty: nothing)."""
    zero = zero_quantity()
    missing = []
    for name in QOS_COMPUTE_RESOURCES:
        if name not in limits:
            missing.append(f"no {name} limit")
        elif limits[name].cmp(zero) <= 0:
            missing.append(f"a {name} limit of {limits[name]}")
    return missing


def _classify_explained(
    requests: dict[str, Quantity], limits: dict[str, Quantity], guaranteed: bool, not_guaranteed_why: str,
    guaranteed_why: str = "every container has cpu and memory limits, and requests equal limits",
) -> tuple[str, str]:
    """The class and the rule that gave it (`not_guaranteed_why`: why the per-container flag is off)."""
    if not requests and not limits:
        return BEST_EFFORT, "no container sets a cpu or memory request or limit"
    if not guaranteed:
        return BURSTABLE, not_guaranteed_why
    for name, request in requests.items():
        if name not in limits:
            return BURSTABLE, f"{name} is requested ({request}) but has no limit"
        if limits[name].cmp(request) != 0:
            return BURSTABLE, (f"the summed {name} requests ({request}) differ from the summed {name} limits "
                               f"({limits[name]})")
    if len(requests) == len(limits):
        return GUARANTEED, guaranteed_why
    unrequested = next(name for name in limits if name not in requests)
    return BURSTABLE, f"{unrequested} has a limit ({limits[unrequested]}) but no request"


def get_pod_qos(pod: Pod, pod_level_resources_enabled: bool) -> str:
    """"Guaranteed", "Burstable" or "BestEffort" for `pod` (PodLevelResources gate as given).

    Remembered on the pod, as kubelet's GetPodQOS returns `status.qosClass` once it is set: a pod's
    QoS class never changes after creation, and the managers ask for it once per container (without
    the memo a pod of n containers costs O(n^2))."""
    memo = pod.__dict__.setdefault("_qos_memo", {}) if hasattr(pod, "__dict__") else {}
    known = memo.get(pod_level_resources_enabled)
    if known is None:
        known = memo[pod_level_resources_enabled] = get_pod_qos_explained(pod, pod_level_resources_enabled)[0]
    return known


def get_pod_qos_explained(pod: Pod, pod_level_resources_enabled: bool) -> tuple[str, str]:
    """The QoS class and one sentence naming the rule that decided it."""
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    why = ""
    if pod_level_resources_enabled and pod.resources is not None:
        if pod.resources.requests:
            _add_positive(requests, pod.resources.requests)
        if pod.resources.limits:
            _add_positive(limits, pod.resources.limits)
            missing = _missing_limits(pod.resources.limits)
            if missing:
                guaranteed = False
                why = f"the pod-level limits have {' and '.join(missing)}"
        qos, reason = _classify_explained(requests, limits, guaranteed, why,
                                          "the pod-level limits set cpu and memory, and requests equal limits")
        return qos, f"pod-level resources decide: {reason}"
    containers: Iterable = [*pod.containers, *pod.init_containers]
    for container in containers:
        _add_positive(requests, container.resources.requests)
        _add_positive(limits, container.resources.limits)
        missing = _missing_limits(container.resources.limits)
        if missing:
            if guaranteed:
                why = f"container {container.name!r} has {' and '.join(missing)}"
            guaranteed = False
    return _classify_explained(requests, limits, guaranteed, why)
