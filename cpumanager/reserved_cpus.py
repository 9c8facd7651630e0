"""The CPUs kubelet keeps for the system: `reservedSystemCPUs`, or a count from Node Allocatable.

* `get_reserved_cpus` is cmd/kubelet/app/server.go's getReservedCPUs: the explicit list, checked
  against the machine's CPUs before anything else starts (the override of systemReserved /
  kubeReserved `cpu` it implies is `kubeinputs.kubelet_config.reserved_with_system_cpus`);
* `num_reserved_cpus` is the static policy's count in cpu_manager.go's NewManager: the ceiling of
  the Node Allocatable `cpu` reservation, refused when absent or zero.
"""
from __future__ import annotations

import math
from typing import Mapping

from kubeinputs.cpuset import CPUSet, CPUSetError
from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import Quantity

from cpumanager.errors import CPUManagerError
from cpumanager.requests import milli_value
from cpumanager.topology import discover


def get_reserved_cpus(machine: MachineInfo, cpus: str) -> CPUSet:
    """getReservedCPUs: the `reservedSystemCPUs` list ("" -> empty), which must name CPUs of the machine.
    CPUManagerError with kubelet's texts."""
    if cpus == "":
        return CPUSet()
    try:
        topo = discover(machine)
    except CPUManagerError as err:
        raise CPUManagerError(f"unable to discover CPU topology info: {err}") from None
    try:
        reserved = CPUSet.parse(cpus)
    except CPUSetError as err:
        raise CPUManagerError(f"unable to parse reserved-cpus list: {err}") from None
    all_cpus = topo.details().cpus()
    if not reserved.is_subset_of(all_cpus):
        raise CPUManagerError(f"reserved-cpus: {cpus} is not a subset of online-cpus: {all_cpus}")
    return reserved


def num_reserved_cpus(node_allocatable_reservation: Mapping[str, Quantity]) -> int:
    """The static policy's reserved CPU count: ceil(reserved cpu). CPUManagerError when the reservation
    has no `cpu` (Node Allocatable keeps only non-zero totals: the usual case of nothing reserved) or
    a zero one."""
    reserved = node_allocatable_reservation.get("cpu")
    if reserved is None:
        raise CPUManagerError("[cpumanager] unable to determine reserved CPU resources for static policy")
    if reserved.is_zero():
        raise CPUManagerError("[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be "
                              "greater than zero")
    return math.ceil(milli_value(reserved) / 1000)
