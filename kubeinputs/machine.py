"""cadvisor MachineInfo: the node's NUMA topology, memory and hugepages, as kubelet receives it.

`parse_machine_info` reads cadvisor's JSON (the field names cadvisor writes, `page_size` in KiB); every
cadvisor MachineInfo / Node / Core / Cache key is accepted, an unknown key is an InputError with a
suggestion, and the values the managers read are type-checked. Keys the managers do not read are kept
verbatim in `MachineInfo.extra` and written back by `machine_info_to_obj`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from kubeinputs.errors import InputError, check_keys, expect_int, expect_list, expect_map, index_path, join_path
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


def _parse_caches(value: Any, where: str) -> Optional[list[Any]]:
    """A caches list, checked and kept verbatim (None stays None)."""
    if value is None:
        return None
    caches = expect_list(value, where)
    for i, item in enumerate(caches):
        path = index_path(where, i)
        raw = expect_map(item, path, "a map (a cache)")
        check_keys(raw, path, CACHE_KEYS)
        for key in ("id", "size", "level"):
            if key in raw:
                _uint(raw[key], join_path(path, key))
    return caches


def _parse_cores(value: Any, where: str) -> Optional[list[Any]]:
    """A cores list, checked and kept verbatim (None stays None: a CPU-less node)."""
    if value is None:
        return None
    cores = expect_list(value, where)
    for i, item in enumerate(cores):
        path = index_path(where, i)
        raw = expect_map(item, path, "a map (a core)")
        check_keys(raw, path, CORE_KEYS)
        for key in ("core_id", "socket_id"):
            if key in raw:
                expect_int(raw[key], join_path(path, key))
        threads_path = join_path(path, "thread_ids")
        for j, thread in enumerate(expect_list(raw.get("thread_ids"), threads_path)):
            expect_int(thread, index_path(threads_path, j), minimum=0)
        _parse_caches(raw.get("caches"), join_path(path, "caches"))
        _parse_caches(raw.get("uncore_caches"), join_path(path, "uncore_caches"))
    return cores


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
    if "hugepages" in raw:
        _parse_hugepages(raw["hugepages"], join_path(where, "hugepages"))
    num_cores = raw.get("num_cores")
    if num_cores is None:
        num_cores = _thread_count(nodes)
    else:
        num_cores = expect_int(num_cores, join_path(where, "num_cores"), minimum=0)
    capacity = raw.get("memory_capacity")
    capacity = sum(n.memory for n in nodes) if capacity is None else _uint(capacity, join_path(where, "memory_capacity"))
    extra = {k: v for k, v in raw.items() if k not in ("num_cores", "memory_capacity", "topology")}
    return MachineInfo(num_cores=num_cores, memory_capacity=capacity, topology=nodes, extra=extra)


def load_machine_info(path: Union[str, Path]) -> MachineInfo:
    """Read and parse a cadvisor MachineInfo JSON (or YAML) file; errors name the file and the path inside."""
    return parse_file(path, parse_machine_info)


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
