"""The memory manager's state (pkg/kubelet/cm/memorymanager/state): types, the in-memory
store, and the kubelet-compatible checkpoint file. Knows nothing of policies."""
