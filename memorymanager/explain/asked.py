"""Part 1 of an explanation: the QoS class and the rule behind it, and what each container (or the
pod, in pod scope) asks the Static policy for, or why it asks nothing."""
from __future__ import annotations

from typing import Any

from kubeinputs.features import POD_LEVEL_RESOURCES_GATE
from kubeinputs.pod import Pod
from kubeinputs.qos import GUARANTEED, get_pod_qos_explained
from memorymanager.explain.model import Asked, ContainerAsk, PodPart
from memorymanager.node.simulated_node import POD_SCOPE, SimulatedNode
from memorymanager.observer import NOT_GUARANTEED, POD_LEVEL_RESOURCES
from memorymanager.policy import MemoryManagerError
from memorymanager.policy_static import StaticPolicy
from memorymanager.requests import (
    get_container_requested_resources,
    get_pod_requested_resources,
    is_container_equivalent_guaranteed,
    is_pod_level_resources_set,
    is_restartable_init_container,
    pod_request_parts,
)

def _kind(pod: Pod, container: Any) -> str:
    """init, sidecar (restartable init container) or app."""
    if container in pod.init_containers:
        return "sidecar" if is_restartable_init_container(container) else "init"
    return "app"


def build_asked(node: SimulatedNode, pod: Pod) -> Asked:
    """Part 1: QoS class and the rule behind it; each container's request and why it asks nothing."""
    policy = node.memory_manager.policy
    gates = node.memory_manager.feature_gates  # the gates the memory manager and its policy run with
    qos, qos_reason = get_pod_qos_explained(pod, gates.enabled(POD_LEVEL_RESOURCES_GATE))
    scope = node.topology_manager.scope.name
    asked = Asked(pod.name, pod.uid, qos, qos_reason, node.memory_manager.policy_name(),
                  node.topology_manager.get_policy().name, scope)
    static = isinstance(policy, StaticPolicy)
    skip = policy.skip_reason(pod) if static else None  # the policy's own guards, in its order
    for container in pod.all_containers():
        ask = ContainerAsk(container.name, _kind(pod, container), {})
        if not static:
            ask.note = "memory manager policy None: no exclusive memory and no hints"
        else:
            try:
                ask.requested = get_container_requested_resources(pod, container, policy.pod_level_resource_managers)
            except MemoryManagerError as exc:
                ask.note = f"the request cannot be read: {exc}"
            if ask.note:
                pass  # the request itself is the problem
            elif skip == NOT_GUARANTEED:
                ask.note = f"the pod is {qos}: the Static policy serves only Guaranteed pods"
            elif skip == POD_LEVEL_RESOURCES:
                ask.note = "the pod sets pod-level resources, which this kubelet's Static policy skips"
            elif (policy.pod_level_resource_managers and is_pod_level_resources_set(pod)
                  and not is_container_equivalent_guaranteed(container)):
                ask.note = "not equivalent-Guaranteed: it uses the pod's shared memory pool"
            elif not ask.requested:
                ask.note = "requests no memory and no hugepages"
            elif _non_integral_cpu(container):
                ask.note = "its CPU request is not an integer; that matters to the CPU manager, not to memory"
        asked.containers.append(ask)
    if static and scope == POD_SCOPE and qos == GUARANTEED:
        try:
            total = get_pod_requested_resources(pod, policy.pod_level_resource_managers)
        except MemoryManagerError as exc:
            asked.containers.append(ContainerAsk(POD_SCOPE, "pod", {}, f"the request cannot be read: {exc}"))
            return asked
        if policy.pod_level_resource_managers and is_pod_level_resources_set(pod):
            note = "pod-level resources: the pod's own spec.resources requests"
        else:
            parts = pod_request_parts(pod, policy.pod_level_resource_managers)
            asked.pod_parts = [PodPart(r, p.app, p.sidecars, p.init_peak, p.peak_container, p.total)
                               for r, p in parts.items()]
            note = "per resource: max(app containers + sidecars, the largest init container with the sidecars before it)"
        asked.containers.append(ContainerAsk(POD_SCOPE, "pod", total, note))
    return asked


def _non_integral_cpu(container: Any) -> bool:
    """Whether the CPU request is fractional (a CPU-manager matter; memory is aligned all the same)."""
    cpu = (container.resources.requests or {}).get("cpu")
    return cpu is not None and cpu.value.denominator != 1
