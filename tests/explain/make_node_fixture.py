"""Writes fixtures/nodes/two-nodes/var/lib/kubelet/memory_manager_state (see fixtures/nodes/README.md)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from memorymanager.node.api import Node
from tests.explain.helpers import ROOT

NODE = ROOT / "fixtures" / "nodes" / "two-nodes"
DB = {"metadata": {"name": "db", "uid": "7d2c1d52-0000-4000-8000-000000000001"},
      "spec": {"containers": [{"name": "postgres", "resources": {"limits": {"cpu": "4", "memory": "4Gi"}}}]}}


def main() -> None:
    state_dir = tempfile.mkdtemp()
    try:
        node = Node.from_host(str(NODE / "var" / "lib" / "kubelet" / "config.yaml"), sysfs_root=NODE / "sys",
                              state_dir=state_dir)
        assert node.admit(DB).placements["postgres"].numa_nodes == (0,)
        shutil.copyfile(Path(state_dir) / "memory_manager_state", NODE / "var" / "lib" / "kubelet" / "memory_manager_state")
    finally:
        shutil.rmtree(state_dir)


if __name__ == "__main__":
    main()
