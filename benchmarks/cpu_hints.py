"""B13: the CPU manager's NUMA hints on GB200-shaped and 64-node machines (issue 21).

Cases, each the static policy's hints for one Guaranteed container through `Manager.get_topology_hints`
(stale-state check included), on a machine discovered from a cadvisor MachineInfo:

* gb200: 34 or 64 NUMA nodes, CPUs on nodes 0 and 1 only (2 x 72 single-thread Grace cores), the other
  nodes memory-only: kubelet walks the masks of the 2 NUMA nodes with CPUs (3 hints);
* gb200, busy: the same after 100 CPUs went to another container (node 1 is full: 2 hints);
* 64 cpu nodes: 64 NUMA nodes of 4 CPUs each (2 sockets): the answer is a hint family (17+
  NUMA nodes with CPUs) describing 2^64 - 1 masks without listing them.

Peak memory is tracemalloc's peak of Python allocations during one hints call.
"""
from __future__ import annotations

import time
import tracemalloc

from benchmarks.timing import Row, size_text
from kubeinputs.cpuset import CPUSet
from kubeinputs.features import FeatureGates
from kubeinputs.machine import MachineInfo, parse_machine_info
from kubeinputs.pod import Container, Pod, ResourceRequirements
from kubeinputs.quantity import parse_quantity
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from cpumanager.manager import Manager, new_manager

TARGET_SECONDS = 0.010
TARGET_BYTES = 5 << 20


class _NoAffinity:
    """A topology manager store that has no hint for anyone (the policy `none` answer)."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return TopologyHint()

    def get_policy(self):
        return self

    def name(self) -> str:
        return "none"


def gb200_machine(nodes: int = 64, cores_per_cpu_node: int = 72) -> MachineInfo:
    """`nodes` NUMA nodes; nodes 0 and 1 each hold one socket of single-thread cores, the rest none."""
    topology = []
    for node in range(nodes):
        cores = []
        if node < 2:
            base = node * cores_per_cpu_node
            cores = [{"core_id": c, "thread_ids": [base + c], "socket_id": node,
                      "uncore_caches": [{"id": node, "size": 114 << 20, "type": "Unified", "level": 3}]}
                     for c in range(cores_per_cpu_node)]
        topology.append({"node_id": node, "memory": (480 if node < 2 else 24) << 30, "cores": cores})
    return parse_machine_info({"num_cores": 2 * cores_per_cpu_node, "num_sockets": 2, "topology": topology})


def cpu_nodes_machine(nodes: int = 64, cpus_per_node: int = 4) -> MachineInfo:
    """`nodes` NUMA nodes with `cpus_per_node` single-thread cores each, half the nodes per socket."""
    topology = []
    for node in range(nodes):
        socket = node * 2 // nodes
        cores = [{"core_id": c, "thread_ids": [node * cpus_per_node + c], "socket_id": socket}
                 for c in range(cpus_per_node)]
        topology.append({"node_id": node, "memory": 16 << 30, "cores": cores})
    return parse_machine_info({"num_cores": nodes * cpus_per_node, "num_sockets": 2, "topology": topology})


def _pod(name: str, cpus: int) -> Pod:
    limits = {"cpu": parse_quantity(str(cpus)), "memory": parse_quantity("1Gi")}
    resources = ResourceRequirements(requests=dict(limits), limits=dict(limits))
    return Pod(name=name, uid=name, containers=[Container(name="app", resources=resources)])


def _manager(machine: MachineInfo, busy: int = 0) -> tuple[Manager, list[Pod]]:
    pods: list[Pod] = []
    manager = new_manager("static", {}, machine, CPUSet(), {"cpu": parse_quantity("2")}, None, _NoAffinity(),
                          FeatureGates())
    manager.start(lambda: pods)
    if busy:
        filler = _pod("filler", busy)
        pods.append(filler)
        manager.allocate(filler, filler.containers[0])
    return manager, pods


CASES = {
    "gb200, 34 NUMA (CPUs on 2), 8 CPUs": (lambda: _manager(gb200_machine(34)), 8, 3),
    "gb200, 64 NUMA (CPUs on 2), 8 CPUs": (lambda: _manager(gb200_machine()), 8, 3),
    "gb200 busy (100 CPUs taken), 64 NUMA (CPUs on 2), 40 CPUs": (lambda: _manager(gb200_machine(), busy=100), 40, 2),
    "64 NUMA of 4 CPUs, 6 CPUs": (lambda: _manager(cpu_nodes_machine()), 6, None),
}


def _hints_once(case: str, trace: bool) -> tuple[float, int, object]:
    build, cpus, _ = CASES[case]
    manager, pods = build()
    pod = _pod("b13", cpus)
    pods.append(pod)
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    hints = manager.get_topology_hints(pod, pod.containers[0])["cpu"]
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    return elapsed, peak, hints


def _check(case: str, hints: object) -> str:
    """What the answer is, checked against the case's expectation."""
    expected = CASES[case][2]
    if expected is None:
        assert isinstance(hints, HintFamily), type(hints)
        return f"hint family, best {hints.best_hint()}"
    assert isinstance(hints, list) and len(hints) == expected, hints
    return f"{len(hints)} hints"


def run(repeats: int) -> list[Row]:
    """B13 rows: median ms of the hints call and its peak memory, per case."""
    rows = []
    for case in CASES:
        times = sorted(_hints_once(case, trace=False)[0] for _ in range(max(1, repeats)))
        _, peak, hints = _hints_once(case, trace=True)
        answer = _check(case, hints)
        median = times[len(times) // 2]
        verdict = "ok" if median < TARGET_SECONDS and peak < TARGET_BYTES else "MISSES TARGET"
        rows.append(Row("B13", f"CPU hints, {case}", "static", median * 1e3, "ms",
                        f"peak {size_text(peak, 2)}; {answer}; {verdict}"))
    return rows


if __name__ == "__main__":
    from benchmarks.timing import print_table

    print_table(run(15))
