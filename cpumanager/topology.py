"""CPU topology (kubelet's cpumanager/topology): which socket, NUMA node, core and uncore cache each CPU is in.

`discover` builds a `CPUTopology` from cadvisor MachineInfo as kubelet's `topology.Discover` does:

* a CPU is a logical CPU (a cadvisor thread id); its core id is the lowest thread id of its
  cadvisor core, so core ids are unique on the machine (cadvisor's `core_id` is only unique
  within a package);
* its NUMA node is the cadvisor node listing it, its socket the core's `socket_id`;
* its uncore cache (L3) is the id of the core's first `uncore_caches` entry, or, when cadvisor
  reports none, the socket id (the whole package then counts as one cache);
* `num_cpus` is MachineInfo's `num_cores`, `num_sockets` its `num_sockets`, `num_cores` the number
  of cadvisor cores; NUMA nodes and uncore caches are counted over the CPUs found.

Per-CPU facts are kept in `cpu_details`; every set question ("the CPUs of sockets 0 and 1 still
free") is answered by `CPUDetails`, a view of some of the CPUs, with int bitmasks.

>>> from kubeinputs.machine import MachineInfo, Node
>>> mi = MachineInfo(num_cores=4, topology=[Node(0, cores=[
...     {"core_id": 0, "thread_ids": [0, 2], "socket_id": 0},
...     {"core_id": 1, "thread_ids": [1, 3], "socket_id": 0}])])
>>> topo = discover(mi)
>>> topo.cpus_per_core(), topo.cpu_details[2], str(topo.details().cpus_in_cores(0))
(2, CPUInfo(numa_node_id=0, socket_id=0, core_id=0, uncore_cache_id=0), '0,2')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.machine import Core, MachineInfo, machine_num_sockets, node_cores

from cpumanager.alignment import Alignment
from cpumanager.errors import CPUManagerError


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """The NUMA node, socket, core and uncore cache of one logical CPU."""

    numa_node_id: int
    socket_id: int
    core_id: int
    uncore_cache_id: int


_ZERO_INFO = CPUInfo(0, 0, 0, 0)  # Go's zero CPUInfo, what kubelet reads for an unknown CPU


def _masks(cpu_details: dict[int, CPUInfo], attr: str) -> dict[int, int]:
    """id -> bitmask of the CPUs whose `attr` is that id, ids ascending."""
    masks: dict[int, int] = {}
    for cpu, info in cpu_details.items():
        key = getattr(info, attr)
        masks[key] = masks.get(key, 0) | (1 << cpu)
    return dict(sorted(masks.items()))


def _ids(masks: dict[int, int], mask: int) -> list[int]:
    """The ids (ascending) whose CPUs meet `mask`."""
    return [key for key, m in masks.items() if m & mask]


def _union(masks: dict[int, int], ids: Iterable[int]) -> int:
    """The CPUs of the given ids (unknown ids have none)."""
    total = 0
    for key in ids:
        total |= masks.get(key, 0)
    return total


class CPUTopology:
    """kubelet's topology.CPUTopology: the counts and the per-CPU details, with id -> CPU bitmask indexes."""

    __slots__ = ("num_cpus", "num_cores", "num_uncore_cache", "num_sockets", "num_numa_nodes", "cpu_details",
                 "all_mask", "numa_masks", "socket_masks", "core_masks", "uncore_masks", "smallest")

    def __init__(self, num_cpus: int, num_cores: int, num_sockets: int, cpu_details: dict[int, CPUInfo],
                 num_numa_nodes: Optional[int] = None, num_uncore_cache: Optional[int] = None):
        """A topology with these counts; NUMA nodes and uncore caches are counted over the CPUs unless given."""
        self.num_cpus = num_cpus
        self.num_cores = num_cores
        self.num_sockets = num_sockets
        self.cpu_details = dict(sorted(cpu_details.items()))
        self.all_mask = 0
        for cpu in self.cpu_details:
            self.all_mask |= 1 << cpu
        self.numa_masks = _masks(self.cpu_details, "numa_node_id")
        self.socket_masks = _masks(self.cpu_details, "socket_id")
        self.core_masks = _masks(self.cpu_details, "core_id")
        self.uncore_masks = _masks(self.cpu_details, "uncore_cache_id")
        self.num_numa_nodes = len(self.numa_masks) if num_numa_nodes is None else num_numa_nodes
        self.num_uncore_cache = len(self.uncore_masks) if num_uncore_cache is None else num_uncore_cache
        # the CPUs of the smallest NUMA node, socket, core and uncore cache: a need below it takes none whole
        self.smallest = {name: min((m.bit_count() for m in masks.values()), default=0)
                         for name, masks in (("numa", self.numa_masks), ("socket", self.socket_masks),
                                             ("core", self.core_masks), ("uncore", self.uncore_masks))}

    # ----- counts (kubelet divides totals, assuming a symmetric machine) ---------------------------

    def cpus_per_core(self) -> int:
        """CPUsPerCore: num_cpus / num_cores (0 without cores)."""
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        """CPUsPerSocket: num_cpus / num_sockets (0 without sockets)."""
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_per_uncore(self) -> int:
        """CPUsPerUncore: num_cpus / num_uncore_cache (0 without uncore caches)."""
        return self.num_cpus // self.num_uncore_cache if self.num_uncore_cache else 0

    # ----- per-CPU look-ups ------------------------------------------------------------------------

    def info(self, cpu: int) -> CPUInfo:
        """CPUDetails[cpu]: the CPU's info, Go's zero value (all ids 0) for a CPU the machine lacks."""
        return self.cpu_details.get(cpu, _ZERO_INFO)

    def cpu_core_id(self, cpu: int) -> int:
        """CPUCoreID: the core of a CPU; CPUManagerError `unknown CPU ID: N` for a CPU the machine lacks."""
        info = self.cpu_details.get(cpu)
        if info is None:
            raise CPUManagerError(f"unknown CPU ID: {cpu}")
        return info.core_id

    def cpu_socket_id(self, cpu: int) -> int:
        """CPUSocketID: the socket of a CPU (same error as cpu_core_id)."""
        info = self.cpu_details.get(cpu)
        if info is None:
            raise CPUManagerError(f"unknown CPU ID: {cpu}")
        return info.socket_id

    def cpu_numa_node_id(self, cpu: int) -> int:
        """CPUNUMANodeID: the NUMA node of a CPU (same error as cpu_core_id)."""
        info = self.cpu_details.get(cpu)
        if info is None:
            raise CPUManagerError(f"unknown CPU ID: {cpu}")
        return info.numa_node_id

    def details(self, cpus: Optional[CPUSet] = None) -> "CPUDetails":
        """All CPUs (topo.CPUDetails), or the view of `cpus` kept (CPUDetails.KeepOnly)."""
        return CPUDetails(self, self.all_mask if cpus is None else cpus.mask & self.all_mask)

    def check_alignment(self, cpus: CPUSet) -> Alignment:
        """CheckAlignment: whether the CPUs share one uncore cache (metrics only)."""
        return Alignment(uncore_cache=is_aligned_at_uncore_cache(self, cpus.list()))

    def __repr__(self) -> str:
        return (f"CPUTopology(num_cpus={self.num_cpus}, num_cores={self.num_cores}, num_sockets={self.num_sockets}, "
                f"num_numa_nodes={self.num_numa_nodes}, num_uncore_cache={self.num_uncore_cache})")


class CPUDetails:
    """kubelet's CPUDetails restricted to some CPUs: the set questions, answered with bitmasks.

    Lists of ids (NUMA nodes, sockets, cores, caches) come out ascending, as kubelet's
    `cpuset.List()` gives them; CPU sets come out as `CPUSet`.
    """

    __slots__ = ("topo", "mask")

    def __init__(self, topo: CPUTopology, mask: int):
        """The CPUs of `mask` (all of them CPUs of `topo`)."""
        self.topo = topo
        self.mask = mask

    def keep_only(self, cpus: CPUSet) -> "CPUDetails":
        """KeepOnly: these CPUs only."""
        return CPUDetails(self.topo, self.mask & cpus.mask)

    def __getitem__(self, cpu: int) -> CPUInfo:
        """The info of a CPU of this view (KeyError otherwise)."""
        if not (self.mask >> cpu) & 1:
            raise KeyError(cpu)
        return self.topo.cpu_details[cpu]

    def __len__(self) -> int:
        return self.mask.bit_count()

    def cpus(self) -> CPUSet:
        """CPUs."""
        return CPUSet(self.mask)

    def numa_nodes(self) -> list[int]:
        """NUMANodes: the NUMA nodes of these CPUs."""
        return _ids(self.topo.numa_masks, self.mask)

    def sockets(self) -> list[int]:
        """Sockets."""
        return _ids(self.topo.socket_masks, self.mask)

    def cores(self) -> list[int]:
        """Cores."""
        return _ids(self.topo.core_masks, self.mask)

    def uncore_caches(self) -> list[int]:
        """UncoreCaches."""
        return _ids(self.topo.uncore_masks, self.mask)

    def cpus_in_numa_nodes(self, *ids: int) -> CPUSet:
        """CPUsInNUMANodes."""
        return CPUSet(self.mask & _union(self.topo.numa_masks, ids))

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        """CPUsInSockets."""
        return CPUSet(self.mask & _union(self.topo.socket_masks, ids))

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        """CPUsInCores."""
        return CPUSet(self.mask & _union(self.topo.core_masks, ids))

    def cpus_in_uncore_caches(self, *ids: int) -> CPUSet:
        """CPUsInUncoreCaches."""
        return CPUSet(self.mask & _union(self.topo.uncore_masks, ids))

    def numa_nodes_in_sockets(self, *ids: int) -> list[int]:
        """NUMANodesInSockets."""
        return _ids(self.topo.numa_masks, self.mask & _union(self.topo.socket_masks, ids))

    def sockets_in_numa_nodes(self, *ids: int) -> list[int]:
        """SocketsInNUMANodes."""
        return _ids(self.topo.socket_masks, self.mask & _union(self.topo.numa_masks, ids))

    def cores_in_numa_nodes(self, *ids: int) -> list[int]:
        """CoresInNUMANodes."""
        return _ids(self.topo.core_masks, self.mask & _union(self.topo.numa_masks, ids))

    def cores_in_sockets(self, *ids: int) -> list[int]:
        """CoresInSockets."""
        return _ids(self.topo.core_masks, self.mask & _union(self.topo.socket_masks, ids))

    def uncore_in_numa_nodes(self, *ids: int) -> list[int]:
        """UncoreInNUMANodes."""
        return _ids(self.topo.uncore_masks, self.mask & _union(self.topo.numa_masks, ids))

    def cores_needed_in_uncore_cache(self, num_cores_needed: int, *ids: int) -> list[int]:
        """CoresNeededInUncoreCache: the lowest `num_cores_needed` cores with CPUs in these caches
        (all of them when there are no more)."""
        cores = _ids(self.topo.core_masks, self.mask & _union(self.topo.uncore_masks, ids))
        return cores if len(cores) <= num_cores_needed else cores[:max(num_cores_needed, 0)]


def get_unique_core_id(threads: tuple[int, ...]) -> int:
    """getUniqueCoreID: the lowest thread id; kubelet's errors for no threads or repeated threads."""
    if not threads:
        raise CPUManagerError("no cpus provided")
    if len(set(threads)) != len(threads):
        raise CPUManagerError("cpus provided are not unique")
    return min(threads)


def get_uncore_cache_id(core: Core) -> int:
    """getUncoreCacheID: the first uncore cache's id, else the socket id (no shared L3 reported)."""
    if not core.uncore_caches:
        return core.socket_id
    return core.uncore_caches[0].id


def discover(machine: MachineInfo) -> CPUTopology:
    """topology.Discover: the CPU topology of a cadvisor MachineInfo (kubelet's errors as CPUManagerError)."""
    if machine.num_cores == 0:
        raise CPUManagerError("could not detect number of cpus")
    cpu_details: dict[int, CPUInfo] = {}
    num_physical_cores = 0
    for node in machine.topology:
        cores = node_cores(node)
        num_physical_cores += len(cores)
        for core in cores:
            core_id = get_unique_core_id(core.thread_ids)
            uncore = get_uncore_cache_id(core)
            for cpu in core.thread_ids:
                cpu_details[cpu] = CPUInfo(numa_node_id=node.node_id, socket_id=core.socket_id, core_id=core_id,
                                           uncore_cache_id=uncore)
    return CPUTopology(num_cpus=machine.num_cores, num_cores=num_physical_cores,
                       num_sockets=machine_num_sockets(machine), cpu_details=cpu_details)


def is_aligned_at_uncore_cache(topo: CPUTopology, cpu_list: list[int]) -> bool:
    """Every CPU is known and in the uncore cache of the first one (zero or one CPU: aligned)."""
    if len(cpu_list) <= 1:
        return True
    reference = topo.cpu_details.get(cpu_list[0])
    if reference is None:
        return False
    for cpu in cpu_list[1:]:
        info = topo.cpu_details.get(cpu)
        if info is None or info.uncore_cache_id != reference.uncore_cache_id:
            return False
    return True
