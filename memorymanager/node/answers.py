"""Kubelet's answer to an admission as the public API gives it: `Admission` and each container's
`Placement`, read from a simulated node right after the admission."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from kubeinputs.cpuset import cpuset_string
from kubeinputs.pod import Pod
from memorymanager.node.simulated_node import AdmitOutcome, SimulatedNode


@dataclass(frozen=True)
class Placement:
    """Where kubelet put one container.

    `numa_nodes` is the topology manager's stored affinity (empty when the hint has none),
    `preferred` its preferred flag, `memory` the bytes the memory manager assigned per
    resource (`memory`, `hugepages-2Mi`, ...; empty when it assigned nothing) and
    `cpuset_mems` the `cpuset.mems` kubelet would set ("" when it sets none).
    """

    numa_nodes: tuple[int, ...]
    preferred: bool
    memory: Mapping[str, int] = field(default_factory=dict)
    cpuset_mems: str = ""


@dataclass(frozen=True)
class Admission:
    """kubelet's answer to one pod: admitted or not, with its reason and message, and where
    each container landed (by container name; empty when refused)."""

    admitted: bool
    reason: str = ""
    message: str = ""
    placements: Mapping[str, Placement] = field(default_factory=dict)


def admission_of(node: SimulatedNode, pod: Pod, outcome: AdmitOutcome) -> Admission:
    """kubelet's answer to an admission on `node`, with each container's placement when admitted."""
    placements = placements_of(node, pod) if outcome.admit else {}
    return Admission(outcome.admit, outcome.reason, outcome.message, placements)


def placements_of(node: SimulatedNode, pod: Pod) -> dict[str, Placement]:
    """Each container's stored affinity, assigned memory and cpuset.mems after admission."""
    placements: dict[str, Placement] = {}
    for container in pod.all_containers():
        hint = node.topology_manager.get_affinity(pod.uid, container.name)
        memory: dict[str, int] = {}
        for block in node.memory_manager.get_memory(pod.uid, container.name) or []:
            memory[block.type] = memory.get(block.type, 0) + block.size
        mems = node.memory_manager.get_memory_numa_nodes(pod, container)
        placements[container.name] = Placement(
            numa_nodes=tuple(hint.nodes() or ()),
            preferred=hint.preferred,
            memory=memory,
            cpuset_mems=cpuset_string(mems or ()),
        )
    return placements
