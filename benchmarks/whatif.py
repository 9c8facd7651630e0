"""B16: what explain --what-if and --start cost (issue 25). Each what-if answer is an admission on an
in-memory copy of the node (or a restart from a copy of its state); the figures are the whole searches
for one refused pod, on 2 and 8 NUMA nodes each holding one single-node pod per node; and the CPU what-ifs
and a start on a damaged cpu_manager_state on a dual-socket machine.

Not a test: nothing here asserts a time.
"""
from __future__ import annotations

from pathlib import Path

import memorymanager
from benchmarks.timing import Row, median_seconds
from kubeinputs.kubelet_config import parse_kubelet_config
from kubeinputs.pod import parse_pod
from memorymanager.node import whatif, whatif_cpu
from memorymanager.node.start_diagnosis import ManagerCheckpoints, diagnose_start

GI = 1 << 30
MACHINES = Path(__file__).resolve().parents[1] / "fixtures" / "machines"


def _pod(name: str, memory: str) -> dict:
    """A Guaranteed one-container pod."""
    return {"metadata": {"name": name}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "1", "memory": memory}}}]}}


def _full_node(numa_nodes: int) -> memorymanager.Node:
    """A node of 16Gi NUMA nodes, each holding one 10Gi pod (single-numa-node): a 12Gi pod fits nowhere."""
    node = memorymanager.Node(memorymanager.synthetic_machine(numa_nodes, 16 * GI), {
        "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]})
    for i in range(numa_nodes):
        node.admit(_pod(f"p{i}", "10Gi"))
    return node


def run(repeats: int) -> list[Row]:
    """B16 rows: removals, other settings, the largest request, the start diagnosis."""
    rows = []
    for numa_nodes in (2, 8):
        node = _full_node(numa_nodes)
        sim, pod = node.simulated_node, parse_pod(_pod("big", "12Gi"))
        case = f"refused 12Gi pod, {numa_nodes} NUMA nodes x 1 pod"
        search = whatif.removals_that_admit(sim, pod)
        rows.append(Row("B16", case, "removals", median_seconds(lambda: whatif.removals_that_admit(sim, pod), repeats)
                        * 1000, "ms", f"{search.checks} admissions checked"))
        tries = whatif.other_settings(sim, pod)
        rows.append(Row("B16", case, "other settings", median_seconds(lambda: whatif.other_settings(sim, pod), repeats)
                        * 1000, "ms", f"{len(tries)} restarts"))
        fit, checks = whatif.largest_admissible(sim, pod)
        rows.append(Row("B16", case, "largest request", median_seconds(lambda: whatif.largest_admissible(sim, pod),
                                                                       repeats) * 1000, "ms",
                        f"{checks} admissions checked"))
        config = parse_kubelet_config({"reservedMemory": []}, "bench", base=node.kubelet)
        rows.append(Row("B16", f"start, {numa_nodes} NUMA nodes", "reservedMemory missing",
                        median_seconds(lambda: diagnose_start(node.machine, config), repeats) * 1000, "ms",
                        "2 simulated starts"))
    return rows + _cpu_rows(repeats)


def _cpu_rows(repeats: int) -> list[Row]:
    """B16 CPU rows on the bundled dual-socket HT machine (32 CPUs): a 5-CPU pod refused by single-numa-node with
    12 CPUs held on each NUMA node; the CPU what-ifs and a start on a CPU checkpoint naming CPUs it lacks."""
    static = {"cpuManagerPolicy": "static", "systemReserved": {"cpu": "1"}, "topologyManagerPolicy": "single-numa-node"}
    node = memorymanager.Node(str(MACHINES / "cpu-2s-ht.json"), static)
    for name in ("a", "b"):
        node.admit({"metadata": {"name": name}, "spec": {"containers": [
            {"name": "app", "resources": {"limits": {"cpu": "12", "memory": "1Gi"}}}]}})
    sim = node.simulated_node
    pod = parse_pod({"metadata": {"name": "c"}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "5", "memory": "1Gi"}}}]}})
    case = "refused 5-CPU pod, 2 NUMA nodes x 12 CPUs held"
    fit, checks, _ = whatif_cpu.largest_cpu_request(sim, pod, "app")
    rows = [Row("B16", case, "largest CPU request", median_seconds(
        lambda: whatif_cpu.largest_cpu_request(sim, pod, "app"), repeats) * 1000, "ms", f"{checks} admissions checked")]
    search = whatif.removals_that_admit(sim, pod)
    rows.append(Row("B16", case, "removals", median_seconds(lambda: whatif.removals_that_admit(sim, pod), repeats)
                    * 1000, "ms", f"{search.checks} admissions checked"))
    lacking = ManagerCheckpoints(cpu=b'{"policyName": "static", "defaultCpuSet": "0-63", "entries": {}, '
                                     b'"checksum": 0}')
    rows.append(Row("B16", "start, a damaged cpu_manager_state", "CPU side and fixes", median_seconds(
        lambda: diagnose_start(node.machine, node.kubelet, None, others=lacking), repeats) * 1000, "ms",
        "a few simulated starts"))
    return rows


if __name__ == "__main__":
    from benchmarks.timing import print_table

    print_table(run(5))
