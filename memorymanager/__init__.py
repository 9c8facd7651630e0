"""The kubelet memory manager (pkg/kubelet/cm/memorymanager), in Python: the Manager,
the None and Static policies, machine info, pods and quantities, and the scenario
runner behind the `memorymanager` command."""
