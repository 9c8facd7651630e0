"""B12, B13, B14 and B4 with the CPU manager: whole admissions on the simulated node with all three
of kubelet's hint providers wired in (device manager, CPU manager, memory manager), in process.

* B12: hints (`SimulatedNode.topology_hints`) + one admission of a pod asking 4 CPUs, 4Gi and one
  GPU on 8 NUMA nodes of 16 cores x 2 threads (256 CPUs), a GPU on every node; static CPU manager,
  Static memory manager, restricted. The pod is removed (and the managers' stale state dropped)
  between rounds, outside the timing.
* B13: one admission with CPU and memory hints on the GB200 shape: 64 NUMA nodes, CPUs on nodes 0 and
  1 only (72 single-thread Grace cores each), the other 62 memory-only; restricted with
  max-allowable-numa-nodes 64. Peak memory is tracemalloc's peak of Python allocations during the
  admission.
* B14: one admission with CPU, memory and 8 GPUs on the same 64-node machine, the GPUs on NUMA nodes
  0, 8, ..., 56 (kubelet v1.37 walks the 2^8 - 1 masks of those nodes, kubernetes#138244); best-effort.
* B4, CPU manager on: churn of admissions and removals of 1-CPU Guaranteed pods (8 NUMA, 256 CPUs),
  the state in memory only (checkpoint off), at most 16 pods live.

"before" (B13, B14) is kubelet's enumerating walk: the memory manager's and the device manager's mask
loops and the topology manager's cross product over every mask (the hint-family paths switched off),
run in a child process capped in time and address space (benchmarks/capped.py), which reports
"did not finish" instead of hanging the benchmark (as B8 does).

    python -m benchmarks.wired [--repeats N] [--no-before]
"""
from __future__ import annotations

import time
import tracemalloc
from typing import Any, Callable, Optional

from benchmarks.capped import before_note, run_capped
from benchmarks.churn import churn_seconds
from benchmarks.timing import Row, size_text
from kubeinputs.devices import Device
from kubeinputs.kubelet_config import KubeletConfig, parse_kubelet_config
from kubeinputs.machine import MachineInfo, parse_machine_info
from kubeinputs.pod import Pod, parse_pod
from kubeinputs.synthetic_machine import synthetic_machine
from memorymanager.node.simulated_node import SimulatedNode

GPU = "nvidia.com/gpu"
TARGETS = {"B12": 1e-3, "B13": 10e-3, "B14": 10e-3}


def _config(policy: str, max_numa: int = 8, cpu_reserved: str = "1") -> KubeletConfig:
    fields: dict[str, Any] = {
        "cpuManagerPolicy": "static", "systemReserved": {"cpu": cpu_reserved}, "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}], "topologyManagerPolicy": policy}
    if max_numa > 8:
        fields["topologyManagerPolicyOptions"] = {"max-allowable-numa-nodes": str(max_numa)}
    return parse_kubelet_config(fields)


def _pod(name: str, cpu: int, memory: str, gpus: int = 0) -> Pod:
    limits: dict[str, str] = {"cpu": str(cpu), "memory": memory}
    if gpus:
        limits[GPU] = str(gpus)
    return parse_pod({"metadata": {"name": name}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": limits}}]}})


def gb200_machine(nodes: int = 64, cores: int = 72) -> MachineInfo:
    """`nodes` NUMA nodes; nodes 0 and 1 hold a Grace socket of `cores` single-thread cores and 480Gi, the
    others 24Gi of memory and no CPU."""
    topology = []
    for node in range(nodes):
        node_cores = [{"core_id": c, "thread_ids": [node * cores + c], "socket_id": node}
                      for c in range(cores)] if node < 2 else None
        topology.append({"node_id": node, "memory": (480 if node < 2 else 24) << 30, "cores": node_cores,
                         "distances": [10 if node == other else 20 for other in range(nodes)]})
    return parse_machine_info({"num_cores": 2 * cores, "num_sockets": 2,
                               "memory_capacity": sum(t["memory"] for t in topology), "topology": topology})


def b12_node() -> tuple[SimulatedNode, Pod]:
    machine = synthetic_machine(8, 64 << 30, cores_per_node=16, threads_per_core=2)
    devices = {GPU: [Device(f"gpu{i}", (i,)) for i in range(8)]}
    node = SimulatedNode(machine, _config("restricted"), None, devices=devices)
    node.start()
    return node, _pod("b12", 4, "4Gi", gpus=1)


def b13_node() -> tuple[SimulatedNode, Pod]:
    node = SimulatedNode(gb200_machine(), _config("restricted", max_numa=64), None)
    node.start()
    return node, _pod("b13", 8, "16Gi")


def b14_node() -> tuple[SimulatedNode, Pod]:
    devices = {GPU: [Device(f"gpu{i}", (8 * i,)) for i in range(8)]}
    node = SimulatedNode(gb200_machine(), _config("best-effort", max_numa=64), None, devices=devices)
    node.start()
    return node, _pod("b14", 8, "16Gi", gpus=8)


CASES: dict[str, Callable[[], tuple[SimulatedNode, Pod]]] = {"B12": b12_node, "B13": b13_node, "B14": b14_node}


def _one(bench: str, node: SimulatedNode, pod: Pod) -> float:
    """Seconds of the bench's timed work, then the pod removed and stale state dropped (untimed)."""
    start = time.perf_counter()
    if bench == "B12":
        node.topology_hints(pod)
    outcome = node.admit(pod)
    elapsed = time.perf_counter() - start
    assert outcome.admit, outcome
    node.remove(pod)
    node.remove_stale_state()
    return elapsed


def _peak(bench: str) -> int:
    """tracemalloc's peak of Python allocations during one round on a fresh node."""
    node, pod = CASES[bench]()
    tracemalloc.start()
    try:
        _one(bench, node, pod)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _before(bench: str) -> float:
    """One round with kubelet's enumerating loops and cross product (run in the capped child only)."""
    import devicemanager.hint_family as device_family
    import memorymanager.hints as memory_hints
    import topologymanager.fast_merge as fast_merge

    memory_hints.FAMILY_MIN_NODES = 65
    device_family.FAMILY_MIN_NODES = 65
    fast_merge.FAST_MERGE_MAX_NODES = 65
    node, pod = CASES[bench]()
    return _one(bench, node, pod)


def run_before(bench: str) -> tuple[str, float]:
    """The enumerating code in a capped child: ("ok", seconds), ("did not finish", cap) or (error, 0)."""
    return run_capped(_before, bench)


TITLES = {
    "B12": "hints + admit, cpu 4 + 4Gi + 1 GPU, 8 NUMA, 256 CPUs",
    "B13": "admit, cpu 8 + 16Gi, GB200 shape, 64 NUMA (CPUs on 2)",
    "B14": "admit, cpu 8 + 16Gi + 8 GPUs, 64 NUMA (GPUs on 8)",
}


def run(repeats: int, with_before: bool = True) -> list[Row]:
    """B12, B13, B14 rows (median ms with peak memory and, for B13 and B14, the enumerating "before")."""
    rows = []
    for bench, build in CASES.items():
        node, pod = build()
        times = sorted(_one(bench, node, pod) for _ in range(max(3, repeats)))
        median = times[len(times) // 2]
        note = f"target < {TARGETS[bench] * 1e3:.0f} ms; peak {size_text(_peak(bench))}"
        if with_before and bench != "B12":
            note += "; " + before_note(*run_before(bench))
        rows.append(Row(bench, TITLES[bench], "in process", median * 1e3, "ms", note))
    return rows


def run_b4_cpu(pods: int) -> list[Row]:
    """B4 with the static CPU manager on (and the Static memory manager), checkpoint off: admissions and
    removals per second."""
    machine = synthetic_machine(8, 64 << 30, cores_per_node=16, threads_per_core=2)
    node = SimulatedNode(machine, _config("restricted"), None)
    node.start()
    elapsed = churn_seconds(node, [_pod(f"pod-{i}", 1, "1Gi") for i in range(pods)])
    return [Row("B4", f"churn {pods:,} pods, 8 NUMA, 256 CPUs", "CPU manager static, checkpoint off",
                2 * pods / elapsed, "ops/s", "target >= 5,000 ops/s")]


def main(argv: Optional[list[str]] = None) -> int:
    import argparse

    from benchmarks.timing import print_table

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--churn", type=int, default=10_000)
    parser.add_argument("--no-before", action="store_true", help="skip the enumerating code")
    args = parser.parse_args(argv)
    print_table(run(args.repeats, not args.no_before) + run_b4_cpu(args.churn))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
