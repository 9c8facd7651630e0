"""Scenario files for the start-up and loading benchmarks (B9, B10), generated rather than committed.

    python -m benchmarks.scenarios DIR     # writes DIR/hints-4x255.yaml and DIR/trivial.yaml

`hints_scenario` injects `lists` resources of every NUMA mask as hints (255 per resource on
8 nodes, single-node masks preferred, as an idle CPU or device manager answers), so reading
it means reading about 4 x 255 hint maps; `trivial_scenario` is the smallest useful file
(the same node and policies, one NUMA node, one pod).
"""
from __future__ import annotations

import os
import sys

from kubeinputs.reader import dump_yaml

GiB = 1 << 30
INJECTED_RESOURCES = ("cpu", "example.com/gpu", "example.com/nic", "example.com/fpga")


def _machine(nodes: int) -> dict:
    """cadvisor MachineInfo of `nodes` NUMA nodes of 16Gi, two CPUs each."""
    return {
        "num_cores": 2 * nodes,
        "memory_capacity": nodes * 16 * GiB,
        "topology": [
            {"node_id": n, "memory": 16 * GiB, "distances": [10 if m == n else 20 for m in range(nodes)],
             "cores": [{"core_id": n, "thread_ids": [2 * n, 2 * n + 1], "socket_id": n}]}
            for n in range(nodes)
        ],
    }


def _pod(name: str) -> dict:
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


def _static_kubelet() -> dict:
    """Static memory manager, best-effort topology manager, the default 100Mi reservation on node 0."""
    return {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def hints_scenario(lists: int = 4, nodes: int = 8) -> dict:
    """A Static node of `nodes` NUMA nodes admitting one pod with `lists` x (2^nodes - 1) injected hints."""
    hints = [{"numaAffinity": [n for n in range(nodes) if mask >> n & 1], "preferred": mask.bit_count() == 1}
             for mask in range(1, 1 << nodes)]
    return {
        "name": f"{lists} injected resources x {len(hints)} hints",
        "machine": _machine(nodes),
        "kubelet": _static_kubelet(),
        "steps": [{
            "admit": _pod("big"),
            "providers": {"containers": {"app": {res: [dict(h) for h in hints] for res in INJECTED_RESOURCES[:lists]}}},
            "expect": {"admitted": True, "affinity": {"app": {"numaAffinity": [0], "preferred": True}}},
        }],
    }


def trivial_scenario() -> dict:
    """One NUMA node, the Static policy, one admission."""
    return {"name": "trivial", "machine": _machine(1), "kubelet": _static_kubelet(),
            "steps": [{"admit": _pod("p"), "expect": {"admitted": True, "numaNodes": {"app": [0]}}}]}


def write(folder: str) -> dict[str, str]:
    """Write both scenarios as YAML into `folder`; returns {"hints": path, "trivial": path}."""
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for key, doc in (("hints", hints_scenario()), ("trivial", trivial_scenario())):
        path = os.path.join(folder, "hints-4x255.yaml" if key == "hints" else "trivial.yaml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(dump_yaml(doc))
        paths[key] = path
    return paths


if __name__ == "__main__":
    for p in write(sys.argv[1] if len(sys.argv) > 1 else ".").values():
        print(p)
