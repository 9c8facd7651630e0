"""Tolerating benign per-NUMA memory drift across reboots (KEP-6232, gate MemoryManagerDriftTolerance).

After a reboot the kernel may report a NUMA node's MemTotal a little different
(the kernel image moved), which makes the restored checkpoint disagree with the
machine and kubelet refuse to start. With a drift bound, a state that differs only
in regular memory's total/allocatable by at most the bound is accepted and
re-baselined. `auto` derives the bound from the running kernel image's size in
/proc/iomem plus a 64 MiB grace.
"""
from __future__ import annotations

import re
from typing import Optional

from state.types import MEMORY, NUMANodeMap

from memorymanager.machine_state import paired_tables

MEMORY_DRIFT_GRACE_BYTES = 64 * 1024 * 1024
PROC_IOMEM_PATH = "/proc/iomem"
_KERNEL_SECTIONS = ("Kernel code", "Kernel data", "Kernel bss")


_HEX = re.compile(r"[0-9a-fA-F]+")


def _parse_hex_uint64(text: str) -> Optional[int]:
    """Go's strconv.ParseUint(text, 16, 64): hex digits only (no sign, prefix or underscores)."""
    if not _HEX.fullmatch(text):
        return None
    value = int(text, 16)
    return value if value < 1 << 64 else None


def parse_kernel_image_size(text: str) -> tuple[int, bool]:
    """Span of the kernel image in /proc/iomem text: lowest start to highest end (+1) over the
    `Kernel code` / `Kernel data` / `Kernel bss` ranges, gaps included.

    Returns (0, False) when there are no such lines or all their addresses are
    zero (iomem hides addresses from readers without CAP_SYS_ADMIN).
    """
    min_start = max_end = 0
    found = non_zero = False
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        colon = line.rfind(":")
        if colon < 0:
            continue
        if line[colon + 1:].strip() not in _KERNEL_SECTIONS:
            continue
        start_text, dash, end_text = line[:colon].strip().partition("-")
        if not dash:
            continue
        start = _parse_hex_uint64(start_text.strip())
        end = _parse_hex_uint64(end_text.strip())
        if start is None or end is None or end < start:
            continue
        if start != 0 or end != 0:
            non_zero = True
        if not found or start < min_start:
            min_start = start
        if not found or end > max_end:
            max_end = end
        found = True
    if not found or not non_zero:
        return 0, False
    return max_end - min_start + 1, True


def memory_drift_from_kernel_image(iomem_path: str = PROC_IOMEM_PATH) -> tuple[int, bool]:
    """The `auto` bound: kernel image size + 64 MiB, or (0, False) when it cannot be read (tolerance off)."""
    try:
        with open(iomem_path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return 0, False
    size, ok = parse_kernel_image_size(text)
    if not ok:
        return 0, False
    return size + MEMORY_DRIFT_GRACE_BYTES, True


def absolute_diff(a: int, b: int) -> int:
    """|a - b| for unsigned sizes."""
    return a - b if a > b else b - a


def is_tolerable_machine_state_drift(stored: NUMANodeMap, current: NUMANodeMap, max_drift: int) -> bool:
    """Whether `stored` differs from `current` only by a bounded drift of regular memory.

    Same nodes, assignments, groups and memory types; equal system reservations;
    hugepages unchanged; regular memory's total and allocatable within `max_drift`
    (inclusive). Free/reserved are not compared: the assignments were already
    re-fitted into `current`.
    """
    pairs = paired_tables(stored, current)
    if pairs is None:
        return False
    for _, resource, stored_table, current_table in pairs:
        if stored_table.system_reserved != current_table.system_reserved:
            return False
        if resource != MEMORY:
            if (
                stored_table.total_mem_size != current_table.total_mem_size
                or stored_table.allocatable != current_table.allocatable
            ):
                return False
            continue
        if (
            absolute_diff(stored_table.total_mem_size, current_table.total_mem_size) > max_drift
            or absolute_diff(stored_table.allocatable, current_table.allocatable) > max_drift
        ):
            return False
    return True


def memory_drift_by_node(stored: NUMANodeMap, current: NUMANodeMap) -> dict[int, int]:
    """|Δ total| of regular memory per node present in both states (the drift gauge's values)."""
    drift: dict[int, int] = {}
    for node_id, stored_node in stored.items():
        current_node = current.get(node_id)
        if stored_node is None or current_node is None:
            continue
        stored_table: Optional[object] = (stored_node.memory_map or {}).get(MEMORY)
        current_table = (current_node.memory_map or {}).get(MEMORY)
        if stored_table is None or current_table is None:
            continue
        drift[node_id] = absolute_diff(stored_table.total_mem_size, current_table.total_mem_size)
    return drift
