"""Exact, short byte counts and NUMA masks for humans (`6Gi`, `100Mi`, `1536Ki`, `12345`; `0-1`, `0,2`)."""
from __future__ import annotations

from typing import Iterable, Optional

from kubeinputs.cpuset import cpuset_string
from kubeinputs.quantity import size_text

_UNITS = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def fmt_bytes(n: int) -> str:
    """The largest binary unit that states `n` exactly (never rounded), else plain bytes: the one
    size style of every report (`kubeinputs.quantity.size_text`)."""
    return size_text(n)


def fmt_nodes(nodes: Optional[Iterable[int]]) -> str:
    """A NUMA mask as kubelet's cpuset-style list (`0-1`, `0,2`); `any` for the nil affinity."""
    if nodes is None:
        return "any"
    return cpuset_string(sorted(nodes)) or "-"


def fmt_sizes(sizes: dict[str, int]) -> str:
    """`memory 6Gi, hugepages-2Mi 512Mi`."""
    return ", ".join(f"{resource} {fmt_bytes(size)}" for resource, size in sizes.items()) or "nothing"


def approx_bytes(n: int) -> str:
    """A rounded size for an estimate (`2.9Gi`); exact when a unit states it exactly."""
    exact = fmt_bytes(n)
    if not exact.isdigit() or n < 1024:
        return exact
    for unit, size in _UNITS:
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return exact


DERIVATION_HEAD = "allocatable = MemTotal - hugepages - reservedMemory (a hugepage size: its pool - reservedMemory)"


def fmt_derivation(resource: str, total: int, hugepages: int, reserved: int, allocatable: int, adds_up: bool) -> str:
    """`memory 4Gi - 0 - 100Mi = 3996Mi`, `hugepages-2Mi 1Gi - 0 = 1Gi` (DERIVATION_HEAD names the terms)."""
    terms = [fmt_bytes(total)] + ([fmt_bytes(hugepages)] if resource == "memory" else []) + [fmt_bytes(reserved)]
    text = f"{resource} {' - '.join(terms)} = {fmt_bytes(allocatable)}"
    return text if adds_up else text + " (does not add up: not derived from one machine)"


def derivation_lines(rows: Iterable) -> list[str]:
    """One line per NUMA node (nodes with the same arithmetic share a line): `nodes 1-3: memory 4Gi - 0 - 0 = 4Gi`."""
    by_node: dict[int, list[str]] = {}
    for row in rows:
        by_node.setdefault(row.node, []).append(
            fmt_derivation(row.resource, row.total, row.hugepages, row.reserved, row.allocatable, row.adds_up))
    groups: dict[str, list[int]] = {}
    for node, texts in by_node.items():
        groups.setdefault("; ".join(texts), []).append(node)
    return [f"node{'s' if len(nodes) > 1 else ''} {fmt_nodes(nodes)}: {text}" for text, nodes in groups.items()]
