"""Scenario files for the start-up and loading benchmarks (B9, B10), generated rather than committed.

    python -m benchmarks.scenarios DIR     # writes DIR/hints-4x255.yaml, DIR/hints-4x255-block.yaml, DIR/trivial.yaml

`hints_scenario` injects `lists` resources of every NUMA mask as hints (255 per resource on
8 nodes, single-node masks preferred, as an idle CPU or device manager answers), so reading
it means reading about 4 x 255 hint maps. It is written twice: as `--record` writes YAML (a
hint on one line, `{numaAffinity: [0], preferred: true}`) and in block style throughout (every
key and list item on a line of its own, as PyYAML's default dumper and many people write it:
about 3,200 lines). `trivial_scenario` is the smallest useful file (the same node and
policies, one NUMA node, one pod).
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


def _no_aliases_dumper() -> type:
    """PyYAML's safe dumper writing shared values out again (no `&id001` anchors)."""
    import yaml

    class NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data: object) -> bool:
            return True

    return NoAliases


def write(folder: str) -> dict[str, str]:
    """Write the scenarios as YAML into `folder`; returns {"hints": path, "hints_block": path, "trivial": path}."""
    import yaml

    _NoAliases = _no_aliases_dumper()
    os.makedirs(folder, exist_ok=True)
    files = {
        "hints": ("hints-4x255.yaml", dump_yaml(hints_scenario())),
        "hints_block": ("hints-4x255-block.yaml", yaml.dump(hints_scenario(), Dumper=_NoAliases,
                                                            default_flow_style=False, sort_keys=False)),
        "trivial": ("trivial.yaml", dump_yaml(trivial_scenario())),
    }
    paths = {}
    for key, (name, text) in files.items():
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        paths[key] = path
    return paths


if __name__ == "__main__":
    for p in write(sys.argv[1] if len(sys.argv) > 1 else ".").values():
        print(p)
