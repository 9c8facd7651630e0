"""Part 1 of an explanation: the QoS class and the rule behind it, and what each container (or the
pod, in pod scope) asks the Static policy for, or why it asks nothing."""
from __future__ import annotations

from typing import Any

from cpumanager.requests import CPU, guaranteed_cpus, is_integral_cpu_amount, pod_guaranteed_cpus
from devicemanager.requests import container_device_request, pod_device_request
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

NON_INTEGRAL_CPU_NOTE = "its CPU request is not an integer; that matters to the CPU manager, not to memory"


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
                ask.note = NON_INTEGRAL_CPU_NOTE
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
    _cpu_and_device_asks(node, pod, asked)
    return asked


def models_cpus_or_devices(node: SimulatedNode) -> bool:
    """The node has a CPU manager policy other than none, or device resources: part 1 then names their asks."""
    cpu = node.cpu_manager is not None and node.cpu_manager.policy_name() != "none"
    dm = node.device_manager
    return cpu or (dm is not None and bool(dm.state().plugins.all_devices or
                                           any(ids for ids in dm.state().allocated.values())))


def _cpu_and_device_asks(node: SimulatedNode, pod: Pod, asked: Asked) -> None:
    """Each container's cpu request and whether it gets exclusive CPUs (the CPU manager's guaranteedCPUs), and its
    device requests, when the node models them (memory-only nodes keep part 1 as it was)."""
    if not models_cpus_or_devices(node):
        return
    cm, dm = node.cpu_manager, node.device_manager
    static = cm is not None and cm.policy_name() != "none"
    gates = cm.policy.feature_gates if static else node.memory_manager.feature_gates
    containers = {c.name: c for c in pod.all_containers()}
    for ask in asked.containers:
        container = containers.get(ask.name)
        if ask.kind == "pod":
            quantity = (pod.resources.requests or {}).get(CPU) if pod.resources is not None else None
            ask.exclusive_cpus = pod_guaranteed_cpus(pod, gates) if static else 0
            ask.devices = pod_device_request(dm.state(), pod) if dm is not None else {}
        elif container is not None:
            quantity = (container.resources.requests or {}).get(CPU)
            ask.exclusive_cpus = guaranteed_cpus(pod, container, gates) if static else 0
            ask.devices = container_device_request(dm.state(), container) if dm is not None else {}
        else:
            continue
        if ask.note == NON_INTEGRAL_CPU_NOTE:
            ask.note = ""  # the cpu part of the line says it
        ask.cpu = str(quantity) if quantity is not None else ""
        has_cpu = quantity is not None or ask.kind == "pod"
        ask.cpu_note = _cpu_note(static, asked.qos, ask.exclusive_cpus, has_cpu,
                                 quantity is None or is_integral_cpu_amount(quantity))


def _cpu_note(static: bool, qos: str, exclusive: int, has_cpu: bool, integral: bool) -> str:
    """Why a request gets exclusive CPUs or stays in the shared pool, in a phrase."""
    if not static:
        return "CPU manager policy none"
    if exclusive:
        return "Guaranteed with an integer CPU count"
    if qos != GUARANTEED:
        return f"the pod is {qos}"
    if not has_cpu:
        return "no cpu request"
    if not integral:
        return "not an integer CPU count"
    return "not equivalent-Guaranteed"


def _non_integral_cpu(container: Any) -> bool:
    """Whether the CPU request is fractional (a CPU-manager matter; memory is aligned all the same)."""
    cpu = (container.resources.requests or {}).get("cpu")
    return cpu is not None and cpu.value.denominator != 1
