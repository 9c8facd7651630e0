"""Parity cases from kubelet v1.37's cpu_assignment_test.go that test_cpu_assignment.py did not hold:
the accumulator on the machine with more sockets than NUMA nodes and on the triple-socket machine, the
spread sort on the four-way-SMT machine, and the distributed take on the 256-CPU EPYC. Machines and
expected CPU sets are kubelet's; names are ours."""
import pytest

from kubeinputs.cpuset import CPUSet
from cpumanager.cpu_assignment import (CPU_SORTING_STRATEGY_SPREAD as SPREAD, CPUAccumulator,
                                       take_by_topology_numa_distributed, take_by_topology_numa_packed)
from tests.cpumanager import topologies as t


def s(text):
    return CPUSet.parse(text)


@pytest.mark.parametrize("topo,available,sockets", [
    (t.dual_socket_multi_numa_ht, "1-78", []),
    (t.multi_socket_per_numa_ht, "0-79", [0, 1, 2, 3]),
    (t.multi_socket_per_numa_ht, "0-19,21-79", [0, 1, 3]),
    (t.multi_socket_per_numa_ht, "0-59,61-78", [0, 1]),
    (t.multi_socket_per_numa_ht, "1-19,21-38,41-60,61-78", [1]),
    (t.multi_socket_per_numa_ht, "0-40,42-49,51-68,71-79", []),
], ids=["multi-NUMA sockets, both sockets touched", "sockets inside NUMA nodes, all four free",
        "sockets inside NUMA nodes, three free", "sockets inside NUMA nodes, two free",
        "sockets inside NUMA nodes, one free", "sockets inside NUMA nodes, none free"])
def test_free_sockets(topo, available, sockets):
    assert sorted(CPUAccumulator(topo(), s(available), 0).free_sockets()) == sockets


@pytest.mark.parametrize("topo,available,numas", [
    (t.dual_socket_multi_numa_ht, "1-9,11-59,61-79", [3]),
    (t.multi_socket_per_numa_ht, "0-79", [0, 1]),
    (t.multi_socket_per_numa_ht, "0-9,11-79", [1]),
    (t.multi_socket_per_numa_ht, "0-9,11-59,61-79", []),
], ids=["multi-NUMA sockets, one NUMA node free", "sockets inside NUMA nodes, both free",
        "sockets inside NUMA nodes, one free", "sockets inside NUMA nodes, none free"])
def test_free_numa_nodes(topo, available, numas):
    assert CPUAccumulator(topo(), s(available), 0).free_numa_nodes() == numas


def test_free_cpus_on_three_sockets_start_with_the_emptiest_socket():
    acc = CPUAccumulator(t.triple_socket_ht(), s("0-3,6-13"), 0)
    assert acc.free_cpus() == [12, 13, 0, 1, 2, 3, 6, 7, 8, 9, 10, 11]


def test_spread_on_four_way_smt_takes_one_thread_per_core_first():
    got = take_by_topology_numa_packed(t.quad_socket_four_way_ht(), s("0-287"), 12, SPREAD)
    assert got == s("0-2,9-10,13-14,21-22,25-26,33")


def test_distributed_take_on_the_large_epyc_that_once_failed():
    available = s("0,128,30,31,158,159,43-47,171-175,62,63,190,191,75-79,203-207,94,96,222,223,101-111,229-239,"
                  "126,127,254,255")
    got = take_by_topology_numa_distributed(t.dual_socket_multi_numa_ht_large(), available, 28, 1)
    assert got == s("43-47,75-79,96,101-105,171-174,203-206,229-232")
