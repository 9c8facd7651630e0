"""The device manager's fixed names and values (kubelet's types.go and manager.go constants)."""
from __future__ import annotations

# The folder under kubelet's root that holds the device plugins' sockets and the checkpoint
# (/var/lib/kubelet/device-plugins), and the checkpoint's file name in it.
CHECKPOINT_DIR = "device-plugins"
CHECKPOINT_FILE_NAME = "kubelet_internal_checkpoint"

# The NUMA "node" under which a device without topology is recorded (DevicesPerNUMA key -1).
NODE_WITHOUT_TOPOLOGY = -1
