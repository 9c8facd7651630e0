"""B14, device part: the device manager's hints and allocation on a 64-NUMA-node machine (issue 22).

Cases (8 GPUs unless said otherwise, one container asking for k GPUs):

* spread: one GPU on each of NUMA nodes 0, 8, ..., 56 of a 64-node machine (kubelet v1.37 walks
  the 2^8 - 1 masks of those nodes, #138244; before 1.36 it walked 2^64 - 1);
* gb200: 36 NUMA nodes, the GPUs on the two CPU nodes (4 each): 3 masks;
* family: 32 GPUs, one on each even node of 64: |D| = 32, the hints are a hint family (no list);
* admission: the spread machine under the topology manager (restricted, container scope, the
  device manager its only provider): hints + merge + Allocate of a 2-GPU pod, then removal.

Target: device hints well under a few ms. The whole admission with CPU, memory and 8 GPUs on the
simulated node (target < 10 ms) is benchmarks/wired.py's B14.

    python -m benchmarks.devices [--repeats N]
"""
from __future__ import annotations

import argparse
import sys

from benchmarks.timing import Row, median_seconds
from devicemanager.manager import new_manager
from kubeinputs.devices import Device
from kubeinputs.pod import parse_pod
from kubeinputs.synthetic_machine import synthetic_machine
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.manager import new_manager as new_topology_manager

GPU = "nvidia.com/gpu"


class _NoAffinity:
    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return TopologyHint()


def _pod(uid: str, gpus: int):
    return parse_pod({"metadata": {"name": uid}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {GPU: str(gpus), "cpu": "1", "memory": "1Gi"}}}]}})


def _devices(shape: str) -> tuple[int, list[Device]]:
    if shape == "spread":
        return 64, [Device(f"gpu{i}", (8 * i,)) for i in range(8)]
    if shape == "gb200":
        return 36, [Device(f"gpu{i}", (i // 4,)) for i in range(8)]
    return 64, [Device(f"gpu{i}", (2 * i,)) for i in range(32)]


def _hints_row(shape: str, gpus: int, repeats: int) -> Row:
    nodes, devices = _devices(shape)
    pods: list = []
    manager = new_manager(list(range(nodes)), _NoAffinity(), None, {GPU: devices})
    manager.start(lambda: pods)
    p = _pod("p", gpus)
    pods.append(p)
    hints = manager.get_topology_hints(p, p.containers[0])[GPU]
    size = "family" if isinstance(hints, HintFamily) else f"{len(hints)} hints"
    seconds = median_seconds(lambda: manager.get_topology_hints(p, p.containers[0]), repeats, inner=20)
    return Row("B14", f"{shape}, {nodes} nodes, {len(devices)} GPUs", f"hints, {gpus} GPU", seconds * 1e3, "ms", size)


def _admission_row(repeats: int) -> Row:
    nodes, devices = _devices("spread")
    machine = synthetic_machine(nodes, 8 << 30)
    tm = new_topology_manager(machine.topology, "restricted", "container", {"max-allowable-numa-nodes": str(nodes)})
    pods: list = []
    dm = new_manager(machine, tm, None, {GPU: devices})
    dm.start(lambda: pods)
    tm.add_hint_provider(dm)
    counter = [0]

    def one() -> None:
        counter[0] += 1
        p = _pod(f"p{counter[0]}", 2)
        pods.append(p)
        if not tm.admit(p).admit:
            raise RuntimeError("the benchmark pod was refused")
        pods.remove(p)
        dm.update_allocated_devices()

    seconds = median_seconds(one, repeats, inner=10)
    return Row("B14", f"spread, {nodes} nodes, 8 GPUs", "admission (hints, merge, allocate)", seconds * 1e3, "ms",
               "restricted, device manager only")


def run(repeats: int = 15) -> list[Row]:
    """The B14 device rows."""
    rows = [_hints_row("spread", k, repeats) for k in (1, 2, 4, 8)]
    rows += [_hints_row("gb200", k, repeats) for k in (1, 4, 8)]
    rows += [_hints_row("family", k, repeats) for k in (1, 8)]
    rows.append(_admission_row(repeats))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15, help="runs per median (default 15)")
    args = parser.parse_args(argv)
    from benchmarks.timing import machine_line, print_table

    print(machine_line())
    print_table(run(args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
