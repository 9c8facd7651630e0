"""The family merge against the merges that list every hint (the oracles).

`family_merge_hints` takes the memory manager's hints as a family; the oracles take the same
hints as kubelet's list: the cross product (`reference_merge_hints`) on small machines, the
production counting merge (`fast_merge_hints`, itself checked against the cross product in
test_merge_differential.py) up to 12 nodes. Random machine states (busy nodes, groups,
hugepages), random explicit CPU/device-shaped lists (nil hints, bits beyond the machine),
best-effort / restricted / single-numa-node, prefer-closest with random distances.

The last test runs whole admissions on simulated nodes twice, once with the family paths forced
on every machine size, and compares every answer and the checkpointed state: both scopes, all
four policies.
"""
from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.budget import examples

import memorymanager.hints as hints_module
import topologymanager.fast_merge as fast_merge_module
from kubeinputs.synthetic_machine import synthetic_machine
from memorymanager.hint_family import family_hints
from memorymanager.hints import calculate_hints
from memorymanager.node.api import Node
from tests.memory.test_hint_family import REQUESTS, states
from topologymanager.family_merge import family_merge_hints
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.hint import TopologyHint
from topologymanager.numa_info import NUMAInfo
from topologymanager.policy_single_numa_node import filter_single_numa_hints
from topologymanager.reference_merge import reference_merge_hints

POLICIES = ("best-effort", "restricted", "single-numa-node")


@st.composite
def explicit_lists(draw, ids: list[int]):
    """CPU- or device-shaped hint lists over the machine's nodes (sometimes a bit beyond it)."""
    out = []
    for _ in range(draw(st.integers(0, 2))):
        hints = []
        for _ in range(draw(st.integers(1, 4))):
            if draw(st.integers(0, 9)) == 0:
                hints.append(TopologyHint(None, draw(st.booleans())))
                continue
            nodes = draw(st.sets(st.sampled_from(ids + [63] if draw(st.integers(0, 9)) == 0 else ids), min_size=1, max_size=4))
            mask = 0
            for node in nodes:
                mask |= 1 << node
            hints.append(TopologyHint(mask, draw(st.booleans())))
        out.append(hints)
    return out


def _numa_info(ids, distances):
    return NUMAInfo(list(ids), distances)


def _check(state, requested, data, oracle):
    ids = sorted(state)
    listed = calculate_hints(copy.deepcopy(state), dict(requested))
    family = family_hints(copy.deepcopy(state), dict(requested))
    if not listed:
        assert not family
        return
    explicit = data.draw(explicit_lists(ids))
    where = data.draw(st.integers(0, len(explicit)))
    with_family = explicit[:where] + list(family.values()) + explicit[where:]
    with_lists = explicit[:where] + list(listed.values()) + explicit[where:]
    prefer_closest = data.draw(st.integers(0, 3)) == 0
    distances = {i: ([10 if i == j else data.draw(st.sampled_from([11, 20, 30])) for j in range(max(ids) + 1)]
                     if prefer_closest else None) for i in ids}
    info = _numa_info(ids, distances)
    for policy in POLICIES:
        a, b = with_family, with_lists
        if policy == "single-numa-node":
            a, b = filter_single_numa_hints(a), filter_single_numa_hints(b)
        assert family_merge_hints(info, a, policy, prefer_closest) == oracle(info, b, policy, prefer_closest), policy


@settings(max_examples=examples(150, 1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(2, 5), REQUESTS, st.data())
def test_family_merge_equals_the_cross_product(state, requested, data):
    _check(state, requested, data, reference_merge_hints)


@settings(max_examples=examples(150, 1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(6, 12), REQUESTS, st.data())
def test_family_merge_equals_the_counting_merge(state, requested, data):
    _check(state, requested, data, fast_merge_hints)


GI = 1 << 30
MI = 1 << 20


def _pod(name: str, containers: list[tuple[int, int]]) -> dict:
    """A Guaranteed pod: per container (memory Mi, hugepages-2Mi Mi)."""
    specs = []
    for i, (memory, pages) in enumerate(containers):
        limits = {"cpu": "1", "memory": f"{memory}Mi"}
        if pages:
            limits["hugepages-2Mi"] = f"{pages * 2}Mi"
        specs.append({"name": f"c{i}", "resources": {"limits": limits}})
    return {"metadata": {"name": name}, "spec": {"containers": specs}}


def _run(machine, kubelet, pods, hints=None):
    node = Node(machine, kubelet)
    answers = []
    for pod in pods:
        try:
            answers.append(node.admit(pod, hints))
        except Exception as exc:  # an error is an answer too
            answers.append(f"{type(exc).__name__}: {exc}")
    return answers, node.machine_state()


@settings(max_examples=examples(50, 300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    st.integers(6, 9),
    st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"]),
    st.sampled_from(["container", "pod"]),
    st.lists(st.lists(st.tuples(st.integers(256, 9000), st.integers(0, 400)), min_size=1, max_size=2),
             min_size=1, max_size=6),
)
def test_admissions_are_the_same_with_the_family_paths_forced(monkeypatch, n, policy, scope, pods):
    machine = synthetic_machine(n, 4 * GI, hugepages_2mi=256)
    kubelet = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy, "topologyManagerScope": scope,
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
               "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "16"}}
    manifests = [_pod(f"p{i}", containers) for i, containers in enumerate(pods)]
    want = _run(machine, kubelet, manifests)
    with monkeypatch.context() as patch:
        patch.setattr(hints_module, "FAMILY_MIN_NODES", 1)
        patch.setattr(fast_merge_module, "FAST_MERGE_MAX_NODES", 0)
        got = _run(machine, kubelet, manifests)
    assert got == want


@settings(max_examples=examples(100, 400), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_admissions_on_uneven_machines_with_prefer_closest_and_injected_hints_are_the_same(monkeypatch, data):
    """Random per-node memory, random distances with prefer-closest-numa-nodes on or off, and an
    injected CPU-shaped hint list: the family paths forced give today's answers and state."""
    n = data.draw(st.integers(6, 9), label="nodes")
    machine = synthetic_machine(n, 4 * GI, hugepages_2mi=256)
    for node in machine.topology:
        node.memory = data.draw(st.integers(2, 8), label="GiB") * GI
        node.distances = [10 if j == node.node_id else data.draw(st.sampled_from([11, 20, 32]), label="distance")
                          for j in range(n)]
    machine.memory_capacity = sum(node.memory for node in machine.topology)
    policy = data.draw(st.sampled_from(["best-effort", "restricted", "single-numa-node"]), label="policy")
    closest = data.draw(st.booleans(), label="prefer-closest")
    options = {"max-allowable-numa-nodes": "16"}
    if closest:
        options["prefer-closest-numa-nodes"] = "true"
    kubelet = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
               "topologyManagerPolicyOptions": options}
    masks = data.draw(st.lists(st.tuples(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True),
                                         st.booleans()), min_size=1, max_size=4), label="cpu hints")
    hints = {"c0": {"cpu": [(sorted(ids), preferred) for ids, preferred in masks]}}
    pods = data.draw(st.lists(st.tuples(st.integers(256, 12000), st.integers(0, 300)), min_size=1, max_size=5),
                     label="pods")
    manifests = [_pod(f"p{i}", [containers]) for i, containers in enumerate(pods)]
    want = _run(machine, kubelet, manifests, hints)
    with monkeypatch.context() as patch:
        patch.setattr(hints_module, "FAMILY_MIN_NODES", 1)
        patch.setattr(fast_merge_module, "FAST_MERGE_MAX_NODES", 0)
        got = _run(machine, kubelet, manifests, hints)
    assert got == want


def test_explicit_lists_on_a_large_machine_do_not_allocate_two_to_the_n():
    info = NUMAInfo(list(range(64)), {i: None for i in range(64)})
    cpu = [TopologyHint(0b01, True), TopologyHint(0b10, True), TopologyHint(0b11, False)]
    device = [TopologyHint(0b10, False), TopologyHint(None, False)]
    want = reference_merge_hints(info, [cpu, device], "best-effort", False)  # {0}: width 1 = B, the lowest
    assert fast_merge_hints(info, [cpu, device], "best-effort", False) == want == TopologyHint(0b01, False)


@pytest.mark.parametrize("policy", POLICIES)
def test_sixty_four_nodes_merge_is_fast(policy):
    gib = 1 << 30
    from state.types import MemoryTable, NUMANodeState

    state = {i: NUMANodeState(0, {"memory": MemoryTable(9 * gib, gib, 8 * gib, 0, 8 * gib)}, [i]) for i in range(64)}
    family = calculate_hints(state, {"memory": 12 * gib})
    lists = list(family.values())
    if policy == "single-numa-node":
        lists = filter_single_numa_hints(lists)
    info = NUMAInfo(list(range(64)), {i: None for i in range(64)})
    best = fast_merge_hints(info, lists, policy, False)
    assert best == (TopologyHint(0b11, True) if policy != "single-numa-node" else TopologyHint((1 << 64) - 1, False))


def test_prefer_closest_over_too_many_members_is_refused_cleanly():
    """Boundary case 2 (README): the closest of C(64, 5) preferred masks would need listing them."""
    from state.types import MemoryTable, NUMANodeState
    from topologymanager.errors import BoundedWorkError

    gib = 1 << 30
    state = {i: NUMANodeState(0, {"memory": MemoryTable(9 * gib, gib, 8 * gib, 0, 8 * gib)}, [i]) for i in range(64)}
    lists = list(calculate_hints(state, {"memory": 36 * gib}).values())
    info = NUMAInfo(list(range(64)), {i: [10 if i == j else 20 for j in range(64)] for i in range(64)})
    assert family_merge_hints(info, lists, "best-effort", False) == TopologyHint(0b11111, True)
    with pytest.raises(BoundedWorkError, match=r"kubelet would enumerate 2\^64 NUMA masks here"):
        family_merge_hints(info, lists, "best-effort", True)


def test_where_the_search_refuses_today_s_code_answers_up_to_24_nodes(monkeypatch):
    """With a tiny work budget every family query refuses; on 17 nodes the enumerating paths
    (which finish there) answer instead: the same admissions as today's code, and as the family."""
    import topologymanager.hint_family as family_module

    machine = synthetic_machine(17, 4 * GI, hugepages_2mi=256)
    kubelet = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "best-effort",
               "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
               "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "17"}}
    manifests = [_pod("a", [(6000, 0)]), _pod("b", [(3000, 300)]), _pod("c", [(9000, 100)])]
    hints = {"cpu": [TopologyHint(1 << i, True) for i in range(17)]}
    def run(patches):
        with monkeypatch.context() as patch:
            for module, name, value in patches:
                patch.setattr(module, name, value)
            node = Node(machine, kubelet)
            return [node.admit(p, {"c0": hints}) for p in manifests], node.machine_state()
    today = run([(hints_module, "FAMILY_MIN_NODES", 65), (fast_merge_module, "FAST_MERGE_MAX_NODES", 65)])
    assert run([(family_module, "DEFAULT_WORK_BUDGET", 3)]) == today
    assert run([]) == today


def test_the_reference_merge_lists_families_up_to_24_nodes_and_refuses_above():
    from state.types import MemoryTable, NUMANodeState
    from topologymanager.reference_merge import ReferenceRefusal

    gib = 1 << 30

    def lists(n):
        state = {i: NUMANodeState(0, {"memory": MemoryTable(9 * gib, gib, 8 * gib, 0, 8 * gib)}, [i]) for i in range(n)}
        return list(calculate_hints(state, {"memory": 12 * gib}).values())

    cpu = [TopologyHint(1 << 3, True), TopologyHint(0b1000_0001, False)]
    info = NUMAInfo(list(range(17)), {i: None for i in range(17)})
    want = reference_merge_hints(info, [cpu] + lists(17), "best-effort", False)
    assert want == fast_merge_hints(info, [cpu] + lists(17), "best-effort", False) == TopologyHint(0b1000_0001, False)
    info = NUMAInfo(list(range(25)), {i: None for i in range(25)})
    with pytest.raises(ReferenceRefusal, match=r"2\^25 NUMA masks"):
        reference_merge_hints(info, lists(25), "best-effort", False)
