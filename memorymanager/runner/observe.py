"""What a step reports: the node's state in the shapes of the scenario's `expect` keys."""
from __future__ import annotations

from typing import Any, Optional

from topologymanager.errors import BoundedWorkError
from topologymanager.hint_family import HintFamily
from topologymanager.hint_provider import ProviderHints

from memorymanager.node.render import (
    assignments_to_obj,
    blocks_to_obj,
    hint_to_obj,
    machine_state_to_obj,
    pod_assignments_to_obj,
)
from memorymanager.node.simulated_node import SimulatedNode
from kubeinputs.pod import Pod


def hints_to_obj(hints: ProviderHints) -> Optional[dict]:
    """A provider's hint map as `{RESOURCE: [HINT, ...] | null}` (None stays null)."""
    if hints is None:
        return None
    return {res: (None if lst is None else _hint_list_to_obj(lst)) for res, lst in hints.items()}


# A hint family (17+ NUMA nodes) with at most this many hints is observed as its list.
HINTS_LIST_LIMIT = 64


def _hint_list_to_obj(hints) -> Any:
    """A hint list as `[HINT, ...]`; a large hint family as `{count, preferredWidth, best, numaNodes}`
    (count null when counting it would take too long)."""
    if not isinstance(hints, HintFamily):
        return [hint_to_obj(h) for h in hints]
    listed = hints.as_list(HINTS_LIST_LIMIT)
    if listed is not None:
        return [hint_to_obj(h) for h in listed]
    try:
        count: Optional[int] = hints.count()
    except BoundedWorkError:
        count = None
    best = hints.best_hint()
    return {"count": count, "preferredWidth": hints.preferred_width,
            "best": None if best is None else hint_to_obj(best), "numaNodes": hints.nodes.bit_count()}


def hint_maps_to_obj(by_key: dict[str, ProviderHints]) -> dict:
    """`{CONTAINER or "pod": {RESOURCE: [HINT, ...]}}`."""
    return {key: hints_to_obj(h) for key, h in by_key.items()}


def state_observations(node: SimulatedNode) -> dict[str, Any]:
    """machineState, entries, podEntries (checkpoint shapes) and allocatable (GetAllocatableMemory)."""
    mm = node.memory_manager
    reader = mm.state()
    return {
        "machineState": machine_state_to_obj(reader.get_machine_state()),
        "entries": assignments_to_obj(reader.get_memory_assignments()),
        "podEntries": pod_assignments_to_obj(reader.get_pod_memory_assignments()),
        "allocatable": blocks_to_obj(list(mm.get_allocatable_memory() or [])),
    }


def cpu_state_observations(node: SimulatedNode) -> dict[str, Any]:
    """defaultCpuSet: the CPU manager's shared pool (the checkpoint's defaultCpuSet)."""
    return {"defaultCpuSet": str(node.cpu_manager.get_default_cpu_set())}


def cpu_observations(node: SimulatedNode, pod: Pod) -> dict[str, Any]:
    """cpus: each container's exclusive CPUs as a canonical cpuset string, "" for the shared pool."""
    cm = node.cpu_manager
    return {"cpus": {c.name: str(cm.get_cpus(pod.uid, c.name) or "") for c in pod.all_containers()}}


def device_observations(node: SimulatedNode, pod: Pod) -> dict[str, Any]:
    """devices: each container's device IDs by resource (null when it holds none)."""
    dm = node.device_manager
    devices: dict[str, Any] = {}
    for c in pod.all_containers():
        held = dm.get_devices(pod.uid, c.name)
        devices[c.name] = None if held is None else {resource: sorted(ids) for resource, ids in held.items()}
    return {"devices": devices}


def pod_observations(node: SimulatedNode, pod: Pod) -> dict[str, Any]:
    """affinity, memory and numaNodes for every container of `pod` (init, then app)."""
    mm, tm = node.memory_manager, node.topology_manager
    affinity, memory, numa_nodes = {}, {}, {}
    for c in pod.all_containers():
        affinity[c.name] = hint_to_obj(tm.get_affinity(pod.uid, c.name))
        blocks = mm.get_memory(pod.uid, c.name)
        memory[c.name] = None if blocks is None else blocks_to_obj(list(blocks))
        nodes = mm.get_memory_numa_nodes(pod, c)
        numa_nodes[c.name] = None if nodes is None else sorted(nodes)
    return {"affinity": affinity, "memory": memory, "numaNodes": numa_nodes}
