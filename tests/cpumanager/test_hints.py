"""generateCPUTopologyHints: a table like kubelet's topology_hints_test.go, the production path
against the literal loop, and the hint family of 17+ NUMA nodes against the list."""
import pytest
from hypothesis import given, settings, strategies as st

from kubeinputs.cpuset import CPUSet
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from cpumanager.hints import generate_cpu_topology_hints
from cpumanager.listed_hints import listed_hints
from cpumanager.reference_hints import reference_generate_cpu_topology_hints
from cpumanager.topology import CPUInfo, CPUTopology
from tests.cpumanager import topologies as t


def H(nodes, preferred):
    return TopologyHint.of(nodes, preferred)


def s(text):
    return CPUSet.parse(text)


CASES = [  # (name, topology, available, reusable, request, align_by_socket, hints)
    ("1 CPU, both nodes free", t.dual_socket_ht, "0-11", "", 1, False,
     [H([0], True), H([1], True), H([0, 1], False)]),
    ("2 CPUs, 4 free on node 0, 6 on node 1", t.dual_socket_ht, "2,4,6,8,1,3,5,7,9,11", "", 2, False,
     [H([0], True), H([1], True), H([0, 1], False)]),
    ("5 CPUs, only node 1 has 5 free", t.dual_socket_ht, "2,4,6,8,1,3,5,7,9,11", "", 5, False,
     [H([1], True), H([0, 1], False)]),
    ("7 CPUs: no node holds 7, preferred width 2", t.dual_socket_ht, "0-11", "", 7, False, [H([0, 1], True)]),
    ("11 CPUs, only 10 free: no hint", t.dual_socket_ht, "0-9", "", 11, False, []),
    ("6 CPUs: one node could hold 6 but none has 6 free: only the pair, not preferred",
     t.dual_socket_ht, "0-4,6-9", "", 6, False, [H([0, 1], False)]),
    ("reusable CPUs pin the mask to their NUMA node", t.dual_socket_ht, "3,5", "2,4", 4, False,
     [H([0, 1], False)]),
    ("reusable CPUs count towards the request", t.dual_socket_ht, "6", "0,2,4", 4, False, [H([0], True), H([0, 1], False)]),
    ("a reusable CPU the machine lacks counts on NUMA node 0", t.dual_socket_ht, "2", "99", 2, False,
     [H([0], True), H([0, 1], False)]),
    ("multi-NUMA sockets: 15 CPUs need 1 node (20 CPUs each)", t.dual_socket_multi_numa_ht, "0-79", "", 15, False,
     [H([0], True), H([1], True), H([2], True), H([3], True), H([0, 1], False), H([0, 2], False), H([0, 3], False),
      H([1, 2], False), H([1, 3], False), H([2, 3], False), H([0, 1, 2], False), H([0, 1, 3], False),
      H([0, 2, 3], False), H([1, 2, 3], False), H([0, 1, 2, 3], False)]),
    ("align-by-socket: 15 CPUs, the pairs inside one socket are preferred too", t.dual_socket_multi_numa_ht, "0-79",
     "", 15, True,
     [H([0], True), H([1], True), H([2], True), H([3], True), H([0, 1], True), H([0, 2], False), H([0, 3], False),
      H([1, 2], False), H([1, 3], False), H([2, 3], True), H([0, 1, 2], False), H([0, 1, 3], False),
      H([0, 2, 3], False), H([1, 2, 3], False), H([0, 1, 2, 3], False)]),
]


@pytest.mark.parametrize("name,topo,available,reusable,want,align,hints", CASES, ids=[c[0] for c in CASES])
def test_generate_cpu_topology_hints(name, topo, available, reusable, want, align, hints):
    got = generate_cpu_topology_hints(topo(), s(available), s(reusable), want, align)
    assert got == hints
    assert reference_generate_cpu_topology_hints(topo(), s(available), s(reusable), want, align) == hints


def test_gb200_shape_walks_only_the_numa_nodes_with_cpus():
    # 64 NUMA nodes, CPUs on 0 and 1 only (the GPU memory nodes have none): 3 masks, not 2^64
    topo = CPUTopology(144, 144, 2, {c: CPUInfo(c // 72, c // 72, c, c // 72) for c in range(144)})
    assert generate_cpu_topology_hints(topo, s("1-143"), CPUSet(), 72) == [H([1], True), H([0, 1], False)]


@st.composite
def machines(draw):
    nodes = draw(st.integers(1, 5))
    per_node = draw(st.integers(1, 4))
    sockets = draw(st.sampled_from([1, nodes]))
    n = nodes * per_node
    topo = CPUTopology(n, n, sockets, {c: CPUInfo(c // per_node, (c // per_node) % sockets, c, 0) for c in range(n)})
    cpus = st.sets(st.integers(0, n), max_size=n + 1).map(lambda ids: CPUSet.new(*ids))
    return topo, draw(cpus), draw(cpus), draw(st.integers(1, n + 1)), draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(machines())
def test_production_hints_equal_the_literal_loop(case):
    topo, available, reusable, want, align = case
    assert list(generate_cpu_topology_hints(topo, available, reusable, want, align)) == \
        reference_generate_cpu_topology_hints(topo, available, reusable, want, align)


@settings(max_examples=12, deadline=None)
@given(st.integers(17, 18), st.data())
def test_the_family_of_17_plus_numa_nodes_is_the_list(nodes, data):
    n = nodes * 2
    topo = CPUTopology(n, n, 2, {c: CPUInfo(c // 2, (c // 2) % 2, c, 0) for c in range(n)})
    available = CPUSet.new(*data.draw(st.sets(st.integers(0, n - 1))))
    reusable = CPUSet.new(*data.draw(st.sets(st.integers(0, n - 1), max_size=2)))
    want = data.draw(st.integers(1, n))
    got = generate_cpu_topology_hints(topo, available, reusable, want)
    listed = listed_hints(topo, topo.details().numa_nodes(), available, reusable, want)
    if isinstance(got, HintFamily):
        assert got.count() == len(listed)
        assert [h for _, h in zip(range(200), got)] == listed[:200]
        assert got.best_hint() == min((h for h in listed if h.preferred),
                                      key=lambda h: (h.numa_node_affinity.bit_count(), h.numa_node_affinity),
                                      default=got.best_hint())
    else:
        assert got == listed == []


def test_a_64_numa_node_family_answers_without_listing():
    topo = CPUTopology(128, 128, 2, {c: CPUInfo(c // 2, c // 64, c, c // 64) for c in range(128)})
    fam = generate_cpu_topology_hints(topo, s("0-127"), CPUSet(), 3)
    assert isinstance(fam, HintFamily) and fam.preferred_width == 2
    assert fam.best_hint() == H([0, 1], True) and fam.count() == 2 ** 64 - 1 - 64


def test_benchmark_b13_scaffolding_runs():
    """benchmarks/cpu_hints.py (B13) answers each case as it expects (timings are not asserted)."""
    from benchmarks import cpu_hints

    rows = cpu_hints.run(1)
    assert [r.bench for r in rows] == ["B13"] * len(cpu_hints.CASES)
