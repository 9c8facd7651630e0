"""memorymanager: the kubelet's memory manager and topology manager, in Python, with
kubelet's answers (v1.37) down to hint order, error text and checkpoint bytes.

The front door is `Node`: a simulated kubelet node built from a machine and a kubelet
configuration. Ask it what kubelet would do with a pod:

>>> import memorymanager
>>> node = memorymanager.Node(
...     memorymanager.synthetic_machine(2, 4 << 30),
...     {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
...      "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
... )
>>> pod = {"metadata": {"name": "web"},
...        "spec": {"containers": [{"name": "app",
...                                 "resources": {"limits": {"cpu": "2", "memory": "5Gi"}}}]}}
>>> answer = node.would_admit(pod)          # the node is not changed
>>> answer.admitted, answer.reason
(False, 'TopologyAffinityError')
>>> small = {"metadata": {"name": "small"},
...          "spec": {"containers": [{"name": "app",
...                                   "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
>>> placed = node.admit(small).placements["app"]
>>> placed.numa_nodes, placed.cpuset_mems, placed.memory
((0,), '0', {'memory': 1073741824})
>>> node.free()[0]["memory"] == (4 << 30) - (100 << 20) - (1 << 30)
True

Layers, each a folder: `kubeinputs` (Kubernetes and Go inputs), the kubelet managers
(`topologymanager`, `state`, and this package's modules such as `manager`, `policy_static`),
and on top `memorymanager.node` (the simulated node and this API), `memorymanager.runner`
(scenario files) and `memorymanager.cli` (the command). See docs/api.md and
docs/architecture.md.
"""
from kubeinputs.errors import InputError
from kubeinputs.synthetic_machine import synthetic_machine
from memorymanager.node.api import Admission, Node, Placement
from memorymanager.node.simulated_node import KubeletStartError, NodeError
from state.types import Block, MemoryTable, NUMANodeState
from topologymanager.hint import TopologyHint

__all__ = [
    "Admission",
    "Block",
    "InputError",
    "KubeletStartError",
    "MemoryTable",
    "Node",
    "NodeError",
    "NUMANodeState",
    "Placement",
    "TopologyHint",
    "synthetic_machine",
]
