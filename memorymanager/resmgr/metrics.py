"""The seed's SystemCollector for memory: per NUMA node capacity, usage and container count,
exported through prometheus-client under the seed's metric names (`mem_node_capacity`,
`mem_node_usage`, `mem_node_container_count`, label `node_id`).

Usage here is the memory the policy assigned on the node (the memory manager's `reserved`
bytes of `memory`), not the kernel's meminfo as in nri-plugins: this project models kubelet's
accounting, not a running kernel. Container count is the number of containers whose memory
set includes the node. No CPU metrics (`cpu.allocation`, `cpu.container.count` in nri-plugins):
the collector reports memory only.
"""
from __future__ import annotations

from typing import Callable, Iterator, Mapping, Sequence

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry
from state.types import NUMANodeState

from memorymanager.resmgr.types import CpuMetric, NodeMetric

MachineStateFn = Callable[[], Mapping[int, NUMANodeState]]
MemsetsFn = Callable[[], Sequence[Sequence[int]]]


class SystemCollector(Collector):
    """Per NUMA node metrics; `update()` refreshes them from the backend's readers."""

    def __init__(self, machine_state: MachineStateFn, memsets: MemsetsFn) -> None:
        self._machine_state = machine_state
        self._memsets = memsets
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

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The three gauges, one sample per NUMA node."""
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

    def register(self, registry: CollectorRegistry) -> None:
        """Register with a prometheus-client registry."""
        registry.register(self)
