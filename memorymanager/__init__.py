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
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Where each public name lives. They are loaded on first use, so that the command line
# (which imports this package) does not pay for the managers before it needs them.
_EXPORTS = {
    "Admission": "memorymanager.node.api",
    "Block": "state.types",
    "BoundedWorkError": "topologymanager.errors",
    "Error": "kubeinputs.errors",
    "InputError": "kubeinputs.errors",
    "KubeletStartError": "memorymanager.node.simulated_node",
    "LargestFit": "memorymanager.node.whatif",
    "MemoryTable": "state.types",
    "Node": "memorymanager.node.api",
    "NodeHeadroom": "memorymanager.node.whatif",
    "NodeError": "memorymanager.node.simulated_node",
    "NUMANodeState": "state.types",
    "Placement": "memorymanager.node.api",
    "TopologyHint": "topologymanager.hint",
    "synthetic_machine": "kubeinputs.synthetic_machine",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from kubeinputs.errors import Error, InputError
    from kubeinputs.synthetic_machine import synthetic_machine
    from memorymanager.node.api import Admission, Node, Placement
    from memorymanager.node.simulated_node import KubeletStartError, NodeError
    from memorymanager.node.whatif import LargestFit, NodeHeadroom
    from state.types import Block, MemoryTable, NUMANodeState
    from topologymanager.hint import TopologyHint


def __getattr__(name: str) -> object:
    """Load a public name from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memorymanager' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
