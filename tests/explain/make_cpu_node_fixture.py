"""Writes the checkpoints of fixtures/nodes/two-nodes-cpu (see fixtures/nodes/README.md)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from memorymanager.node.api import Node
from tests.explain.helpers import ROOT

NODE = ROOT / "fixtures" / "nodes" / "two-nodes-cpu"
DEVICES = {"example.com/gpu": [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [1]}]}
# shared-pool CPUs (not an integral request), 4Gi of memory: the memory lands on node 0
DB = {"metadata": {"name": "db", "uid": "7d2c1d52-0000-4000-8000-000000000001"},
      "spec": {"containers": [{"name": "postgres", "resources": {"limits": {"cpu": "500m", "memory": "4Gi"}}}]}}
# 2 CPUs, 4Gi and a GPU: node 0 has too little free memory left, so all three land on node 1
BATCH = {"metadata": {"name": "batch", "uid": "7d2c1d52-0000-4000-8000-000000000002"},
         "spec": {"containers": [{"name": "job", "resources": {"limits": {"cpu": "2", "memory": "4Gi",
                                                                         "example.com/gpu": "1"}}}]}}


def main() -> None:
    state_dir = tempfile.mkdtemp()
    kubelet = NODE / "var" / "lib" / "kubelet"
    try:
        node = Node.from_host(str(kubelet / "config.yaml"), sysfs_root=NODE / "sys", state_dir=state_dir,
                              devices=DEVICES)
        assert node.admit(DB).placements["postgres"].numa_nodes == (0,)
        placed = node.admit(BATCH).placements["job"]
        assert placed.numa_nodes == (1,) and placed.cpus == (2, 6), placed
        for name in ("memory_manager_state", "cpu_manager_state", "device-plugins/kubelet_internal_checkpoint"):
            (kubelet / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(state_dir) / name, kubelet / name)
    finally:
        shutil.rmtree(state_dir)


if __name__ == "__main__":
    main()
