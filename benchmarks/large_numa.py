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
off), run in a child process capped at BEFORE_SECONDS and BEFORE_BYTES of address space, so it
reports "did not finish" or MemoryError instead of hanging the benchmark. Peak memory is
tracemalloc's peak of Python allocations during the admission (after; before: the child's).
"""
from __future__ import annotations

import multiprocessing
import resource
import time
import tracemalloc
from typing import Optional

from benchmarks.machines import GiB, guaranteed_pod, static_config
from benchmarks.timing import Row
from kubeinputs.machine import HugePagesInfo, MachineInfo, Node
from memorymanager.node.simulated_node import FixedHintProvider, SimulatedNode
from topologymanager.hint import TopologyHint

SIZES = (16, 24, 34, 48, 64)
SHAPES = ("gb200", "pair", "busy")
BEFORE_SECONDS = 30.0
BEFORE_BYTES = 3 << 30


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


def _before_child(shape: str, n: int, out) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (BEFORE_BYTES, BEFORE_BYTES))
    import memorymanager.hints as hints_module
    import topologymanager.fast_merge as fast_merge_module

    hints_module.FAMILY_MIN_NODES = 65  # today's enumerating paths
    fast_merge_module.FAST_MERGE_MAX_NODES = 65
    try:
        elapsed, _ = _admit_once(shape, n, trace=False)
        out.send(("ok", elapsed))
    except MemoryError:
        out.send(("MemoryError", 0.0))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        out.send((type(exc).__name__, 0.0))


def run_before(shape: str, n: int) -> tuple[str, float]:
    """Today's code in a capped child: ("ok", seconds), ("did not finish", cap) or (error, 0)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_before_child, args=(shape, n, child))
    proc.start()
    if parent.poll(BEFORE_SECONDS):
        status, seconds = parent.recv()
    else:
        status, seconds = "did not finish", BEFORE_SECONDS
    proc.kill()
    proc.join()
    return status, seconds


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB"


def run_b8(repeats: int, with_before: bool = True, sizes=SIZES) -> list[Row]:
    """B8 rows: per shape and size, after (median ms, peak MB) and before (ms or why not)."""
    rows = []
    for shape in SHAPES:
        for n in sizes:
            times = sorted(_admit_once(shape, n, trace=False)[0] for _ in range(max(1, repeats)))
            _, peak = _admit_once(shape, n, trace=True)
            median = times[len(times) // 2]
            before_note = ""
            if with_before:
                status, seconds = run_before(shape, n)
                before_note = (f"before: {seconds * 1e3:,.0f} ms" if status == "ok"
                               else f"before: {status} (cap {BEFORE_SECONDS:.0f} s, {BEFORE_BYTES >> 30} GiB)")
            rows.append(Row("B8", f"admit 1 pod, {shape}, {n} NUMA", "after", median * 1e3, "ms",
                            f"peak {_size(peak)}; {before_note}".rstrip("; ")))
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
