"""cadvisor MachineInfo: the node's NUMA topology, memory and hugepages, as kubelet receives it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


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
