"""B8: one admission on 16 to 64 NUMA nodes (issue 14, kubernetes#135541), before and after.

Three shapes, each at 16, 24, 34, 48 and 64 NUMA nodes, restricted or best-effort, memory and
2Mi hugepages requested, CPU- and device-shaped hint lists injected:

* gb200: nodes 0 and 1 with CPUs (128Gi, 2Gi of pages), the others memory-only (24Gi, no
  pages); cpu [{0}, {1} preferred, {0,1}], device [{0} preferred, all nodes]: admitted on {0};
* pair: identical 16Gi nodes, the pod needs two (20Gi); cpu [each node preferred, all nodes],
  device [nil]: no preferred combination (widths differ), best-effort takes {0,1}, the
  non-preferred path;
* busy: the pair machine after a single-node pod on node 0 and a pair on {1,2}: {3,4}.

"after" is the production code; "before" is today's enumerating code (the family paths switched
off), run in a child process capped in time and address space (benchmarks/capped.py), so it
reports "did not finish" or MemoryError instead of hanging the benchmark. Peak memory is
tracemalloc's peak of Python allocations during the admission (after; before: the child's).
"""
from __future__ import annotations

import time
import tracemalloc
from typing import Optional

from benchmarks.machines import GiB, guaranteed_pod, static_config
from benchmarks.capped import before_note, run_capped
from benchmarks.timing import Row, size_text
from kubeinputs.machine import HugePagesInfo, MachineInfo, Node
from memorymanager.node.simulated_node import FixedHintProvider, SimulatedNode
from topologymanager.hint import TopologyHint

SIZES = (16, 24, 34, 48, 64)
SHAPES = ("gb200", "pair", "busy")


def _machine(shape: str, n: int) -> MachineInfo:
    topology = []
    for i in range(n):
        distances = [10 if i == j else 20 for j in range(n)]
        if shape == "gb200":
            cpu = i < 2
            memory = 128 * GiB if cpu else 24 * GiB
            pages = [HugePagesInfo(page_size=2048, num_pages=1024 if cpu else 0)]
        else:
            memory, pages = 16 * GiB, [HugePagesInfo(page_size=2048, num_pages=512)]
        topology.append(Node(node_id=i, memory=memory, hugepages=pages, distances=distances))
    return MachineInfo(num_cores=n, memory_capacity=sum(t.memory for t in topology), topology=topology)


def _case(shape: str, n: int):
    """(node, pod, extra provider, expected affinity mask) for one shape and size."""
    all_nodes = (1 << n) - 1
    policy = "restricted" if shape == "gb200" else "best-effort"
    node = SimulatedNode(_machine(shape, n), static_config(policy, max_numa=max(n, 9)), None)
    node.start()
    if shape == "gb200":
        pod = guaranteed_pod("b8", memory="16Gi", hugepages_2mi="1Gi")
        hints = {"cpu": [TopologyHint(1, True), TopologyHint(2, True), TopologyHint(3, False)],
                 "example.com/gpu": [TopologyHint(1, True), TopologyHint(all_nodes, False)]}
        return node, pod, FixedHintProvider(containers={"app": hints}), 0b1
    if shape == "busy":
        assert node.admit(guaranteed_pod("single", memory="10Gi")).admit
        assert node.admit(guaranteed_pod("group", memory="20Gi", hugepages_2mi="1536Mi")).admit
    pod = guaranteed_pod("b8", memory="20Gi", hugepages_2mi="1536Mi")
    cpu = [TopologyHint(1 << i, True) for i in range(n)] + [TopologyHint(all_nodes, False)]
    hints = {"cpu": cpu, "example.com/gpu": [TopologyHint(None, True)]}
    return node, pod, FixedHintProvider(containers={"app": hints}), (0b11 if shape == "pair" else 0b11000)


def _admit_once(shape: str, n: int, trace: bool) -> tuple[float, int]:
    """(seconds, peak bytes or 0) of one admission of the case's pod."""
    node, pod, extra, expected = _case(shape, n)
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    outcome = node.admit(pod, extra)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    assert outcome.admit, outcome
    affinity = node.topology_manager.get_affinity(pod.uid, "app").numa_node_affinity
    assert affinity == expected, (shape, n, affinity)
    return elapsed, peak


def _before(shape: str, n: int) -> float:
    """One admission with today's enumerating paths (run in the capped child only)."""
    import memorymanager.hints as hints_module
    import topologymanager.fast_merge as fast_merge_module

    hints_module.FAMILY_MIN_NODES = 65
    fast_merge_module.FAST_MERGE_MAX_NODES = 65
    return _admit_once(shape, n, trace=False)[0]


def run_before(shape: str, n: int) -> tuple[str, float]:
    """Today's code in a capped child: ("ok", seconds), ("did not finish", cap) or (error, 0)."""
    return run_capped(_before, shape, n)


def run_b8(repeats: int, with_before: bool = True, sizes=SIZES) -> list[Row]:
    """B8 rows: per shape and size, after (median ms, peak MB) and before (ms or why not)."""
    rows = []
    for shape in SHAPES:
        for n in sizes:
            times = sorted(_admit_once(shape, n, trace=False)[0] for _ in range(max(1, repeats)))
            _, peak = _admit_once(shape, n, trace=True)
            median = times[len(times) // 2]
            before = before_note(*run_before(shape, n)) if with_before else ""
            rows.append(Row("B8", f"admit 1 pod, {shape}, {n} NUMA", "after", median * 1e3, "ms",
                            f"peak {size_text(peak)}; {before}".rstrip("; ")))
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    import argparse

    from benchmarks.timing import print_table

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-before", action="store_true", help="skip today's enumerating code")
    args = parser.parse_args(argv)
    print_table(run_b8(args.repeats, not args.no_before))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
