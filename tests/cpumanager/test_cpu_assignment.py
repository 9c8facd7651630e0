"""takeByTopology: the accumulator's orders and the packed and distributed algorithms
(tables shaped like kubelet's cpu_assignment_test.go, on the same machine layouts)."""
import pytest

from kubeinputs.cpuset import CPUSet
from cpumanager.cpu_assignment import (CPU_SORTING_STRATEGY_PACKED as PACKED, CPU_SORTING_STRATEGY_SPREAD as SPREAD,
                                       CPUAccumulator, standard_deviation, take_by_topology_numa_distributed,
                                       take_by_topology_numa_packed)
from cpumanager.errors import CPUManagerError
from cpumanager.topology import CPUInfo, CPUTopology
from tests.cpumanager import topologies as t


def s(text):
    return CPUSet.parse(text)


@pytest.mark.parametrize("topo,available,sockets,numas", [
    (t.single_socket_ht, "0-7", [0], [0]),
    (t.single_socket_ht, "1-7", [], []),
    (t.dual_socket_ht, "0-11", [0, 1], [0, 1]),
    (t.dual_socket_ht, "0-9,11", [1], [1]),
    (t.dual_socket_ht, "0,2-9,11", [], []),
    (t.dual_socket_multi_numa_ht, "0-79", [0, 1], [0, 1, 2, 3]),
    (t.dual_socket_multi_numa_ht, "1-79", [1], [1, 2, 3]),
    (t.dual_socket_multi_numa_ht, "1-9,11-79", [1], [2, 3]),
    (t.dual_socket_multi_numa_ht, "1-59,61-79", [], [1, 3]),
    (t.dual_socket_multi_numa_ht, "1-9,11-59,61-78", [], []),
])
def test_free_sockets_and_numa_nodes(topo, available, sockets, numas):
    acc = CPUAccumulator(topo(), s(available), 0)
    assert sorted(acc.free_sockets()) == sockets and acc.free_numa_nodes() == numas


@pytest.mark.parametrize("topo,available,cores", [
    (t.single_socket_ht, "0-7", [0, 1, 2, 3]),
    (t.single_socket_ht, "0-2,4-6", [0, 1, 2]),
    (t.single_socket_ht, "0-6", [0, 1, 2]),
    (t.single_socket_ht, "", []),
    (t.single_socket_ht, "0-3", []),
    (t.dual_socket_ht, "0-11", [0, 2, 4, 1, 3, 5]),
    (t.dual_socket_ht, "1-5,7-11", [2, 4, 1, 3, 5]),
    (t.dual_socket_ht, "2-5,8-11", [2, 4, 3, 5]),
])
def test_free_cores(topo, available, cores):
    assert CPUAccumulator(topo(), s(available), 0).free_cores() == cores


@pytest.mark.parametrize("topo,available,cpus", [
    (t.single_socket_ht, "0-7", [0, 4, 1, 5, 2, 6, 3, 7]),
    (t.single_socket_ht, "3-7", [4, 5, 6, 3, 7]),
    (t.dual_socket_ht, "0-11", [0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
    (t.dual_socket_ht, "1-11", [6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
    (t.dual_socket_ht, "1-5,7-11", [2, 8, 4, 10, 1, 7, 3, 9, 5, 11]),
])
def test_free_cpus_packed(topo, available, cpus):
    assert CPUAccumulator(topo(), s(available), 0).free_cpus() == cpus


@pytest.mark.parametrize("available,take,need,satisfied,failed", [
    ("0-7", [""], 1, False, False),
    ("", [""], 1, False, True),
    ("0-7", ["0"], 1, True, False),
    ("0-7", ["0"], 2, False, False),
    ("0-2", ["0", "1"], 4, False, True),
    ("0-7", ["0", "1", "2", "3", "4", "5", "6", "7"], 8, True, False),
])
def test_take(available, take, need, satisfied, failed):
    acc = CPUAccumulator(t.single_socket_ht(), s(available), need)
    for cpus in take:
        acc.take(s(cpus).mask)
    assert (acc.is_satisfied(), acc.is_failed()) == (satisfied, failed)
    assert acc.needed == need - sum(s(c).size() for c in take)


def no_uncore_dual_socket_ht():
    """topoDualSocketHT as kubelet's tests write it: no uncore cache ids (all 0) and no cache count."""
    base = t.dual_socket_ht()
    return CPUTopology(12, 6, 2, {c: CPUInfo(i.numa_node_id, i.socket_id, i.core_id, 0)
                                  for c, i in base.cpu_details.items()}, num_uncore_cache=0)


COMMON = [  # (name, topology, available, request, expected or error)
    ("more cpus than available", t.single_socket_ht, "0,2,4,6", 5,
     "not enough cpus available to satisfy request: requested=5, available=4"),
    ("zero cpus", t.single_socket_ht, "0-7", 0, ""),
    ("one cpu", t.single_socket_ht, "0-7", 1, "0"),
    ("one cpu, some taken", t.single_socket_ht, "1,3,5-7", 1, "6"),
    ("two cpus", t.single_socket_ht, "0-7", 2, "0,4"),
    ("all cpus", t.single_socket_ht, "0-7", 8, "0-7"),
    ("two cpus, one core free", t.single_socket_ht, "0-3,6", 2, "2,6"),
    ("a socket, dual socket HT", t.dual_socket_ht, "0-11", 6, "0,2,4,6,8,10"),
    ("a socket, multi-NUMA sockets", t.dual_socket_multi_numa_ht, "0-79", 40, "0-19,40-59"),
    ("a NUMA node, multi-NUMA sockets", t.dual_socket_multi_numa_ht, "0-79", 20, "0-9,40-49"),
    ("a NUMA node, one NUMA node taken", t.dual_socket_multi_numa_ht, "10-39,50-79", 20, "10-19,50-59"),
    ("a socket and a NUMA node", t.dual_socket_multi_numa_ht, "0-79", 60, "0-29,40-69"),
    ("a socket and a NUMA node, a core taken", t.dual_socket_multi_numa_ht, "1-39,41-79", 60, "10-39,50-79"),
]

PACKED_ONLY = [
    ("one cpu, core from socket 0", t.dual_socket_ht, "1-5,7-11", 1, "2"),
    ("4 cores: 3 fill NUMA 0, 1 from NUMA 1", t.dual_socket_ht, "0-11", 8, "0,6,2,8,4,10,1,7"),
    ("32 cores: 30 fill 3 NUMA nodes, 2 from the fourth", t.dual_socket_multi_numa_ht, "0-79", 64,
     "0-29,40-69,30,31,70,71"),
]


def check(result_fn, expected):
    if expected.startswith("not enough") or expected.startswith("failed"):
        with pytest.raises(CPUManagerError) as err:
            result_fn()
        assert str(err.value) == expected
    else:
        assert result_fn() == s(expected)


@pytest.mark.parametrize("name,topo,available,want,expected", COMMON + PACKED_ONLY, ids=[c[0] for c in COMMON + PACKED_ONLY])
def test_take_by_topology_numa_packed(name, topo, available, want, expected):
    check(lambda: take_by_topology_numa_packed(topo(), s(available), want), expected)


UNCORE = [
    ("two full caches and part of one", t.uncore_single_socket_no_smt, "1-15", 10, "1,2,4-11"),
    ("no cache ids: one thread of the fullest core", no_uncore_dual_socket_ht, "1-5,7-11", 1, "1"),
    ("first free cache of the first socket", t.uncore_dual_socket_no_smt, "0-15", 4, "0-3"),
    ("every free cache of the first socket", t.uncore_dual_socket_no_smt, "2-15", 6, "2-7"),
    ("first free cache of the second socket", t.uncore_dual_socket_no_smt, "8-15", 4, "8-11"),
    ("first cache of the emptiest NUMA node that fits", t.uncore_single_socket_multi_numa, "3,4-8,12", 2, "4,5"),
    ("best cache, SMT", t.uncore_single_socket_smt, "2-3,10-11,4-7,12-15", 6, "4,5,6,12,13,14"),
    ("several caches, SMT", t.uncore_single_socket_smt, "1-7,9-15", 10, "4-7,12-15,1,9"),
]


@pytest.mark.parametrize("name,topo,available,want,expected", UNCORE, ids=[c[0] for c in UNCORE])
def test_take_by_topology_prefer_align_by_uncore_cache(name, topo, available, want, expected):
    check(lambda: take_by_topology_numa_packed(topo(), s(available), want, PACKED, True), expected)


SPREAD_CASES = [
    ("single socket HT, 3 cpus", t.single_socket_ht, "0-7", 3, "0,1,2"),
    ("dual socket HT, 2 cpus", t.dual_socket_ht, "0-11", 2, "0,2"),
    ("dual socket HT, 3 cpus", t.dual_socket_ht, "0-11", 3, "0,2,4"),
    ("dual socket HT, 6 cpus", t.dual_socket_ht, "0-11", 6, "0,2,4,6,8,10"),
    ("dual socket HT, 8 cpus", t.dual_socket_ht, "0-11", 8, "0,2,4,6,8,10,1,3"),
    ("dual socket no HT, 2 cpus", t.dual_socket_no_ht, "0-7", 2, "0,1"),
    ("multi-NUMA sockets, 8 cpus", t.dual_socket_multi_numa_ht, "0-79", 8, "0-7"),
]


@pytest.mark.parametrize("name,topo,available,want,expected", SPREAD_CASES, ids=[c[0] for c in SPREAD_CASES])
def test_take_by_topology_distribute_across_cores(name, topo, available, want, expected):
    check(lambda: take_by_topology_numa_packed(topo(), s(available), want, SPREAD), expected)


DISTRIBUTED = [(n, topo, a, r, 1, e) for n, topo, a, r, e in COMMON] + [
    ("4 cores, 2 on each NUMA node", t.dual_socket_ht, "0-11", 8, 1, "0,6,2,8,1,7,3,9"),
    ("32 cores, 8 on each NUMA node", t.dual_socket_multi_numa_ht, "0-79", 64, 1,
     "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77"),
    ("24 cores, 8 on each of the first 3", t.dual_socket_multi_numa_ht, "0-79", 48, 1,
     "0-7,10-17,20-27,40-47,50-57,60-67"),
    ("24 cores, first NUMA node partly taken", t.dual_socket_multi_numa_ht, "1-29,32-39,41-69,72-79", 48, 1,
     "1-8,10-17,20-27,41-48,50-57,60-67"),
    ("24 cores on the last 3 (balance)", t.dual_socket_multi_numa_ht, "2-29,31-39,42-69,71-79", 48, 1,
     "10-17,20-27,31-38,50-57,60-67,71-78"),
    ("8 cores, 2 on each NUMA node", t.dual_socket_multi_numa_ht, "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71", 16,
     1, "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71"),
    ("one cpu", t.dual_socket_ht, "1-5,7-11", 1, 1, "1"),
    ("one cpu, group size 2: packed", t.dual_socket_ht, "1-5,7-11", 1, 2, "2"),
    ("13 cores over 2 NUMA nodes", t.dual_socket_multi_numa_ht, "0-79", 26, 1, "0-6,10-16,40-45,50-55"),
    ("13 cores over 2 NUMA nodes, group 2", t.dual_socket_multi_numa_ht, "0-79", 26, 2, "0-6,10-15,40-46,50-55"),
    ("31 cores, 1 spilling to NUMA 0 and 1", t.dual_socket_multi_numa_ht, "0-79", 62, 1,
     "0-7,10-17,20-27,30-37,40-47,50-57,60-66,70-76"),
    ("31 cores, group 2, spilling to 0, 1, 2", t.dual_socket_multi_numa_ht, "0-79", 62, 2,
     "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76"),
    ("31 cores, spilling to 2 and 3 for balance", t.dual_socket_multi_numa_ht, "0-8,10-18,20-39,40-48,50-58,60-79", 62,
     1, "0-7,10-17,20-27,30-37,40-46,50-56,60-67,70-77"),
    ("31 cores, group 2, spilling to 0, 2, 3", t.dual_socket_multi_numa_ht, "0-8,10-18,20-39,40-48,50-58,60-79", 62,
     2, "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77"),
    ("remainder NUMA nodes that can hold it", t.dual_socket_multi_numa_ht,
     "0-3,10-13,20-23,30-36,40-43,50-53,60-63,70-76", 34, 1, "0-3,10-13,20-23,30-34,40-43,50-53,60-63,70-74"),
]


@pytest.mark.parametrize("name,topo,available,want,group,expected", DISTRIBUTED, ids=[c[0] for c in DISTRIBUTED])
def test_take_by_topology_numa_distributed(name, topo, available, want, group, expected):
    check(lambda: take_by_topology_numa_distributed(topo(), s(available), want, group), expected)


@pytest.mark.parametrize("values,expected", [([1, 1, 1], 0.0), ([0, 2], 1.0), ([1, 2, 4], 1.247), ([3, 4], 0.5)])
def test_standard_deviation_rounds_like_kubelet(values, expected):
    assert standard_deviation(values) == expected
