"""The CPU manager's state (pkg/kubelet/cm/cpumanager/state): assignments, the shared pool, the
checkpoint file `cpu_manager_state`. Knows nothing of policies."""

# The checkpoint file's name inside kubelet's state folder (/var/lib/kubelet), the one place it is spelt.
CHECKPOINT_FILE_NAME = "cpu_manager_state"
