"""Per-NUMA reserved memory: kubelet's reservedMemory, checked against Node Allocatable.

kubelet (memory_manager.go getSystemReservedMemory) first validates that, for every
memory type, the sum of `reservedMemory` equals the node allocatable reservation
(systemReserved + kubeReserved + hard-eviction memory.available), then converts
the reservations to a NUMA node -> resource -> bytes map for the static policy.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from state.types import MEMORY, is_memory_resource

from kubeinputs.machine import MachineInfo
from kubeinputs.goformat import go_quote
from memorymanager.policy import MemoryManagerError
from kubeinputs.quantity import Quantity, QuantityError, zero_quantity

UINT64_MASK = (1 << 64) - 1

# NUMA node id -> resource name -> reserved bytes (kubelet's systemReservedMemory).
SystemReservedMemory = dict[int, dict[str, int]]


def _machine_node_ids(machine_info: MachineInfo) -> list[int]:
    """The NUMA node ids of cadvisor's topology, in machine-info order."""
    return [node.node_id for node in machine_info.topology]


def get_total_memory_type_reserved(machine_info: MachineInfo, reserved_memory: Sequence) -> dict[str, Quantity]:
    """Sum `reservedMemory` per resource name; an entry for an unknown NUMA node is an error.

    Entries are checked in list order before anything is summed past them, as in
    kubelet. The running total takes the format of the newest addend unless that
    addend is zero (Quantity.Add's format rule, new + old).
    """
    known = set(_machine_node_ids(machine_info))
    totals: dict[str, Quantity] = {}
    for reservation in reserved_memory:
        if reservation.numa_node not in known:
            raise MemoryManagerError(
                f"the reserved memory configuration references a NUMA node {reservation.numa_node} "
                "that does not exist on this machine"
            )
        for name, quantity in reservation.limits.items():
            if name in totals:
                quantity = quantity.add(totals[name])
            totals[name] = quantity
    return totals


class ReservedMemoryMismatchError(MemoryManagerError):
    """reservedMemory does not add up to the Node Allocatable reservation of one memory type.

    str() is kubelet's message; `resource`, `reserved` (the reservedMemory total) and
    `allocatable` (the Node Allocatable reservation) are the values it names.
    """

    def __init__(self, resource: str, reserved: Quantity, allocatable: Quantity) -> None:
        super().__init__(
            f"the total amount {go_quote(str(reserved))} of type {go_quote(resource)} is not equal to the value "
            f"{go_quote(str(allocatable))} determined by Node Allocatable feature"
        )
        self.resource = resource
        self.reserved = reserved
        self.allocatable = allocatable


def validate_reserved_memory(
    machine_info: MachineInfo, node_allocatable_reservation: Mapping[str, Quantity], reserved_memory: Sequence
) -> None:
    """Check that reservedMemory adds up to the Node Allocatable reservation for every memory type.

    The types checked are every reserved type plus every `memory`/`hugepages-*` entry
    of the reservation. Go visits them in random map order, so with several
    mismatches kubelet reports an arbitrary one; here they are visited in sorted
    order, so the reported one is the alphabetically first.
    """
    totals = get_total_memory_type_reserved(machine_info, reserved_memory)
    names = set(totals)
    names.update(name for name in node_allocatable_reservation if is_memory_resource(name))
    for name in sorted(names):
        allocatable = zero_quantity("DecimalSI")
        if name in node_allocatable_reservation:
            allocatable = allocatable.add(node_allocatable_reservation[name])
        reserved = zero_quantity("DecimalSI")
        if name in totals:
            reserved = reserved.add(totals[name])
        if not allocatable.equal(reserved):
            raise ReservedMemoryMismatchError(name, reserved, allocatable)


def convert_reserved(machine_info: MachineInfo, reserved_memory: Sequence) -> SystemReservedMemory:
    """NUMA node -> resource -> bytes; every machine node gets a (possibly empty) map.

    A later entry for the same node and resource overwrites an earlier one (although
    validation summed both), and values are stored as Go's uint64 would hold them.
    """
    converted: SystemReservedMemory = {node_id: {} for node_id in _machine_node_ids(machine_info)}
    for reservation in reserved_memory:
        for name, quantity in reservation.limits.items():
            try:
                value = quantity.as_int64()
            except QuantityError:
                raise MemoryManagerError("could not covert a variable of type Quantity to int64") from None
            converted.setdefault(reservation.numa_node, {})[name] = value & UINT64_MASK
    return converted


def get_system_reserved_memory(
    machine_info: MachineInfo, node_allocatable_reservation: Mapping[str, Quantity], reserved_memory: Sequence
) -> SystemReservedMemory:
    """Validate then convert the reservations (kubelet's getSystemReservedMemory)."""
    validate_reserved_memory(machine_info, node_allocatable_reservation, reserved_memory)
    return convert_reserved(machine_info, reserved_memory)


def total_reserved_regular_memory(system_reserved: SystemReservedMemory) -> int:
    """Sum of the `memory` reservations over all nodes (hugepage reservations do not count)."""
    return sum(node.get(MEMORY, 0) for node in system_reserved.values())
