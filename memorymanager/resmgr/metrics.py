"""The seed's SystemCollector: per NUMA node capacity, usage and container count, and per CPU allocation
and container count, exported through prometheus-client under the seed's metric names
(`mem_node_capacity`, `mem_node_usage`, `mem_node_container_count`, label `node_id`; `cpu_allocation`,
`cpu_container_count`, label `cpu_id`: nri-plugins' `mem.node.*` and `cpu.*` gauges of
pkg/resmgr/policy/metrics.go, with their `node.id` and `cpu.id` attributes, as Prometheus spells them).

Usage here is the memory the policy assigned on the node (the memory manager's `reserved`
bytes of `memory`), not the kernel's meminfo as in nri-plugins: this project models kubelet's
accounting, not a running kernel. A NUMA node's container count is the number of containers whose
memory set includes the node.

The CPU side is nri-plugins' rule on the CPU manager's placement: every CPU of the machine gets a
sample; each cached container adds one to the container count of every CPU in its `cpuset.cpus` (its
exclusive CPUs, else the shared pool; none under the CPU manager's `none` policy, where kubelet sets no
cpuset) and its CPU request in milli-CPU divided by the size of that set (integer division) to their
allocation. A backend without the CPU readers (`protocols.CPUReaders`) reports no CPU samples.
"""
from __future__ import annotations

from typing import Callable, Iterator, Mapping, Optional, Sequence

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry
from state.types import NUMANodeState

from memorymanager.resmgr.types import CpuMetric, NodeMetric

MachineStateFn = Callable[[], Mapping[int, NUMANodeState]]
MemsetsFn = Callable[[], Sequence[Sequence[int]]]
CPUIdsFn = Callable[[], Sequence[int]]
CPUAllocationsFn = Callable[[], Sequence[tuple[Sequence[int], int]]]


class SystemCollector(Collector):
    """Per NUMA node and per CPU metrics; `update()` refreshes them from the backend's readers (the CPU ones
    only when `cpu_ids` and `cpu_allocations` are given)."""

    def __init__(self, machine_state: MachineStateFn, memsets: MemsetsFn, cpu_ids: Optional[CPUIdsFn] = None,
                 cpu_allocations: Optional[CPUAllocationsFn] = None) -> None:
        self._machine_state = machine_state
        self._memsets = memsets
        self._cpu_ids = cpu_ids
        self._cpu_allocations = cpu_allocations
        self.nodes: dict[int, NodeMetric] = {}
        self.cpus: dict[int, CpuMetric] = {}

    def update(self) -> None:
        """Recompute every NodeMetric."""
        state = self._machine_state()
        memsets = [set(m) for m in self._memsets()]
        nodes: dict[int, NodeMetric] = {}
        for numa in sorted(state):
            table = (state[numa].memory_map or {}).get("memory")
            nodes[numa] = NodeMetric(
                id=numa, id_label={"node_id": str(numa)},
                capacity=table.total_mem_size if table else 0,
                usage=table.reserved if table else 0,
                container_count=sum(1 for m in memsets if numa in m),
            )
        self.nodes = nodes
        self.cpus = self._cpu_metrics()

    def _cpu_metrics(self) -> dict[int, CpuMetric]:
        """Per CPU: milli-CPU allocated (each container's request spread evenly over its cpuset) and containers."""
        if self._cpu_ids is None or self._cpu_allocations is None:
            return {}
        cpus = {cpu: CpuMetric(id=cpu, id_label={"cpu_id": str(cpu)}) for cpu in sorted(self._cpu_ids())}
        for cpuset, request in self._cpu_allocations():
            share = request // len(cpuset) if cpuset else 0
            for cpu in cpuset:
                metric = cpus.get(cpu)
                if metric is not None:
                    metric.container_count += 1
                    metric.allocation += share
        return cpus

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The three memory gauges, one sample per NUMA node; the two CPU gauges, one sample per CPU (when the
        backend reads CPUs)."""
        families = [
            (GaugeMetricFamily("mem_node_capacity", "Capacity of the memory node.", labels=["node_id"]),
             lambda m: m.capacity),
            (GaugeMetricFamily("mem_node_usage", "Usage of the memory node (memory assigned by the policy).",
                               labels=["node_id"]), lambda m: m.usage),
            (GaugeMetricFamily("mem_node_container_count", "Number of containers assigned to the memory node.",
                               labels=["node_id"]), lambda m: m.container_count),
        ]
        for family, pick in families:
            for numa, metric in sorted(self.nodes.items()):
                family.add_metric([str(numa)], pick(metric))
            yield family
        if self._cpu_ids is None:
            return
        cpu_families = [
            (GaugeMetricFamily("cpu_allocation", "Total allocation of the CPU (milli-CPU).", labels=["cpu_id"]),
             lambda c: c.allocation),
            (GaugeMetricFamily("cpu_container_count", "Number of containers assigned to the CPU.", labels=["cpu_id"]),
             lambda c: c.container_count),
        ]
        for family, pick_cpu in cpu_families:
            for cpu, cpu_metric in sorted(self.cpus.items()):
                family.add_metric([str(cpu)], pick_cpu(cpu_metric))
            yield family

    def register(self, registry: CollectorRegistry) -> None:
        """Register with a prometheus-client registry."""
        registry.register(self)
