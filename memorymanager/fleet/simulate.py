"""The simulation: replay trace events on fleet nodes under one kubelet variant.

A bound add (`nodeName` set) goes straight to kubelet on that node. An unbound add is placed:

- candidates are the nodes where NodeResourcesFit passes (see `fleetnode`), in this order:
  `first-fit` fleet order; `least-allocated` by LeastAllocated score, highest first, ties in fleet
  order (kube-scheduler breaks ties at random; fleet order keeps runs reproducible);
  `numa-aware` fleet order, keeping only nodes where scheduler-plugins' single-numa-node filter
  passes on the node's current NRT, whose zones list exclusive CPUs, devices, memory and
  hugepages (asked about every request; cpu left out on a node whose CPU manager pins nothing,
  whose zones list no `cpu`);
- kubelet admits on the first candidate. When kubelet refuses (TopologyAffinityError,
  UnexpectedAdmissionError, ...), the scheduler and kubelet disagreed: kubelet marks the pod
  Failed and does not run it. `onRefusal: retry` models a controller that recreates it, and the
  scheduler then binds it to the next candidate; `onRefusal: fail` leaves it refused;
- a pod with no (remaining) candidate is unschedulable.

Under `numa-aware`, bound adds are also checked against the filter, and a filter verdict kubelet
contradicts counts as a disagreement (`filterFitKubeletRefused`, `filterRefusedKubeletAdmitted`).

A delete removes the pod from its node (nothing, if it never ran). Nodes are independent, so a
bound trace splits by node: `run_nodes` on any subset of nodes gives those nodes' results
exactly as the whole-fleet run does.
"""
from __future__ import annotations

import gc
import heapq
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterable, Optional, Sequence

from cpumanager.requests import guaranteed_cpus, pod_guaranteed_cpus, pod_level_managed, skips_pod_level
from kubeinputs.features import FeatureGates
from kubeinputs.kubelet_config import KubeletConfig
from kubeinputs.pod import Pod
from memorymanager.fleet.fleetnode import FilterAsk, FleetNode, pod_requests
from memorymanager.fleet.spec import FleetSpec, NodeGroup, Variant, variant_kubelet
from memorymanager.fleet.trace import Event
from memorymanager.node.api import Admission, read_kubelet, read_machine

Progress = Callable[[int], None]
SHAPES_KEPT = 256  # pod shapes whose first candidate node is remembered (least recently used dropped)


@dataclass
class NodeResult:
    """What happened on one node: counts, kubelet's refusals by reason and message, and at the end
    its NUMA nodes (allocatable and free bytes per memory resource; allocatable and free exclusive
    CPUs as `cpu` when the CPU manager pins), its CPUs (`CPU_FIELDS`) and its devices per resource
    (`DEVICE_FIELDS`)."""

    name: str
    group: str
    admitted: int = 0
    deleted: int = 0
    refusals: dict[str, dict[str, int]] = field(default_factory=dict)
    disagreements: int = 0
    filter_fit_kubelet_refused: int = 0
    filter_refused_kubelet_admitted: int = 0
    numa: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)
    cpus: dict[str, int] = field(default_factory=dict)
    devices: dict[str, dict[str, int]] = field(default_factory=dict)

    def refuse(self, reason: str, message: str) -> None:
        by_message = self.refusals.setdefault(reason, {})
        by_message[message] = by_message.get(message, 0) + 1


@dataclass
class TaskResult:
    """One task's results: the variant, per-node results in fleet order, pod outcomes, and the
    memory and exclusive CPU needs of the pods that did not run (for the stranded figures)."""

    variant: str
    nodes: list[NodeResult]
    pods_added: int = 0
    pods_failed: int = 0
    unschedulable: int = 0
    refused_needs: list[int] = field(default_factory=list)
    refused_cpu_needs: list[int] = field(default_factory=list)
    events: int = 0


CPU_FIELDS = ("total", "reserved", "allocatable", "exclusive", "shared")
DEVICE_FIELDS = ("capacity", "allocatable", "allocated", "free")


def cpu_accounts(node: FleetNode) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    """The CPU manager's CPUs now: per NUMA node (allocatable, free) exclusive CPUs, only when it pins
    (its static policy reports allocatable CPUs), and the node's counts by `CPU_FIELDS`: every CPU, the
    reserved ones, the allocatable ones, those held exclusively, and the shared pool (defaultCpuSet;
    under the `none` policy every CPU is shared)."""
    manager = node.node.simulated_node.cpu_manager
    total = len(manager.get_all_cpus()) or node.node.machine.num_cores  # a machine file may list no CPU topology
    allocatable = manager.get_allocatable_cpus()
    if not allocatable:
        return {}, {"total": total, "reserved": 0, "allocatable": 0, "exclusive": 0, "shared": total}
    shared = manager.get_default_cpu_set()
    free = allocatable.intersection(shared)
    per_numa: dict[int, tuple[int, int]] = {}
    for numa in node.node.machine.topology:
        mine = [t for core in numa.cores or [] for t in core.get("thread_ids") or []]
        per_numa[numa.node_id] = (sum(1 for t in mine if t in allocatable), sum(1 for t in mine if t in free))
    counts = {"total": total, "reserved": len(manager.reserved_cpus()), "allocatable": len(allocatable),
              "exclusive": len(allocatable) - len(free), "shared": len(shared)}
    return per_numa, counts


def device_accounts(node: FleetNode) -> dict[str, dict[str, int]]:
    """Per device resource, by `DEVICE_FIELDS`: devices registered, healthy ones, those allocated, healthy
    ones nobody holds."""
    manager = node.node.simulated_node.device_manager
    capacity, allocatable = manager.get_capacity()
    allocated = manager.allocated_devices()
    healthy = manager.get_allocatable_devices()
    return {resource: {"capacity": capacity[resource], "allocatable": allocatable.get(resource, 0),
                       "allocated": len(allocated.get(resource, ())),
                       "free": len(set(healthy.get(resource, {})) - allocated.get(resource, set()))}
            for resource in sorted(capacity)}


def _memory_need(pod: Pod, scope: str) -> int:
    """The most memory one NUMA placement of the pod needs: its largest container's request in
    container scope, its effective request in pod scope."""
    if scope == "pod":
        total = pod_requests(pod).get("memory", Fraction(0))
        return int(total)
    needs = [c.resources.requests["memory"].value for c in pod.all_containers() if "memory" in c.resources.requests]
    return int(max(needs)) if needs else 0


def _cpu_need(pod: Pod, kubelet: KubeletConfig) -> int:
    """The most exclusive CPUs one NUMA placement of the pod needs under the CPU manager's static policy: its
    largest container's exclusive CPUs in container scope, the pod's in pod scope or for a pod-level CPU set
    (PodLevelResourceManagers); 0 for a pod that gets none (not Guaranteed, fractional CPUs, pod-level
    resources the policy leaves alone)."""
    gates = FeatureGates.from_config(kubelet.feature_gates)  # a started node's gates parse
    if skips_pod_level(pod, gates):
        return 0
    if kubelet.topology_manager_scope == "pod" or pod_level_managed(pod, gates):
        return pod_guaranteed_cpus(pod, gates)
    return max((guaranteed_cpus(pod, c, gates) for c in pod.all_containers()), default=0)


class SimulationObserver:
    """What a replay decides, in order, for whoever watches it (a test, a report): each numa-aware filter
    verdict and each answer kubelet gives. The events do nothing here; an observer overrides them."""

    def filtered(self, node: FleetNode, ask: FilterAsk, fits: bool) -> None:
        """The numa-aware filter's verdict for `ask`'s pod on `node`."""

    def kubelet_answered(self, node: FleetNode, pod: Pod, answer: Admission) -> None:
        """Kubelet on `node` admitted or refused `pod`."""


class Simulation:
    """The nodes of one variant (all of them, or a subset) and the replay loop; `observer` hears its
    decisions."""

    def __init__(self, spec: FleetSpec, variant: Variant, node_names: Optional[Sequence[str]] = None,
                 observer: Optional[SimulationObserver] = None) -> None:
        self.spec = spec
        self.variant = variant
        self.observer = observer if observer is not None else SimulationObserver()
        wanted = None if node_names is None else set(node_names)
        self.nodes: list[FleetNode] = []
        for group in spec.groups:
            names = [n for n in group.node_names() if wanted is None or n in wanted]
            if names:
                self.nodes.extend(self._build_group(group, names))
        self.by_name = {n.name: n for n in self.nodes}
        self.position = {n.name: i for i, n in enumerate(self.nodes)}
        # fleet-order rules: per pod shape, the nodes that may take it (see Candidates)
        self.candidates: OrderedDict[tuple, Candidates] = OrderedDict()
        self.examined = 0  # nodes a placement scan asked (NodeResourcesFit, then the filter)
        self.results = {n.name: NodeResult(n.name, n.group) for n in self.nodes}
        self.result = TaskResult(variant.name, [])
        self.bound_to: dict[str, str] = {}

    def _build_group(self, group: NodeGroup, names: list[str]) -> list[FleetNode]:
        machine = read_machine(dict(group.machine), self.spec.limits)
        config = read_kubelet(variant_kubelet(group, self.variant), self.spec.limits)
        return [FleetNode.build(name, group.name, machine, config, self.spec.limits, group.devices) for name in names]

    # ----- events -----

    def run(self, events: Iterable[Event], progress: Optional[Progress] = None, every: int = 500) -> TaskResult:
        """Replay the events in order, then read every node's NUMA nodes.

        The trace and the nodes are long-lived; they are frozen out of the cyclic garbage
        collector for the replay (its full passes otherwise rescan them again and again) and
        handed back to it at the end."""
        gc.freeze()
        try:
            return self._replay(events, progress, every)
        finally:
            gc.unfreeze()

    def _replay(self, events: Iterable[Event], progress: Optional[Progress], every: int) -> TaskResult:
        pending = 0
        for event in events:
            if event.op == "add":
                self._add(event)
            else:
                self._delete(event)
            self.result.events += 1
            pending += 1
            if progress is not None and pending >= every:
                progress(pending)
                pending = 0
        if progress is not None and pending:
            progress(pending)
        for node in self.nodes:
            free = node.node.free()
            allocatable = node.node.allocatable()
            result = self.results[node.name]
            result.numa = {
                numa: {res: (allocatable.get(numa, {}).get(res, 0), amount) for res, amount in sorted(resources.items())}
                for numa, resources in sorted(free.items())
            }
            cpus_per_numa, result.cpus = cpu_accounts(node)
            for numa, amounts in cpus_per_numa.items():
                result.numa.setdefault(numa, {})["cpu"] = amounts
            result.devices = device_accounts(node)
        self.result.nodes = [self.results[n.name] for n in self.nodes]
        return self.result

    def _delete(self, event: Event) -> None:
        name = self.bound_to.pop(event.key, None)
        if name is not None and self.by_name[name].delete(event.key):
            self.results[name].deleted += 1
            self._changed(name)

    def _changed(self, name: str) -> None:
        """A node took or freed a pod: it may take any shape again."""
        at = self.position[name]
        for candidates in self.candidates.values():
            candidates.add(at)

    def _add(self, event: Event) -> None:
        pod = event.pod
        assert pod is not None
        if event.node is not None and event.node not in self.by_name:
            return  # bound to a node of another task
        self.result.pods_added += 1
        requests = pod_requests(pod)
        if event.node is not None:
            self._bound(event, pod, requests)
            return
        tried: set[str] = set()
        while True:
            target = self._choose(pod, requests, tried)
            if target is None:
                self.result.unschedulable += 1
                self.result.refused_needs.append(_memory_need(pod, target_scope(self.nodes)))
                if self.nodes:
                    self.result.refused_cpu_needs.append(_cpu_need(pod, self.nodes[0].node.kubelet))
                return
            answer = target.admit(event.key, pod, requests)
            self.observer.kubelet_answered(target, pod, answer)
            result = self.results[target.name]
            if answer.admitted:
                result.admitted += 1
                self.bound_to[event.key] = target.name
                self._changed(target.name)
                return
            result.refuse(answer.reason, answer.message)
            result.disagreements += 1
            tried.add(target.name)
            if self.spec.on_refusal == "fail":
                self.result.pods_failed += 1
                self.result.refused_needs.append(_memory_need(pod, target.node.kubelet.topology_manager_scope))
                self.result.refused_cpu_needs.append(_cpu_need(pod, target.node.kubelet))
                return

    def _bound(self, event: Event, pod: Pod, requests: dict[str, Fraction]) -> None:
        node = self.by_name[event.node or ""]
        predicted: Optional[bool] = None
        if self.spec.placement == "numa-aware":
            predicted = self._filter(node, FilterAsk.of(pod))
        answer = node.admit(event.key, pod, requests)
        self.observer.kubelet_answered(node, pod, answer)
        result = self.results[node.name]
        if answer.admitted:
            result.admitted += 1
            self.bound_to[event.key] = node.name
            self._changed(node.name)
            if predicted is False:
                result.filter_refused_kubelet_admitted += 1
        else:
            result.refuse(answer.reason, answer.message)
            self.result.pods_failed += 1
            self.result.refused_needs.append(_memory_need(pod, node.node.kubelet.topology_manager_scope))
            self.result.refused_cpu_needs.append(_cpu_need(pod, node.node.kubelet))
            if predicted is True:
                result.filter_fit_kubelet_refused += 1

    # ----- placement -----

    def _filter(self, node: FleetNode, ask: FilterAsk) -> bool:
        """The numa-aware filter's verdict for the pod `ask` describes, on `node` now (reported)."""
        fits = node.filter_fits(ask)
        self.observer.filtered(node, ask, fits)
        return fits

    def _choose(self, pod: Pod, requests: dict[str, Fraction], tried: set[str]) -> Optional[FleetNode]:
        rule = self.spec.placement
        if rule == "least-allocated":
            best: Optional[FleetNode] = None
            best_score = -1
            for node in self.nodes:
                if node.name in tried or not node.fits(requests):
                    continue
                score = node.least_allocated_score(requests)
                if score > best_score:
                    best, best_score = node, score
            return best
        ask = FilterAsk.of(pod) if rule == "numa-aware" else None
        shape = (tuple(sorted((name, amount.numerator, amount.denominator) for name, amount in requests.items())),
                 None if ask is None else ask.key)
        candidates = self.candidates.pop(shape, None) or Candidates(len(self.nodes))
        self.candidates[shape] = candidates  # most recently used last
        if len(self.candidates) > SHAPES_KEPT:
            self.candidates.popitem(last=False)
        kept: list[int] = []  # candidates that stay candidates: this pod's kubelet refusals, the choice
        chosen: Optional[FleetNode] = None
        while chosen is None:
            at = candidates.pop()
            if at is None:
                break
            node = self.nodes[at]
            if node.name in tried:
                kept.append(at)
                continue
            self.examined += 1
            if node.fits(requests) and (ask is None or self._filter(node, ask)):
                chosen = node
                kept.append(at)
        for at in kept:
            candidates.add(at)
        return chosen


class Candidates:
    """The nodes (by fleet position) that may take one pod shape: every node not asked since it
    last changed, in fleet order. A node that refuses the shape is dropped until it changes, so a
    scan skips the full part of the fleet: over a replay, each node is asked about a shape once
    at first and once per change after, however full the fleet is. Positions from `first` on are
    all candidates; below it, those in `extra` (a heap, with `members` as its set)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.first = 0
        self.extra: list[int] = []
        self.members: set[int] = set()

    def add(self, at: int) -> None:
        """Position `at` is a candidate again."""
        if at < self.first and at not in self.members:
            self.members.add(at)
            heapq.heappush(self.extra, at)

    def pop(self) -> Optional[int]:
        """The lowest candidate, taken out (None when there is none)."""
        if self.extra and self.extra[0] < self.first:
            at = heapq.heappop(self.extra)
            self.members.discard(at)
            return at
        if self.first < self.size:
            self.first += 1
            return self.first - 1
        return None


def target_scope(nodes: Sequence[FleetNode]) -> str:
    """The topology manager scope of the fleet's first node (for an unschedulable pod's need)."""
    return nodes[0].node.kubelet.topology_manager_scope if nodes else "container"


def run_nodes(spec: FleetSpec, variant: Variant, events: Sequence[Event], node_names: Optional[Sequence[str]] = None,
              progress: Optional[Progress] = None) -> TaskResult:
    """Replay `events` on the named nodes (all nodes when None) under `variant`."""
    return Simulation(spec, variant, node_names).run(events, progress)
