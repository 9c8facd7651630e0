"""Pods with many init containers (issue 18 item 5, issue 27): kubelet's two walks over the earlier
init containers keep kubelet's results while a visit with nothing to do costs no copy, and
nothing beyond those walks grows with the square of the containers.

* differential properties: `StaticPolicy._update_init_containers_memory_blocks` and
  `Manager.add_container` against kubelet's literal loops, on random blocks, IDs and sidecars;
* copy counts (not time): admitting or explaining a pod copies blocks O(n) times, not O(n^2).
"""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memorymanager
from memorymanager.container_map import ContainerMap
from memorymanager.explain.build import explain_pod
from memorymanager.manager import Manager
from memorymanager.node.api import read_pod
from memorymanager.policy_static import new_policy_static
from memorymanager.requests import is_restartable_init_container
from state.types import Block
from tests.helpers.memory import GB, HP1G, MEM, FakeStore, blk, ctr, gates, guaranteed, machine, pod_with_init

MACHINE = machine((0, 10 * GB, [(1 << 20, 5)]), (1, 10 * GB, [(1 << 20, 5)]))
RESERVED = {0: {MEM: GB}, 1: {MEM: GB}}
AFFINITIES = [[0], [1], [0, 1], [1, 0]]


def literal_update_init_blocks(state, pod, container, container_blocks) -> None:
    """kubelet's updateInitContainersMemoryBlocks, visit by visit (a copy and a store each)."""
    for container_block in container_blocks:
        remaining = container_block.size
        for init in pod.init_containers:
            if init.name == container.name or remaining == 0:
                break
            if is_restartable_init_container(init):
                continue
            init_blocks = state.get_memory_blocks(pod.uid, init.name)
            if not init_blocks:
                continue
            for block in init_blocks:
                if block.size == 0 or block.type != container_block.type:
                    continue
                if sorted(set(block.numa_affinity or [])) != sorted(set(container_block.numa_affinity or [])):
                    continue
                taken = min(block.size, remaining)
                block.size -= taken
                remaining -= taken
            state.set_memory_blocks(pod.uid, init.name, init_blocks)


def literal_add_container(manager, pod, container, container_id) -> None:
    """kubelet's AddContainer: release every earlier regular init container, present or not."""
    manager.container_map.add(pod.uid, container.name, container_id)
    for init in pod.init_containers:
        if init.name == container.name:
            break
        if is_restartable_init_container(init):
            continue
        manager.policy.remove_container(manager._started_state(), pod.uid, init.name)
        manager.container_map.remove_by_container_ref(pod.uid, init.name)


BLOCKS = st.lists(st.builds(lambda a, t, s: blk(list(a), t, s), st.sampled_from(AFFINITIES),
                            st.sampled_from([MEM, HP1G]), st.sampled_from([0, 1, GB, 2 * GB, 3 * GB])), max_size=3)


@st.composite
def init_pods(draw):
    """A pod of up to 8 init containers (some sidecars) and 2 app containers, the blocks some of its
    init containers hold, the container being placed and its blocks."""
    n = draw(st.integers(min_value=0, max_value=8))
    inits = [ctr(f"i{i}", guaranteed("1Gi"), "Always" if draw(st.booleans()) and i % 3 == 1 else None) for i in range(n)]
    pod = pod_with_init("pod", [ctr("a0", guaranteed("1Gi")), ctr("a1", guaranteed("1Gi"))], inits)
    held = {c.name: draw(BLOCKS) for c in inits if draw(st.booleans())}
    target = draw(st.sampled_from(pod.all_containers()))
    return pod, held, target, draw(BLOCKS.filter(bool))


def static_manager(held, ids=(), pod_level=None):
    policy = new_policy_static(MACHINE, RESERVED, FakeStore(), gates())
    manager = Manager(policy, None, gates())
    manager.start(lambda: [], ContainerMap({cid: ("pod", name) for cid, name in ids}))
    store = manager._started_state()
    for name, blocks in held.items():
        store.set_memory_blocks("pod", name, blocks)
    if pod_level is not None:
        store.set_pod_memory_blocks("pod", pod_level)
    return manager, store


@settings(max_examples=150, deadline=None)
@given(init_pods())
def test_the_init_block_walk_equals_kubelets(case):
    pod, held, target, blocks = case
    fast_manager, fast = static_manager(held)
    _, literal = static_manager(copy.deepcopy(held))
    fast_manager.policy._update_init_containers_memory_blocks(fast, pod, target, copy.deepcopy(blocks))
    literal_update_init_blocks(literal, pod, target, copy.deepcopy(blocks))
    assert fast.get_memory_assignments() == literal.get_memory_assignments()


@settings(max_examples=150, deadline=None)
@given(init_pods(), st.data())
def test_add_container_releases_what_kubelet_releases(case, data):
    pod, held, target, _ = case
    names = [c.name for c in pod.init_containers]
    ids = [(f"id-{name}", name) for name in names if data.draw(st.booleans())]
    pod_level = data.draw(st.sampled_from([None, [blk([0], MEM, 3 * GB)]]))
    fast_manager, fast = static_manager(held, ids, pod_level)
    literal_manager, literal = static_manager(copy.deepcopy(held), ids, copy.deepcopy(pod_level))
    fast_manager.add_container(pod, target, f"id-{target.name}")
    literal_add_container(literal_manager, pod, target, f"id-{target.name}")
    assert fast.get_memory_assignments() == literal.get_memory_assignments()
    assert fast.get_pod_memory_assignments() == literal.get_pod_memory_assignments()
    assert fast.get_machine_state() == literal.get_machine_state()
    assert fast_manager.container_map.items() == literal_manager.container_map.items()


# ----- copies grow linearly (counted, never timed) ---------------------------------------------------

STATIC = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def container(name):
    return {"name": name, "resources": {"limits": {"cpu": "1", "memory": "64Ki"}}}


def many(n, init):
    spec = {"initContainers": [container(f"i{i}") for i in range(n)], "containers": [container("app")]} if init \
        else {"containers": [container(f"c{i}") for i in range(n)]}
    return {"metadata": {"name": "big"}, "spec": spec}


@pytest.fixture
def copies(monkeypatch):
    """Counts the block copies the stores make (every copy of a block goes through clone_block)."""
    import state.types as types

    counted = {"n": 0}
    original = types.clone_block

    def counting(block):
        counted["n"] += 1
        return original(block)

    monkeypatch.setattr(types, "clone_block", counting)
    return counted


def copies_for(copies, run, n):
    copies["n"] = 0
    run(n)
    return copies["n"]


def test_admitting_many_init_containers_copies_linearly(copies):
    def admit(n):
        node = memorymanager.Node(memorymanager.synthetic_machine(2, 16 << 30), STATIC)
        assert node.admit(many(n, init=True)).admitted

    small, large = copies_for(copies, admit, 80), copies_for(copies, admit, 160)
    assert large < 2.5 * small, (small, large)  # kubelet's visits copied and stored every block: 4x


@pytest.mark.parametrize("init", [True, False])
def test_explaining_many_containers_copies_linearly(copies, init):
    def explain(n):
        node = memorymanager.Node(memorymanager.synthetic_machine(2, 16 << 30), STATIC)
        node.start()
        explain_pod(node.simulated_node, read_pod(many(n, init)))

    small, large = copies_for(copies, explain, 80), copies_for(copies, explain, 160)
    assert large < 2.5 * small, (small, large)  # every hint call copied the whole node's blocks: 4x
