"""cadvisor MachineInfo: the node's NUMA topology, CPUs, memory and hugepages, as kubelet receives it.

`parse_machine_info` reads cadvisor's JSON (the field names cadvisor writes, `page_size` in KiB); every
cadvisor MachineInfo / Node / Core / Cache key is accepted, an unknown key is an InputError with a
suggestion, and the values the managers read are type-checked. Keys the managers do not read are kept
verbatim in `MachineInfo.extra` and written back by `machine_info_to_obj`.

The CPU manager reads the cores (`core_id`, `thread_ids`, `socket_id`, `uncore_caches`): `node_cores`
gives them typed (`Core`, `Cache`), with Go's zero values for keys cadvisor always writes but a
hand-written file may leave out (`socket_id` 0, `thread_ids` none). A logical CPU listed twice (in two
cores or twice in one core) is refused here: no cadvisor output holds one, and kubelet would silently
keep only its last core. `num_sockets` (cadvisor's count of physical packages) defaults to the number of
distinct `socket_id`s when the file leaves it out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from kubeinputs.cpuset import MAX_CPU_ID
from kubeinputs.errors import (InputError, check_keys, expect_int, expect_list, expect_map, expect_str, index_path,
                               join_path)
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.reader import parse_file
from kubeinputs.quantity import BINARY_SI, Quantity

if TYPE_CHECKING:  # only in annotations: pathlib is slow to import
    from pathlib import Path

UINT64_MAX = (1 << 64) - 1

# cadvisor info/v1 MachineInfo JSON keys, in the struct's field order.
MACHINE_INFO_KEYS = (
    "timestamp", "vendor_id", "num_cores", "num_physical_cores", "num_sockets", "num_books", "num_drawers",
    "cpu_frequency_khz", "memory_capacity", "swap_capacity", "memory_by_type", "nvm", "hugepages", "machine_id",
    "system_uuid", "boot_id", "filesystems", "disk_map", "network_devices", "topology", "cloud_provider",
    "instance_type", "instance_id",
)
NODE_KEYS = ("node_id", "memory", "hugepages", "cores", "caches", "distances")
CORE_KEYS = ("core_id", "thread_ids", "caches", "uncore_caches", "socket_id", "book_id", "drawer_id")
CACHE_KEYS = ("id", "size", "type", "level")
HUGEPAGES_KEYS = ("page_size", "num_pages")


@dataclass
class HugePagesInfo:
    """cadvisor `HugePagesInfo`: `page_size` in KiB (2048 = 2Mi), `num_pages` configured."""

    page_size: int
    num_pages: int


@dataclass(frozen=True)
class Cache:
    """cadvisor `Cache`: one cache of a core or node (`id` is the cache's id, e.g. the L3 index)."""

    id: int = 0
    size: int = 0
    type: str = ""
    level: int = 0


@dataclass(frozen=True)
class Core:
    """cadvisor `Core`: one physical core, its logical CPUs (`thread_ids`), package and caches."""

    core_id: int = 0
    thread_ids: tuple[int, ...] = ()
    socket_id: int = 0
    caches: tuple[Cache, ...] = ()
    uncore_caches: tuple[Cache, ...] = ()


@dataclass
class Node:
    """cadvisor `Node`: one NUMA node. `memory` in bytes; `distances` None when cadvisor had none."""

    node_id: int
    memory: int = 0
    hugepages: list[HugePagesInfo] = field(default_factory=list)
    distances: Optional[list[int]] = None
    cores: Optional[list[Any]] = None
    caches: Optional[list[Any]] = None


@dataclass
class MachineInfo:
    """cadvisor `MachineInfo`: only what the managers read, plus the rest kept verbatim in `extra`."""

    num_cores: int = 0
    memory_capacity: int = 0
    topology: list[Node] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def hugepage_resource_name(page_size_kib: int) -> str:
    """The kubelet resource name of a hugepage size given in KiB: 2048 -> "hugepages-2Mi"."""
    return "hugepages-" + str(Quantity.from_int(page_size_kib * 1024, BINARY_SI))


INT32_MAX = (1 << 31) - 1  # NUMA node ids are C ints in the kernel


def _uint(value: Any, where: str) -> int:
    """A non-negative integer that fits uint64 (cadvisor's uint64 fields)."""
    return expect_int(value, where, minimum=0, maximum=UINT64_MAX)


def _parse_hugepages(value: Any, where: str) -> list[HugePagesInfo]:
    """A hugepages list: [{page_size (KiB), num_pages}]."""
    result = []
    for i, item in enumerate(expect_list(value, where)):
        path = index_path(where, i)
        raw = expect_map(item, path, "a map ({page_size, num_pages})")
        check_keys(raw, path, HUGEPAGES_KEYS)
        for key in HUGEPAGES_KEYS:
            if key not in raw:
                raise InputError(join_path(path, key), "Required value")
        page_size = expect_int(raw["page_size"], join_path(path, "page_size"), minimum=1, maximum=UINT64_MAX // 1024)
        result.append(HugePagesInfo(page_size=page_size, num_pages=_uint(raw["num_pages"], join_path(path, "num_pages"))))
    return result


INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1  # Go's int on 64-bit kubelets
# Logical CPU ids a machine may list: Linux numbers CPUs below CONFIG_NR_CPUS (at most 8192 on x86,
# 16384 elsewhere); the cpuset module holds ids up to MAX_CPU_ID.
MAX_THREAD_ID = MAX_CPU_ID


def _parse_cache(value: Any, where: str) -> Cache:
    """One cache: `id`, `level` ints, `size` uint64, `type` a string (missing keys: Go's zero values)."""
    raw = expect_map(value, where, "a map (a cache)")
    check_keys(raw, where, CACHE_KEYS)
    cache_type = raw.get("type", "")
    if cache_type is None:
        cache_type = ""
    return Cache(
        id=expect_int(raw.get("id", 0), join_path(where, "id"), minimum=INT_MIN, maximum=INT_MAX),
        size=_uint(raw.get("size", 0), join_path(where, "size")),
        type=expect_str(cache_type, join_path(where, "type")),
        level=expect_int(raw.get("level", 0), join_path(where, "level"), minimum=INT_MIN, maximum=INT_MAX),
    )


def _parse_caches(value: Any, where: str) -> Optional[list[Any]]:
    """A caches list, checked and kept verbatim (None stays None)."""
    if value is None:
        return None
    caches = expect_list(value, where)
    for i, item in enumerate(caches):
        _parse_cache(item, index_path(where, i))
    return caches


def parse_core(value: Any, where: str) -> Core:
    """One core as a typed `Core` (checked strictly; missing keys take Go's zero values)."""
    raw = expect_map(value, where, "a map (a core)")
    check_keys(raw, where, CORE_KEYS)
    threads_path = join_path(where, "thread_ids")
    threads = tuple(expect_int(t, index_path(threads_path, j), minimum=0, maximum=MAX_THREAD_ID)
                    for j, t in enumerate(expect_list(raw.get("thread_ids"), threads_path)))
    for key in ("book_id", "drawer_id"):
        if raw.get(key) is not None:
            expect_str(raw[key], join_path(where, key))
    caches_path, uncore_path = join_path(where, "caches"), join_path(where, "uncore_caches")
    return Core(
        core_id=expect_int(raw.get("core_id", 0), join_path(where, "core_id"), minimum=INT_MIN, maximum=INT_MAX),
        thread_ids=threads,
        socket_id=expect_int(raw.get("socket_id", 0), join_path(where, "socket_id"), minimum=INT_MIN,
                             maximum=INT_MAX),
        caches=tuple(_parse_cache(c, index_path(caches_path, k))
                     for k, c in enumerate(expect_list(raw.get("caches"), caches_path))),
        uncore_caches=tuple(_parse_cache(c, index_path(uncore_path, k))
                            for k, c in enumerate(expect_list(raw.get("uncore_caches"), uncore_path))),
    )


def _parse_cores(value: Any, where: str) -> Optional[list[Any]]:
    """A cores list, checked strictly and kept verbatim (None stays None: a CPU-less node)."""
    if value is None:
        return None
    # a JSON null in the list decodes as Go's zero Core (as cadvisor's own JSON decoding does)
    cores = [{} if item is None else item for item in expect_list(value, where)]
    for i, item in enumerate(cores):
        parse_core(item, index_path(where, i))
    return cores


def node_cores(node: Node) -> list[Core]:
    """The node's cores, typed (empty for a CPU-less node). Cores built in code as dicts are read
    with the same rules as a file's."""
    return [c if isinstance(c, Core) else parse_core(c, f"topology[node {node.node_id}].cores[{i}]")
            for i, c in enumerate(node.cores or [])]


def machine_num_sockets(mi: MachineInfo) -> int:
    """cadvisor's `num_sockets`, or, when the file leaves it out, the distinct `socket_id`s of the cores."""
    value = mi.extra.get("num_sockets")
    if value is not None:
        return value
    return len({core.socket_id for node in mi.topology for core in node_cores(node)})


def _check_unique_threads(nodes: list[Node], topo_path: str) -> None:
    """A logical CPU may appear in one core only, once."""
    seen: dict[int, str] = {}
    for i, node in enumerate(nodes):
        for j, core in enumerate(node.cores or []):
            path = join_path(index_path(join_path(index_path(topo_path, i), "cores"), j), "thread_ids")
            for k, thread in enumerate(core.get("thread_ids") or []):
                where = index_path(path, k)
                if thread in seen:
                    raise InputError(where, f"logical CPU {thread} is listed twice (also {seen[thread]})")
                seen[thread] = where


def _parse_node(value: Any, where: str) -> Node:
    """One topology entry."""
    raw = expect_map(value, where, "a map (a NUMA node)")
    check_keys(raw, where, NODE_KEYS)
    if "node_id" not in raw:
        raise InputError(join_path(where, "node_id"), "Required value")
    node_id = expect_int(raw["node_id"], join_path(where, "node_id"), minimum=0, maximum=INT32_MAX)
    if "memory" not in raw:  # cadvisor always writes it (no omitempty); a node without it is not cadvisor's
        raise InputError(join_path(where, "memory"), "Required value")
    memory = _uint(raw["memory"], join_path(where, "memory"))
    distances = None
    if raw.get("distances") is not None:
        dist_path = join_path(where, "distances")
        distances = [_uint(d, index_path(dist_path, j)) for j, d in enumerate(expect_list(raw["distances"], dist_path))]
    return Node(
        node_id=node_id,
        memory=memory,
        hugepages=_parse_hugepages(raw.get("hugepages"), join_path(where, "hugepages")),
        distances=distances,
        cores=_parse_cores(raw.get("cores"), join_path(where, "cores")),
        caches=_parse_caches(raw.get("caches"), join_path(where, "caches")),
    )


def _thread_count(nodes: list[Node]) -> int:
    """Logical CPUs listed in the nodes' cores."""
    return sum(len(core.get("thread_ids") or []) for node in nodes for core in (node.cores or []))


def parse_machine_info(doc: Any, where: str = "") -> MachineInfo:
    """cadvisor MachineInfo JSON (decoded) as a MachineInfo; raises InputError naming the bad path.

    A missing `num_cores` defaults to the number of thread ids in the topology's cores, and a missing
    `memory_capacity` to the sum of the nodes' memory (cadvisor always writes both)."""
    raw = expect_map(doc, where, "a map (cadvisor MachineInfo JSON)")
    check_keys(raw, where, MACHINE_INFO_KEYS)
    topo_path = join_path(where, "topology")
    items = expect_list(raw.get("topology"), topo_path)
    nodes = [_parse_node(item, index_path(topo_path, i)) for i, item in enumerate(items)]
    seen: dict[int, int] = {}
    for i, node in enumerate(nodes):
        if node.node_id in seen:
            raise InputError(join_path(index_path(topo_path, i), "node_id"),
                             f"duplicate node_id {node.node_id} (also topology[{seen[node.node_id]}])")
        seen[node.node_id] = i
    _check_unique_threads(nodes, topo_path)
    if "hugepages" in raw:
        _parse_hugepages(raw["hugepages"], join_path(where, "hugepages"))
    for key in ("num_physical_cores", "num_sockets", "num_books", "num_drawers"):
        if raw.get(key) is not None:
            expect_int(raw[key], join_path(where, key), minimum=0, maximum=INT_MAX)
    num_cores = raw.get("num_cores")
    if num_cores is None:
        num_cores = _thread_count(nodes)
    else:
        num_cores = expect_int(num_cores, join_path(where, "num_cores"), minimum=0)
    capacity = raw.get("memory_capacity")
    capacity = sum(n.memory for n in nodes) if capacity is None else _uint(capacity, join_path(where, "memory_capacity"))
    extra = {k: v for k, v in raw.items() if k not in ("num_cores", "memory_capacity", "topology")}
    return MachineInfo(num_cores=num_cores, memory_capacity=capacity, topology=nodes, extra=extra)


def load_machine_info(path: Union[str, Path], limits: Limits = DEFAULT_LIMITS) -> MachineInfo:
    """Read and parse a cadvisor MachineInfo JSON (or YAML) file; errors name the file and the path inside."""
    return parse_file(path, parse_machine_info, limits)


def node_to_obj(node: Node) -> dict[str, Any]:
    """One Node in cadvisor's JSON shape (nil slices as null, as Go marshals them)."""
    return {
        "node_id": node.node_id,
        "memory": node.memory,
        "hugepages": [{"page_size": h.page_size, "num_pages": h.num_pages} for h in node.hugepages],
        "cores": node.cores,
        "caches": node.caches,
        "distances": None if node.distances is None else list(node.distances),
    }


def machine_info_to_obj(mi: MachineInfo) -> dict[str, Any]:
    """The MachineInfo as cadvisor JSON, fields in cadvisor's order (extra keys kept)."""
    values = dict(mi.extra)
    values["num_cores"] = mi.num_cores
    values["memory_capacity"] = mi.memory_capacity
    values["topology"] = [node_to_obj(n) for n in mi.topology]
    ordered = {k: values[k] for k in MACHINE_INFO_KEYS if k in values}
    ordered.update({k: v for k, v in values.items() if k not in ordered})
    return ordered


def machine_hugepage_capacity(mi: MachineInfo) -> dict[str, int]:
    """Node capacity in bytes per hugepage resource (cadvisor's machine-level counts, else summed over nodes)."""
    machine_level = mi.extra.get("hugepages")
    result: dict[str, int] = {}
    if isinstance(machine_level, list):
        for h in machine_level:
            name = hugepage_resource_name(h["page_size"])
            result[name] = result.get(name, 0) + h["page_size"] * 1024 * h["num_pages"]
        return result
    for node in mi.topology:
        for h in node.hugepages:
            name = hugepage_resource_name(h.page_size)
            result[name] = result.get(name, 0) + h.page_size * 1024 * h.num_pages
    return result
