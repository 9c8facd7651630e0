"""The arithmetic behind kubelet's reservedMemory start check, per memory type: the reservedMemory
entries summed (per NUMA node and in total) against the Node Allocatable reservation,
systemReserved + kubeReserved + the hard-eviction threshold (memory.available, for `memory`).

kubelet (memory_manager.go validateReservedMemory) reports only the first type that does not add
up, with both totals; `reservation_sums` gives every type with every term, `reserved_memory_hint`
the one-line hint under a start error (`memorymanager run`), and `reserved_memory_fix` the
reservedMemory entries that would add up, to be checked by starting a node with them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kubeinputs.kubelet_config import (EVICTION_HARD, KUBE_RESERVED, SYSTEM_RESERVED, KubeletConfig,
                                       node_allocatable_reservation, node_allocatable_terms)
from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import Quantity, zero_quantity
from memorymanager.reserved_memory import ReservedMemoryMismatchError, get_total_memory_type_reserved
from state.types import is_memory_resource

RESERVED_MEMORY = "reservedMemory"
NODE_ALLOCATABLE = "nodeAllocatable"


@dataclass(frozen=True)
class ReservationSum:
    """One memory type: reservedMemory (per NUMA node, and its total) against the Node Allocatable
    reservation (systemReserved + kubeReserved + evictionHard). Bytes are ints; `texts` are the
    quantities as kubelet prints them (`1Gi`, `1636Mi`), by term name."""

    resource: str
    reserved_by_node: dict[int, int]
    reserved: int
    system_reserved: int
    kube_reserved: int
    eviction_hard: int
    eviction_note: str  # how the threshold came about: "kubelet's default", "10% of 8589934592 bytes", ""
    allocatable: int  # the Node Allocatable reservation this type must add up to
    equal: bool
    texts: dict[str, str] = field(default_factory=dict)


def _text(quantity: Optional[Quantity]) -> str:
    """A quantity as kubelet prints it; an absent term as `0`."""
    return "0" if quantity is None else str(quantity)


def _bytes(quantity: Optional[Quantity]) -> int:
    """A quantity's bytes; an absent term is 0."""
    return 0 if quantity is None else quantity.value_bytes()


def reservation_sums(config: KubeletConfig, machine: MachineInfo) -> list[ReservationSum]:
    """Every memory type kubelet checks (each reserved type and each memory type of the Node Allocatable
    reservation), sorted by name. Raises what kubelet's start raises for a configuration it cannot
    add up at all (an unknown NUMA node in reservedMemory, a bad reservation or threshold)."""
    terms = node_allocatable_terms(config, machine)
    reservation = node_allocatable_reservation(config, machine)
    totals = get_total_memory_type_reserved(machine, config.reserved_memory)
    names = set(totals) | {name for name in reservation if is_memory_resource(name)}
    threshold = config.eviction_hard.get("memory.available")
    rows = []
    for name in sorted(names):
        by_node: dict[int, int] = {}
        for entry in config.reserved_memory:
            if name in entry.limits:
                by_node[entry.numa_node] = by_node.get(entry.numa_node, 0) + entry.limits[name].value_bytes()
        allocatable = zero_quantity("DecimalSI").add(reservation[name]) if name in reservation else zero_quantity("DecimalSI")
        reserved = zero_quantity("DecimalSI").add(totals[name]) if name in totals else zero_quantity("DecimalSI")
        note = ""
        if name == "memory":
            if threshold is not None and threshold.endswith("%"):
                note = f"{threshold} of {machine.memory_capacity} bytes"
            elif config.eviction_hard_set is None:
                note = "kubelet's default"
        eviction = terms[EVICTION_HARD].get(name)
        rows.append(ReservationSum(
            name, dict(sorted(by_node.items())), reserved.value_bytes(), _bytes(terms[SYSTEM_RESERVED].get(name)),
            _bytes(terms[KUBE_RESERVED].get(name)), _bytes(eviction), note, allocatable.value_bytes(),
            allocatable.equal(reserved),
            {RESERVED_MEMORY: _text(totals.get(name)), SYSTEM_RESERVED: _text(terms[SYSTEM_RESERVED].get(name)),
             KUBE_RESERVED: _text(terms[KUBE_RESERVED].get(name)), EVICTION_HARD: _text(eviction),
             NODE_ALLOCATABLE: _text(reservation.get(name))}))
    return rows


def reserved_memory_hint(error: Optional[BaseException], config: KubeletConfig, machine: MachineInfo) -> Optional[str]:
    """The rule behind kubelet's "the total amount ... is not equal to the value ... determined by Node
    Allocatable feature", with its numbers: reservedMemory, summed over NUMA nodes, must equal
    systemReserved + kubeReserved (+ evictionHard memory.available for `memory`), each term shown."""
    while error is not None and not isinstance(error, ReservedMemoryMismatchError):
        error = error.__cause__ or error.__context__
    if error is None:
        return None
    try:
        row = next(r for r in reservation_sums(config, machine) if r.resource == error.resource)
    except (ValueError, StopIteration):  # cannot happen after a reservation kubelet computed; no hint then
        return None
    parts = [f"{source} {row.texts[source]}" for source in (SYSTEM_RESERVED, KUBE_RESERVED)]
    if row.resource == "memory":
        part = f"{EVICTION_HARD} memory.available {row.texts[EVICTION_HARD]}"
        parts.append(part + (f" ({row.eviction_note})" if row.eviction_note else ""))
    return (f"hint: reservedMemory of type {row.resource}, summed over the NUMA nodes, must equal the Node "
            f"Allocatable reservation: reservedMemory total {_with_bytes(error.reserved)} != {' + '.join(parts)} = "
            f"{_with_bytes(error.allocatable)}")


def _with_bytes(quantity: Quantity) -> str:
    """`1G (1000000000 bytes)`; a quantity written in bytes already stays as it is."""
    text = str(quantity)
    size = str(quantity.value_bytes())
    return text if text == size else f"{text} ({size} bytes)"


def reserved_memory_fix(rows: list[ReservationSum], machine: MachineInfo) -> dict[int, dict[str, int]]:
    """reservedMemory that adds up for every type (NUMA node -> resource -> bytes), changing as little as
    possible: a type that adds up keeps its entries; a shortfall goes to the lowest NUMA node already
    reserving that type (else the lowest node); an excess is taken back from the highest nodes first.
    One entry per node (kubelet sums duplicate entries when it checks but keeps only the last)."""
    nodes = sorted(node.node_id for node in machine.topology)
    fixed: dict[int, dict[str, int]] = {}
    for row in rows:
        by_node = dict(row.reserved_by_node)
        diff = row.allocatable - row.reserved
        if diff > 0:
            target = min(by_node) if by_node else nodes[0]
            by_node[target] = by_node.get(target, 0) + diff
        for node_id in sorted(by_node, reverse=True):
            if diff >= 0:
                break
            take = min(by_node[node_id], -diff)
            by_node[node_id] -= take
            diff += take
        for node_id, size in by_node.items():
            if size > 0:
                fixed.setdefault(node_id, {})[row.resource] = size
    return dict(sorted(fixed.items()))
