"""Pods, stores and states for the CPU manager tests."""
from __future__ import annotations

from typing import Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.machine import MachineInfo, parse_machine_info
from kubeinputs.pod import Pod, parse_pod
from topologymanager.hint import TopologyHint

from cpumanager.state.state_mem import MemoryState


def make_pod(uid: str, container: str, request: str, limit: str, memory: str = "1G") -> Pod:
    """One container with these cpu request/limit (and equal memory): upstream's makePod."""
    return parse_pod({"metadata": {"name": uid.lower(), "uid": uid}, "spec": {"containers": [{
        "name": container,
        "resources": {"requests": {"cpu": request, "memory": memory}, "limits": {"cpu": limit, "memory": memory}}}]}})


def guaranteed(cpu: str, memory: str = "1G") -> dict:
    """A Guaranteed container's resources."""
    return {"limits": {"cpu": cpu, "memory": memory}}


def pod_of(uid: str, containers: list[tuple[str, str]], init: Optional[list[tuple[str, str, bool]]] = None,
           pod_resources: Optional[dict] = None) -> Pod:
    """A pod of Guaranteed containers (name, cpu); init containers (name, cpu, sidecar)."""
    spec: dict = {"containers": [{"name": n, "resources": guaranteed(c)} for n, c in containers]}
    if init:
        spec["initContainers"] = [{"name": n, "resources": guaranteed(c), **({"restartPolicy": "Always"} if s else {})}
                                  for n, c, s in init]
    if pod_resources is not None:
        spec["resources"] = pod_resources
    return parse_pod({"metadata": {"name": uid.lower(), "uid": uid}, "spec": spec})


class FakeStore:
    """The topology manager's store: a fixed hint for every container, and a policy name."""

    def __init__(self, hint: Optional[TopologyHint] = None, policy: str = "none"):
        self.hint = hint or TopologyHint()
        self.policy = policy
        self.hints: dict[tuple[str, str], TopologyHint] = {}

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hints.get((pod_uid, container_name), self.hint)

    def get_policy(self) -> "FakeStore":
        return self

    @property
    def name(self) -> str:
        return self.policy


def state_with(default: str, assignments: Optional[dict[str, dict[str, str]]] = None) -> MemoryState:
    """A memory state with this shared pool and these assignments (cpuset strings)."""
    state = MemoryState()
    state.set_default_cpu_set(CPUSet.parse(default))
    state.set_cpu_assignments({p: {c: CPUSet.parse(s) for c, s in cs.items()}
                               for p, cs in (assignments or {}).items()})
    return state


def cadvisor_core(core_id: int, threads: list[int], socket: int, uncore: Optional[int] = None) -> dict:
    """A cadvisor core; `uncore` the id of its L3 (None: cadvisor reports none)."""
    caches = None if uncore is None else [{"id": uncore, "size": 32 << 20, "type": "Unified", "level": 3}]
    return {"core_id": core_id, "thread_ids": threads, "socket_id": socket, "caches": None, "uncore_caches": caches}


def cadvisor_machine(nodes: dict[int, list[dict]], num_cores: Optional[int] = None,
                     num_sockets: Optional[int] = None, memory: int = 8 << 30) -> MachineInfo:
    """A cadvisor MachineInfo of these NUMA nodes (node id -> cores)."""
    doc: dict = {"topology": [{"node_id": n, "memory": memory, "cores": cores} for n, cores in nodes.items()],
                 "memory_capacity": memory * len(nodes)}
    if num_cores is not None:
        doc["num_cores"] = num_cores
    if num_sockets is not None:
        doc["num_sockets"] = num_sockets
    return parse_machine_info(doc)


def dual_socket_ht_machine() -> MachineInfo:
    """The machine of topologies.dual_socket_ht: 12 CPUs, NUMA node = socket = CPU parity, core n = CPUs n, n+6."""
    return cadvisor_machine({s: [cadvisor_core(c, [c, c + 6], s) for c in range(6) if c % 2 == s] for s in (0, 1)},
                            12, 2)
