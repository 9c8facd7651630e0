"""The kubelet CPU manager (pkg/kubelet/cm/cpumanager): exclusive CPUs for Guaranteed pods.

Layer 2: it reads `kubeinputs` (machine info, pods, QoS, gates, cpusets) and the topology
manager's types, never the node or its tools. `cpumanager.manager.new_manager` builds it.
"""
