"""The kubelet topology manager (pkg/kubelet/cm/topologymanager), in Python.

It collects NUMA topology hints from hint providers (CPU, memory, device managers),
merges them according to a policy and a scope, and admits or rejects pods.
It knows nothing of memory: providers are anything that implements `HintProvider`.
"""
