"""B3 and B4: whole admissions through the topology manager and the Static memory manager.

B3: one Guaranteed pod on 8 NUMA nodes, with cpu and device hints injected (all 255
masks, single-node ones preferred, as the CPU and device managers answer on an idle
node), admitted and then removed again so every round starts from the same state.
B4: churn, 10,000 pods admitted and removed, with the checkpoint file written after
every change (as kubelet does) and with the state kept in memory only.
"""
from __future__ import annotations

import tempfile
import time

from benchmarks.churn import churn_seconds
from benchmarks.machines import guaranteed_pod, numa_machine, static_config
from benchmarks.timing import Row, median_seconds
from memorymanager.node.simulated_node import FixedHintProvider, SimulatedNode
from topologymanager.hint import TopologyHint


def _all_mask_hints(nodes: int) -> list[TopologyHint]:
    return [TopologyHint(m, m.bit_count() == 1) for m in range(1, 1 << nodes)]


def run_b3(repeats: int) -> list[Row]:
    """Median time of one admission (admit + container creation), then the pod is removed."""
    node = SimulatedNode(numa_machine(8), static_config("restricted"), None)
    node.start()
    pod = guaranteed_pod("b3", memory="4Gi", hugepages_2mi="64Mi")
    extra = FixedHintProvider(containers={"app": {"cpu": _all_mask_hints(8), "example.com/gpu": _all_mask_hints(8)}})

    def admit_and_time() -> float:
        start = time.perf_counter()
        outcome = node.admit(pod, extra)
        elapsed = time.perf_counter() - start
        assert outcome.admit, outcome
        node.remove(pod)
        return elapsed

    samples = sorted(admit_and_time() for _ in range(max(5, repeats)))
    median = samples[len(samples) // 2]
    return [Row("B3", "admit 1 pod, 8 NUMA, cpu+memory+hugepages+device hints", "", median * 1e3, "ms")]


def run_b4(pods: int) -> list[Row]:
    """Operations per second (an admit or a remove is one operation), checkpoint off and on."""
    rows = []
    for label, with_file in (("checkpoint off", False), ("checkpoint on", True)):
        with tempfile.TemporaryDirectory() as folder:
            node = SimulatedNode(numa_machine(8), static_config("restricted"), folder if with_file else None)
            node.start()
            elapsed = churn_seconds(node, [guaranteed_pod(f"pod-{i}", memory="1Gi") for i in range(pods)])
        rows.append(Row("B4", f"churn {pods:,} pods, 8 NUMA", label, 2 * pods / elapsed, "ops/s"))
    return rows
