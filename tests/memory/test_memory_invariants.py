"""Invariants of the memory Manager with the Static policy under random admit / remove / restart.

A hypothesis state machine drives the Manager directly (affinity store = the zero
hint, as with topology manager policy `none`) on random 1-4 node machines, and
after every step checks: memory is conserved per node and resource, NUMA groups
are consistent, the blocks add up to what is reserved, the state passes
validateState, and a restart from the checkpoint restores the same state.
"""
from __future__ import annotations

import shutil
import tempfile

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from tests.helpers.budget import examples

from kubeinputs.kubelet_config import MemoryReservation
from memorymanager.manager import new_manager
from memorymanager.policy import MemoryManagerError
from kubeinputs.quantity import Quantity
from tests.helpers.memory import GB, HP1G, HP2M, MB, MEM, PAGE_1G_KIB, PAGE_2M_KIB, FakeStore, ctr, machine, resources
from kubeinputs.pod import Pod
from state.state_mem import MemoryState

RESOURCES = (MEM, HP2M, HP1G)


@st.composite
def machines(draw):
    """(MachineInfo, {node: reserved memory bytes}) with every hugepage size listed on every node."""
    count = draw(st.integers(1, 4))
    nodes, reserved = [], {}
    for node_id in range(count):
        pages_2m = draw(st.integers(0, 512))
        pages_1g = draw(st.integers(0, 3))
        regular = draw(st.integers(1, 8)) * GB
        memory = regular + pages_2m * 2 * MB + pages_1g * GB
        nodes.append((node_id, memory, [(PAGE_2M_KIB, pages_2m), (PAGE_1G_KIB, pages_1g)]))
        reserved[node_id] = draw(st.sampled_from([0, 128 * MB, 256 * MB, 512 * MB]))
    if sum(reserved.values()) == 0:
        reserved[0] = 256 * MB
    return machine(*nodes), reserved


@st.composite
def container_specs(draw):
    """Requests of one Guaranteed container: memory, optionally hugepages."""
    spec = {"cpu": "1", MEM: f"{draw(st.integers(1, 48)) * 128}Mi"}
    if draw(st.booleans()):
        spec[HP2M] = f"{draw(st.integers(1, 64)) * 2}Mi"
    if draw(st.integers(0, 3)) == 0:
        spec[HP1G] = f"{draw(st.integers(1, 2))}Gi"
    return spec


@st.composite
def pod_shapes(draw):
    """[(kind, requests)] with kind in init / sidecar / app, at least one app container, 1-3 containers."""
    total = draw(st.integers(1, 3))
    kinds = draw(st.lists(st.sampled_from(["init", "sidecar"]), max_size=total - 1))
    kinds += ["app"] * (total - len(kinds))
    return [(kind, draw(container_specs())) for kind in kinds]


class MemoryManagerMachine(RuleBasedStateMachine):
    """The model: the set of admitted pods; everything else is read back from the Manager."""

    def __init__(self):
        super().__init__()
        self.state_dir = tempfile.mkdtemp(prefix="mm-invariants-")
        self.admitted: dict[str, Pod] = {}
        self.current: Pod | None = None
        self.counter = 0

    def teardown(self):
        shutil.rmtree(self.state_dir, ignore_errors=True)

    # ----- setup -----

    def _new_manager(self):
        reservations = [
            MemoryReservation(n, {MEM: Quantity.from_int(size, "BinarySI")}) for n, size in self.reserved.items() if size
        ]
        total = Quantity.from_int(sum(self.reserved.values()), "BinarySI")
        return new_manager("Static", self.machine_info, {MEM: total}, reservations, self.state_dir, FakeStore())

    def _active_pods(self):
        pods = list(self.admitted.values())
        if self.current is not None:
            pods.append(self.current)
        return pods

    @initialize(spec=machines())
    def start(self, spec):
        self.machine_info, self.reserved = spec
        self.manager = self._new_manager()
        self.manager.start(self._active_pods)

    # ----- operations -----

    @rule(shape=pod_shapes())
    def admit(self, shape):
        self.counter += 1
        uid = f"pod{self.counter}"
        inits, apps = [], []
        for index, (kind, spec) in enumerate(shape):
            c = ctr(f"c{index}", resources(spec), "Always" if kind == "sidecar" else None)
            (apps if kind == "app" else inits).append(c)
        pod = Pod(name=uid, uid=uid, init_containers=inits, containers=apps)
        self.current = pod
        try:
            for container in pod.all_containers():
                self.manager.allocate(pod, container)
        except MemoryManagerError:
            self.current = None  # rejected: not active; its partial blocks go at the next stale-state removal
            return
        self.current = None
        self.admitted[uid] = pod
        for container in pod.all_containers():
            self.manager.add_container(pod, container, f"{uid}/{container.name}")

    @precondition(lambda self: self.admitted)
    @rule(data=st.data(), whole_pod=st.booleans())
    def remove(self, data, whole_pod):
        uid = data.draw(st.sampled_from(sorted(self.admitted)))
        pod = self.admitted[uid]
        if whole_pod:
            names = [c.name for c in pod.all_containers()]
            del self.admitted[uid]
        else:
            names = [data.draw(st.sampled_from([c.name for c in pod.all_containers()]))]
        for name in names:
            self.manager.remove_container(f"{uid}/{name}")
        state = self.manager.state()
        before = (state.get_machine_state(), state.get_memory_assignments())
        for name in names:  # removing twice changes nothing
            self.manager.remove_container(f"{uid}/{name}")
        assert (state.get_machine_state(), state.get_memory_assignments()) == before

    @rule()
    def restart(self):
        state = self.manager.state()
        before = (state.get_machine_state(), state.get_memory_assignments())
        self.manager = self._new_manager()
        self.manager.start(self._active_pods)
        after = self.manager.state()
        assert (after.get_machine_state(), after.get_memory_assignments()) == before

    @rule(shape=pod_shapes())
    def hints(self, shape):
        pod = Pod(name="probe", uid="probe", containers=[ctr("c", resources(shape[0][1]))])
        self.manager.get_topology_hints(pod, pod.containers[0])

    # ----- invariants -----

    @invariant()
    def memory_is_conserved(self):
        for node_id, node in self.manager.state().get_machine_state().items():
            for resource, table in node.memory_map.items():
                assert table.free + table.reserved == table.allocatable, (node_id, resource, table)
                assert table.free >= 0 and table.reserved >= 0

    @invariant()
    def groups_are_consistent(self):
        machine_state = self.manager.state().get_machine_state()
        for node_id, node in machine_state.items():
            assert node_id in node.cells
            for other in node.cells:
                assert sorted(machine_state[other].cells) == sorted(node.cells), (node_id, other)
                assert machine_state[other].number_of_assignments == node.number_of_assignments
            if node.number_of_assignments == 0:
                assert node.cells == [node_id]

    @invariant()
    def blocks_add_up_to_the_reserved_memory(self):
        state = self.manager.state()
        reserved = {r: 0 for r in RESOURCES}
        for node in state.get_machine_state().values():
            for resource, table in node.memory_map.items():
                reserved[resource] += table.reserved
        blocks = {r: 0 for r in RESOURCES}
        assignments_per_node: dict[int, int] = {}
        for containers in state.get_memory_assignments().values():
            for container_blocks in containers.values():
                for block in container_blocks:
                    blocks[block.type] += block.size
                    for node_id in block.numa_affinity:
                        assignments_per_node[node_id] = assignments_per_node.get(node_id, 0) + 1
        assert blocks == reserved
        for node_id, node in state.get_machine_state().items():
            assert node.number_of_assignments == assignments_per_node.get(node_id, 0)

    @invariant()
    def state_passes_validate_state(self):
        state = self.manager.state()
        copy = MemoryState()
        copy.set_machine_state(state.get_machine_state())
        copy.set_memory_assignments(state.get_memory_assignments())
        self.manager.policy.validate_state(copy)
        assert copy.get_machine_state() == state.get_machine_state()

    @invariant()
    def restart_restores_the_same_state(self):
        state = self.manager.state()
        other = self._new_manager()
        other.start(self._active_pods)
        assert other.state().get_machine_state() == state.get_machine_state()
        assert other.state().get_memory_assignments() == state.get_memory_assignments()


MemoryManagerMachine.TestCase.settings = settings(max_examples=examples(50, 500), stateful_step_count=20, deadline=None)
TestMemoryManagerInvariants = MemoryManagerMachine.TestCase
