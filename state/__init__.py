"""The memory manager's state (pkg/kubelet/cm/memorymanager/state): types, the in-memory
store, and the kubelet-compatible checkpoint file. Knows nothing of policies."""

# The checkpoint file's name inside kubelet's state folder (/var/lib/kubelet), the one place it is spelt.
CHECKPOINT_FILE_NAME = "memory_manager_state"
