"""Kubelet's answer to an admission as the public API gives it: `Admission` and each container's
`Placement`, read from a simulated node right after the admission."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from cpumanager.policy_static import StaticPolicy

from kubeinputs.cpuset import cpuset_string
from kubeinputs.pod import Pod
from memorymanager.node.simulated_node import AdmitOutcome, SimulatedNode


_OMIT_NONE = {"omit_none": True}


@dataclass(frozen=True)
class Placement:
    """Where kubelet put one container.

    `numa_nodes` is the topology manager's stored affinity (empty when the hint has none),
    `preferred` its preferred flag, `memory` the bytes the memory manager assigned per
    resource (`memory`, `hugepages-2Mi`, ...; empty when it assigned nothing) and
    `cpuset_mems` the `cpuset.mems` kubelet would set ("" when it sets none). `cpus` are the
    CPU manager's exclusive CPUs (empty for a container in the shared pool), `cpuset_cpus` the
    `cpuset.cpus` kubelet would set (the exclusive CPUs, else the shared pool; "" when it sets
    none, as under the CPU manager's `none` policy) and `devices` the device IDs the device
    manager allocated, by resource (empty when none).
    """

    numa_nodes: tuple[int, ...]
    preferred: bool
    memory: Mapping[str, int] = field(default_factory=dict)
    cpuset_mems: str = ""
    cpus: tuple[int, ...] = ()
    cpuset_cpus: str = ""
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # where those CPUs and devices are (None while there are none): not compared, not in repr, and left out of
    # explain's JSON while None (its `omit_none` convention)
    cpu_numa_nodes: Optional[tuple[int, ...]] = field(default=None, compare=False, metadata=_OMIT_NONE)
    device_numa_nodes: Optional[Mapping[str, tuple[int, ...]]] = field(default=None, compare=False,
                                                                      metadata=_OMIT_NONE)

    def __repr__(self) -> str:
        """The fields, leaving out the CPU and device fields while they are empty (a node whose CPU manager
        pins nothing and that has no device plugin prints as the memory manager's placement)."""
        parts = [f"numa_nodes={self.numa_nodes!r}", f"preferred={self.preferred!r}", f"memory={self.memory!r}",
                 f"cpuset_mems={self.cpuset_mems!r}"]
        parts += [f"{name}={getattr(self, name)!r}" for name in ("cpus", "cpuset_cpus", "devices") if getattr(self, name)]
        return f"Placement({', '.join(parts)})"


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
    """Each container's stored affinity, assigned memory and cpuset.mems, CPUs and cpuset.cpus, and devices
    after admission."""
    placements: dict[str, Placement] = {}
    for container in pod.all_containers():
        hint = node.topology_manager.get_affinity(pod.uid, container.name)
        memory: dict[str, int] = {}
        for block in node.memory_manager.get_memory(pod.uid, container.name) or []:
            memory[block.type] = memory.get(block.type, 0) + block.size
        mems = node.memory_manager.get_memory_numa_nodes(pod, container)
        exclusive = node.cpu_manager.get_cpus(pod.uid, container.name)
        devices = node.device_manager.get_devices(pod.uid, container.name) or {}
        cpus = tuple(exclusive) if exclusive is not None else ()
        placements[container.name] = Placement(
            numa_nodes=tuple(hint.nodes() or ()),
            preferred=hint.preferred,
            memory=memory,
            cpuset_mems=cpuset_string(mems or ()),
            cpus=tuple(exclusive) if exclusive is not None else (),
            cpuset_cpus=str(node.cpu_manager.get_cpu_affinity(pod.uid, container.name)),
            devices={resource: tuple(sorted(ids)) for resource, ids in devices.items()},
            cpu_numa_nodes=_cpu_numa_nodes(node, cpus),
            device_numa_nodes={resource: tuple(sorted({n for nodes in per.values() for n in nodes or ()}))
                               for resource, per in devices.items()} if devices else None,
        )
    return placements


def _cpu_numa_nodes(node: SimulatedNode, cpus: tuple[int, ...]) -> Optional[tuple[int, ...]]:
    """The NUMA nodes of a container's exclusive CPUs (None when it has none)."""
    policy = node.cpu_manager.policy
    if not cpus or not isinstance(policy, StaticPolicy):
        return None
    return tuple(sorted({policy.topology.cpu_numa_node_id(cpu) for cpu in cpus}))
