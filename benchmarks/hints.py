"""B2: the Static policy's hints for one container, 2 to 16 NUMA nodes (memory + 2Mi + 1Gi hugepages).

An idle node and a small request: every one of the 2^n - 1 masks qualifies, so this is
the largest hint list the policy produces.
"""
from __future__ import annotations

from benchmarks.machines import guaranteed_pod, numa_machine, static_config
from benchmarks.timing import Row, median_seconds
from kubeinputs.kubelet_config import node_allocatable_reservation
from memorymanager.manager import new_manager
from topologymanager.hint import TopologyHint


class _NoAffinity:
    """An affinity store that knows nothing (the zero hint), as with topology policy none."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return TopologyHint()


def run(repeats: int, sizes=(2, 4, 8, 12, 16)) -> list[Row]:
    """Median time of get_topology_hints per NUMA count."""
    rows = []
    for nodes in sizes:
        machine = numa_machine(nodes)
        config = static_config(max_numa=max(8, nodes))
        manager = new_manager("Static", machine, node_allocatable_reservation(config, machine),
                              config.reserved_memory, None, _NoAffinity())
        pod = guaranteed_pod("p", memory="1Gi", hugepages_2mi="4Mi", hugepages_1gi="1Gi")
        manager.start(lambda: [pod])
        hints = manager.get_topology_hints(pod, pod.containers[0])
        count = len(hints["memory"])
        seconds = median_seconds(lambda: manager.get_topology_hints(pod, pod.containers[0]), repeats if nodes < 16 else max(3, repeats // 3))
        rows.append(Row("B2", f"static hints, {nodes} NUMA nodes", "", seconds * 1e3, "ms",
                        note=f"{count} hints per resource"))
    return rows
