"""One node of the fleet: kubelet (a `memorymanager.Node`, the one decision code) plus what a
scheduler knows of it (node allocatable, the requests of the pods bound to it, its NRT).

The scheduler's view follows kube-scheduler's NodeResourcesFit: a pod fits when, for every
resource it requests, the requests of the node's pods plus its own stay within the node's
allocatable (capacity minus systemReserved, kubeReserved and the hard-eviction threshold, as
kubelet reports it; `pods` is kubelet's default maxPods, 110). Every pod counts, whatever its
QoS class. ephemeral-storage is not modelled and never limits.
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


def memory_only(pod: Pod) -> Pod:
    """The pod with only memory and hugepages requests, the resources this simulation's kubelet
    accounts per NUMA node (it has no CPU manager and no device plugins)."""
    def keep(resources: ResourceRequirements) -> ResourceRequirements:
        pick = lambda m: {k: v for k, v in m.items() if k == "memory" or k.startswith("hugepages-")}  # noqa: E731
        return ResourceRequirements(requests=pick(resources.requests), limits=pick(resources.limits))

    def trim(containers: list[Container]) -> list[Container]:
        return [replace(c, resources=keep(c.resources)) for c in containers]

    return replace(pod, init_containers=trim(pod.init_containers), containers=trim(pod.containers),
                   resources=None if pod.resources is None else keep(pod.resources))


@dataclass(frozen=True)
class FilterAsk:
    """What the numa-aware filter is asked about one pod, worked out once per pod: the pod with
    memory and hugepages requests only, its QoS class, and a key equal for pods the filter cannot
    tell apart (their requests per container, init containers and sidecars marked)."""

    pod: Pod
    qos: str
    key: tuple

    @classmethod
    def of(cls, pod: Pod) -> "FilterAsk":
        trimmed = memory_only(pod)

        def requests(container: Container) -> tuple:
            # exact amounts as integer pairs: a Fraction's hash is slow, and the key is hashed per node asked
            return tuple(sorted((name, q.value.numerator, q.value.denominator)
                                for name, q in container.resources.requests.items()))

        qos = get_pod_qos(pod, True)
        key = (qos, tuple((c.is_restartable, requests(c)) for c in trimmed.init_containers),
               tuple(requests(c) for c in trimmed.containers))
        return cls(trimmed, qos, key)


@dataclass
class FleetNode:
    """A simulated node with the scheduler's bookkeeping."""

    name: str
    group: str
    node: Node
    allocatable: ResourceAmounts
    requested: ResourceAmounts = field(default_factory=dict)
    pods: dict[str, tuple[Pod, ResourceAmounts]] = field(default_factory=dict)
    _nrt: Optional[NodeNRT] = None
    _verdicts: dict[tuple, bool] = field(default_factory=dict)  # FilterAsk.key -> fits, until the node changes

    @classmethod
    def build(cls, name: str, group: str, machine: MachineInfo, config: KubeletConfig,
              limits: Limits = DEFAULT_LIMITS) -> "FleetNode":
        node = Node(machine, config, limits=limits)
        node.start()
        return cls(name, group, node, node_allocatable(machine, config))

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

    def nrt(self) -> dict:
        """The NodeResourceTopology NFD's topology-updater would publish now (kept up to date pod
        by pod, see `nrt_view.NodeNRT`; treat it as read-only)."""
        if self._nrt is None:
            self._nrt = NodeNRT(self.name, self.node)
        return self._nrt.nrt()

    def filter_fits(self, ask: FilterAsk) -> bool:
        """scheduler-plugins' single-numa-node filter on this node's NRT now; the verdict is kept
        for pods with the same `FilterAsk.key` until the node changes."""
        fits = self._verdicts.get(ask.key)
        if fits is None:
            fits = self._verdicts[ask.key] = filter_pod(ask.pod, self.nrt(), self.allocatable, qos=ask.qos).fits
        return fits
