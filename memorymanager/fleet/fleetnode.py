"""One node of the fleet: kubelet (a `memorymanager.Node`, the one decision code, with its CPU,
device and memory managers) plus what a scheduler knows of it (node allocatable, the requests of the
pods bound to it, its NRT).

The scheduler's view follows kube-scheduler's NodeResourcesFit: a pod fits when, for every
resource it requests, the requests of the node's pods plus its own stay within the node's
allocatable (capacity minus systemReserved, kubeReserved and the hard-eviction threshold, as
kubelet reports it; `pods` is kubelet's default maxPods, 110; a device resource's allocatable is its
healthy devices). Every pod counts, whatever its QoS class. ephemeral-storage is not modelled and
never limits.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Mapping, Optional

from kubeinputs.kubelet_config import KubeletConfig, node_allocatable_reservation, node_capacity
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.machine import MachineInfo
from kubeinputs.pod import Container, Pod, ResourceRequirements, aggregate_container_resources
from kubeinputs.qos import get_pod_qos
from memorymanager.fleet.nrt_filter import filter_pod
from memorymanager.fleet.nrt_view import NodeNRT
from memorymanager.node.api import Admission, Node

MAX_PODS = 110
UNMODELLED = ("ephemeral-storage",)
ResourceAmounts = dict[str, Fraction]


def node_allocatable(machine: MachineInfo, config: KubeletConfig) -> ResourceAmounts:
    """The node's status.allocatable as exact amounts (cpu in cores, bytes, pods)."""
    capacity = node_capacity(machine)
    reserved = node_allocatable_reservation(config, machine)
    out: ResourceAmounts = {}
    for name, quantity in capacity.items():
        value = quantity.value - (reserved[name].value if name in reserved else 0)
        out[name] = max(value, Fraction(0))
    out["pods"] = Fraction(MAX_PODS)
    return out


def pod_requests(pod: Pod) -> ResourceAmounts:
    """What the scheduler counts for a pod: its effective requests (pod-level ones where given)."""
    total = {name: q.value for name, q in aggregate_container_resources(pod, "requests").items()}
    if pod.resources is not None:
        for name, q in pod.resources.requests.items():
            total[name] = q.value
    total["pods"] = Fraction(1)
    return total


def without_cpu(pod: Pod) -> Pod:
    """The pod without its cpu requests: what the filter is asked on a node whose NRT lists no `cpu`
    (its CPU manager's `none` policy reports no allocatable CPUs), where a cpu request would find no
    NUMA node."""
    def keep(resources: ResourceRequirements) -> ResourceRequirements:
        if "cpu" not in resources.requests and "cpu" not in resources.limits:
            return resources
        pick = lambda m: {k: v for k, v in m.items() if k != "cpu"}  # noqa: E731
        return ResourceRequirements(requests=pick(resources.requests), limits=pick(resources.limits))

    def trim(containers: list[Container]) -> list[Container]:
        return [replace(c, resources=keep(c.resources)) for c in containers]

    return replace(pod, init_containers=trim(pod.init_containers), containers=trim(pod.containers),
                   resources=None if pod.resources is None else keep(pod.resources))


def _shape(qos: str, pod: Pod) -> tuple:
    """A key equal for pods the filter cannot tell apart: QoS class and the requests per container
    (init containers with their sidecar mark, then app containers), as exact integer pairs (a
    Fraction's hash is slow, and the key is hashed per node asked)."""
    def requests(container: Container) -> tuple:
        return tuple(sorted((name, q.value.numerator, q.value.denominator)
                            for name, q in container.resources.requests.items()))

    return (qos, tuple((c.is_restartable, requests(c)) for c in pod.init_containers),
            tuple(requests(c) for c in pod.containers))


@dataclass(frozen=True)
class FilterAsk:
    """What the numa-aware filter is asked about one pod, worked out once per pod: the pod with all
    its requests (cpu, memory, hugepages, devices, ...) for nodes whose NRT lists `cpu`, the pod
    without cpu requests for nodes whose NRT does not, its QoS class, and for each a key equal for
    pods the filter cannot tell apart."""

    pod: Pod
    qos: str
    key: tuple
    pod_without_cpu: Pod
    key_without_cpu: tuple

    @classmethod
    def of(cls, pod: Pod) -> "FilterAsk":
        qos = get_pod_qos(pod, True)
        trimmed = without_cpu(pod)
        return cls(pod, qos, _shape(qos, pod), trimmed, _shape(qos, trimmed))

    def for_node(self, lists_cpu: bool) -> tuple[Pod, tuple]:
        """(the pod to ask about, its verdict key) on a node whose NRT lists `cpu` or not."""
        return (self.pod, self.key) if lists_cpu else (self.pod_without_cpu, self.key_without_cpu)


@dataclass
class FleetNode:
    """A simulated node with the scheduler's bookkeeping."""

    name: str
    group: str
    node: Node
    allocatable: ResourceAmounts
    requested: ResourceAmounts = field(default_factory=dict)
    pods: dict[str, tuple[Pod, ResourceAmounts]] = field(default_factory=dict)
    lists_cpu: bool = False  # the CPU manager reports allocatable CPUs, so the NRT's zones list `cpu`
    _nrt: Optional[NodeNRT] = None
    _verdicts: dict[tuple, bool] = field(default_factory=dict)  # FilterAsk key -> fits, until the node changes

    @classmethod
    def build(cls, name: str, group: str, machine: MachineInfo, config: KubeletConfig,
              limits: Limits = DEFAULT_LIMITS, devices: Optional[Mapping[str, object]] = None) -> "FleetNode":
        """A started node; its allocatable adds each device resource's healthy devices, as kubelet reports them."""
        node = Node(machine, config, limits=limits, devices=dict(devices or {}))
        node.start()
        allocatable = node_allocatable(machine, config)
        simulated = node.simulated_node
        for resource, count in simulated.device_manager.get_capacity()[1].items():
            allocatable[resource] = Fraction(count)
        return cls(name, group, node, allocatable, lists_cpu=bool(simulated.cpu_manager.get_allocatable_cpus()))

    def fits(self, requests: Mapping[str, Fraction]) -> bool:
        """NodeResourcesFit: every requested resource stays within allocatable."""
        for name, amount in requests.items():
            if amount == 0 or name in UNMODELLED:
                continue
            if self.requested.get(name, Fraction(0)) + amount > self.allocatable.get(name, Fraction(0)):
                return False
        return True

    def least_allocated_score(self, requests: Mapping[str, Fraction]) -> int:
        """NodeResourcesFit's LeastAllocated score over cpu and memory (weight 1 each), with the pod."""
        total = 0
        for name in ("cpu", "memory"):
            capacity = self.allocatable.get(name, Fraction(0))
            used = self.requested.get(name, Fraction(0)) + requests.get(name, Fraction(0))
            total += 0 if capacity == 0 or used > capacity else int((capacity - used) * 100 // capacity)
        return total // 2

    def admit(self, key: str, pod: Pod, requests: ResourceAmounts) -> Admission:
        """kubelet's admission; an admitted pod is bound and counted."""
        answer = self.node.admit(pod)
        if answer.admitted:
            self.pods[key] = (pod, requests)
            for name, amount in requests.items():
                self.requested[name] = self.requested.get(name, Fraction(0)) + amount
            if self._nrt is not None:
                self._nrt.added(pod)
            self._verdicts.clear()
        return answer

    def delete(self, key: str) -> bool:
        """Remove a bound pod; False when it is not on this node."""
        found = self.pods.pop(key, None)
        if found is None:
            return False
        pod, requests = found
        self.node.remove(pod.uid)
        for name, amount in requests.items():
            self.requested[name] = self.requested.get(name, Fraction(0)) - amount
        if self._nrt is not None:
            self._nrt.removed(pod)
        self._verdicts.clear()
        return True

    def nrt_view(self) -> NodeNRT:
        """The node's NRT, kept up to date pod by pod (`nrt_view.NodeNRT`), made on first use."""
        if self._nrt is None:
            self._nrt = NodeNRT(self.name, self.node)
        return self._nrt

    def nrt(self) -> dict:
        """The NodeResourceTopology NFD's topology-updater would publish now (treat it as read-only)."""
        return self.nrt_view().nrt()

    def filter_fits(self, ask: FilterAsk) -> bool:
        """scheduler-plugins' single-numa-node filter on this node's NRT now; the verdict is kept
        for pods with the same `FilterAsk.key` until the node changes."""
        pod, key = ask.for_node(self.lists_cpu)
        fits = self._verdicts.get(key)
        if fits is None:
            view = self.nrt_view()
            # the policy and scope are read from the object's attributes, which no pod changes; the zones
            # come from the view's sums (the same amounts, without printing and parsing them)
            fits = self._verdicts[key] = filter_pod(pod, view.base, self.allocatable, qos=ask.qos,
                                                    zones=view.numa_zones()).fits
        return fits
