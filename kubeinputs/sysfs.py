"""Read a machine's NUMA layout from sysfs the way cadvisor does, as a MachineInfo.

Rules (cadvisor lib/utils/sysinfo + lib/utils/sysfs):
- nodes: `devices/system/node/node*[0-9]` in lexical order (node10 sorts before node2; not re-sorted),
  the id taken from the folder name; no node folder at all is an error here (cadvisor would fall back to
  CPU packages, which gives the memory manager nothing to work with);
- memory: `nodeN/meminfo` line `MemTotal: <kB> kB` times 1024 (missing file: 0);
- hugepages: `nodeN/hugepages/hugepages-<kB>kB/nr_hugepages`, folders sorted by name (missing: none);
- distances: `nodeN/distance`, one line of numbers (missing: None);
- cores: `nodeN/cpu*[0-9]` in lexical order, offline CPUs skipped, grouped by
  (`topology/core_id`, `topology/physical_package_id`); a node without CPU folders (a memory-only CXL or
  HBM node) keeps `cores: null`;
- caches (cadvisor's addCacheInfo): for each core, the caches of its first thread,
  `devices/system/cpu/cpuN/cache/index*` in name order (`id`, `size` as `<n>K`, `level`, `type`, and
  `shared_cpu_map` for how many CPUs share it). Level 1 and 2 caches shared by exactly the core's threads
  are the core's `caches`; a level 3+ cache shared by every thread of the node is the node's (listed once),
  any other level 3+ cache is the core's `uncore_caches` (an L3 of one CCX: what the CPU manager's
  uncore-cache alignment reads). A cache that cannot be read ends the node's cache reading without an
  error, as in cadvisor (some kernels have no cache information).
- machine totals: for the real root ("/sys") `num_cores` and `memory_capacity` come from psutil (what
  cadvisor reads from /proc); for any other root (a fake tree) they are the number of online CPUs found
  under the nodes and the sum of the nodes' MemTotal. Machine-level hugepages come from
  `kernel/mm/hugepages` when present.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional, Union

from kubeinputs.errors import InputError
from kubeinputs.limits import DEFAULT_LIMITS, Limits, read_bytes
from kubeinputs.machine import HugePagesInfo, MachineInfo, Node

# ASCII digits only: Python's \\d and str.isdigit() also take "²" or "٣", which int() or Go's strconv refuse
_NODE_RE = re.compile(r"^node([0-9]+)$", re.ASCII)
_CPU_RE = re.compile(r"^cpu([0-9]+)$", re.ASCII)
_MEMTOTAL_RE = re.compile(r"MemTotal:[ \t]*([0-9]+) kB", re.ASCII)
_HUGEPAGES_DIR_RE = re.compile(r"^hugepages-([0-9]+)kB$", re.ASCII)
_UINT_RE = re.compile(r"[0-9]+", re.ASCII)
_SIZE_RE = re.compile(r"([0-9]+)K", re.ASCII)  # cadvisor scans "%dK"
_HEX_RE = re.compile(r"[0-9a-fA-F]+", re.ASCII)
UINT64_MAX = (1 << 64) - 1
INT32_MAX = (1 << 31) - 1  # ids (node, cpu, core, package) are C ints in the kernel


def _read_text(path: Path, limits: Limits) -> Optional[str]:
    """A file's text, or None when it does not exist (at most max_sysfs_bytes of it)."""
    try:
        data = read_bytes(path, limits=limits, limit_name="max_sysfs_bytes")
    except FileNotFoundError:
        return None
    except OSError as err:
        raise InputError("", f"cannot read: {err.strerror or err}", str(path)) from None
    return data.decode("utf-8", errors="replace")


def _uint(token: str, path: Path, maximum: int = UINT64_MAX, what: str = "a number") -> int:
    """An unsigned decimal of ASCII digits, at most `maximum` (what cadvisor's strconv parsing takes)."""
    if not _UINT_RE.fullmatch(token):
        raise InputError("", f"expected {what} in ASCII digits, got {token[:80]!r}", str(path))
    if len(token) > len(str(maximum)) + 20 or int(token) > maximum:
        raise InputError("", f"{token[:40]}{'...' if len(token) > 40 else ''} is out of range (at most {maximum})",
                         str(path))
    return int(token)


def _parse_int(text: str, path: Path, maximum: int = UINT64_MAX) -> int:
    """The first number in a sysfs value file."""
    token = text.strip().split()[0] if text.strip() else ""
    if not token:
        raise InputError("", f"expected a number, got {text.strip()!r}", str(path))
    return _uint(token, path, maximum)


def _glob_sorted(folder: Path, pattern: re.Pattern) -> list[tuple[int, Path]]:
    """Entries of `folder` whose name matches `pattern`, in lexical name order, with the captured number."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    result = []
    for name in names:
        match = pattern.match(name)
        if match:
            result.append((_uint(match.group(1), folder / name, INT32_MAX, "an id"), folder / name))
    return result


def _read_memory(node_dir: Path, limits: Limits) -> int:
    """MemTotal of a node in bytes (0 without a meminfo file)."""
    path = node_dir / "meminfo"
    text = _read_text(path, limits)
    if text is None:
        return 0
    match = _MEMTOTAL_RE.search(text)
    if not match:
        raise InputError("", "no MemTotal line", str(path))
    return _uint(match.group(1), path, UINT64_MAX // 1024) * 1024


def _read_hugepages(folder: Path, limits: Limits) -> list[HugePagesInfo]:
    """nr_hugepages per `hugepages-<kB>kB` folder, folders in name order."""
    result = []
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return result
    for name in names:
        match = _HUGEPAGES_DIR_RE.match(name)
        if not match:
            raise InputError("", "not a hugepages-<size>kB folder", str(folder / name))
        nr_path = folder / name / "nr_hugepages"
        text = _read_text(nr_path, limits)
        if text is None:
            raise InputError("", "missing", str(nr_path))
        page_size = _uint(match.group(1), folder / name, UINT64_MAX // 1024, "a page size")
        if page_size == 0:
            raise InputError("", "a page size of 0 kB", str(folder / name))
        result.append(HugePagesInfo(page_size=page_size, num_pages=_parse_int(text, nr_path)))
    return result


def _read_distances(node_dir: Path, limits: Limits) -> Optional[list[int]]:
    """The node's distance line, or None without the file."""
    path = node_dir / "distance"
    text = _read_text(path, limits)
    if text is None:
        return None
    fields = text.strip().split(" ")
    if not all(_UINT_RE.fullmatch(f) for f in fields):
        raise InputError("", f"expected space-separated numbers, got {text.strip()[:80]!r}", str(path))
    return [_uint(f, path, 255, "a distance") for f in fields]


def _cpu_online(cpu_dir: Path, limits: Limits) -> bool:
    """Whether a CPU is online (no `online` file, as for cpu0, means online)."""
    text = _read_text(cpu_dir / "online", limits)
    return text is None or text.strip() != "0"


def _read_cores(node_dir: Path, limits: Limits) -> Optional[list[dict]]:
    """Online CPUs of a node grouped into cores by (core_id, physical_package_id)."""
    cpus = _glob_sorted(node_dir, _CPU_RE)
    if not cpus:
        return None
    cores: list[dict] = []
    for cpu_id, cpu_dir in cpus:
        if not _cpu_online(cpu_dir, limits):
            continue
        core_text = _read_text(cpu_dir / "topology" / "core_id", limits)
        package_text = _read_text(cpu_dir / "topology" / "physical_package_id", limits)
        if core_text is None or package_text is None:
            continue
        core_id = _parse_int(core_text, cpu_dir / "topology" / "core_id", INT32_MAX)
        socket_id = _parse_int(package_text, cpu_dir / "topology" / "physical_package_id", INT32_MAX)
        for core in cores:
            if core["core_id"] == core_id and core["socket_id"] == socket_id:
                core["thread_ids"].append(cpu_id)
                break
        else:
            cores.append({"core_id": core_id, "thread_ids": [cpu_id], "caches": None,
                          "uncore_caches": None, "socket_id": socket_id})
    return cores


def _read_cache(index_dir: Path, limits: Limits) -> Optional[tuple[dict, int]]:
    """One `cache/indexN` folder as (cadvisor Cache, number of CPUs sharing it), None when a file is missing
    or unreadable (cadvisor's GetCacheInfo error)."""
    values = {}
    for name in ("id", "size", "level", "type", "shared_cpu_map"):
        try:
            text = _read_text(index_dir / name, limits)
        except InputError:
            return None
        if text is None:
            return None
        values[name] = text.strip()
    size, level, cache_id = (_SIZE_RE.match(values["size"]), _UINT_RE.match(values["level"]),
                             _UINT_RE.match(values["id"]))
    if size is None or level is None or cache_id is None:
        return None
    cpus = 0
    for word in values["shared_cpu_map"].split(","):
        word = word.strip()
        if not _HEX_RE.fullmatch(word) or len(word) > 16:
            return None
        cpus += int(word, 16).bit_count()
    cache = {"id": int(cache_id.group(0)), "size": int(size.group(1)) * 1024, "type": values["type"],
             "level": int(level.group(0))}
    return cache, cpus


def _add_cache_info(root: Path, cores: Optional[list[dict]], limits: Limits) -> Optional[list[dict]]:
    """cadvisor's addCacheInfo over a node's cores (changed in place); returns the node-level caches (None:
    none). Reading stops at the first cache that cannot be read, keeping what was read before it."""
    node_caches: list[dict] = []
    cpu_root = root / "devices" / "system" / "cpu"
    for core in cores or []:
        cache_dir = cpu_root / f"cpu{core['thread_ids'][0]}" / "cache"
        try:
            names = sorted(n for n in os.listdir(cache_dir) if n.startswith("index"))
        except OSError:
            break
        per_core = len(core["thread_ids"])
        for name in names:
            read = _read_cache(cache_dir / name, limits)
            if read is None:
                return node_caches or None
            cache, cpus = read
            if cache["level"] > 2:
                if cpus == per_core * len(cores):  # cadvisor's threads per node: this core's count times the cores
                    if cache not in node_caches:
                        node_caches.append(cache)
                elif cache not in (core["uncore_caches"] or []):
                    core["uncore_caches"] = (core["uncore_caches"] or []) + [cache]
            elif cpus == per_core:
                core["caches"] = (core["caches"] or []) + [cache]
    return node_caches or None


def read_machine_info(sysfs_root: Union[str, Path] = "/sys", limits: Limits = DEFAULT_LIMITS) -> MachineInfo:
    """The MachineInfo cadvisor would report for the sysfs tree at `sysfs_root` (see module rules); each
    attribute is read up to `limits.max_sysfs_bytes`."""
    root = Path(sysfs_root)
    node_root = root / "devices" / "system" / "node"
    nodes_found = _glob_sorted(node_root, _NODE_RE)
    if not nodes_found:
        reason = ("no NUMA node folders (node0, node1, ...) found" if node_root.is_dir()
                  else "folder not found; is this a sysfs root with NUMA support?")
        raise InputError("", reason, str(node_root))
    nodes = []
    for node_id, node_dir in nodes_found:
        cores = _read_cores(node_dir, limits)
        caches = _add_cache_info(root, cores, limits)
        nodes.append(Node(node_id=node_id, memory=_read_memory(node_dir, limits),
                          hugepages=_read_hugepages(node_dir / "hugepages", limits),
                          distances=_read_distances(node_dir, limits), cores=cores, caches=caches))
    extra: dict = {}
    machine_hugepages = root / "kernel" / "mm" / "hugepages"
    if machine_hugepages.is_dir():
        extra["hugepages"] = [{"page_size": h.page_size, "num_pages": h.num_pages}
                              for h in _read_hugepages(machine_hugepages, limits)]
    if _is_real_root(root):
        import psutil

        num_cores = psutil.cpu_count(logical=True) or 0
        memory_capacity = int(psutil.virtual_memory().total)
    else:
        num_cores = sum(len(core["thread_ids"]) for node in nodes for core in (node.cores or []))
        memory_capacity = sum(node.memory for node in nodes)
    return MachineInfo(num_cores=num_cores, memory_capacity=memory_capacity, topology=nodes, extra=extra)


def _is_real_root(root: Path) -> bool:
    """Whether `root` is this machine's /sys."""
    try:
        return root.resolve() == Path("/sys").resolve()
    except OSError:
        return False
