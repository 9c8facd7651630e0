"""The memory Manager, translated from upstream memory_manager_test.go (plus restore/checkpoint paths)."""
from __future__ import annotations

import json
import os

import pytest

from memorymanager.container_map import ContainerMap
from kubeinputs.kubelet_config import MemoryReservation
from memorymanager.machine_state import are_machine_states_equal
from memorymanager.manager import Manager, new_manager
from memorymanager.policy import MemoryManagerError
from memorymanager.policy_none import NonePolicy
from memorymanager.policy_static import new_policy_static
from kubeinputs.quantity import Quantity
from memorymanager.reserved_memory import convert_reserved, get_system_reserved_memory, validate_reserved_memory
from tests.helpers.memory import (
    GB,
    HP1G,
    MB,
    MEM,
    PAGE_1G_KIB,
    REQ_GUARANTEED,
    FakeStore,
    assignments_equal,
    blk,
    ctr,
    gates,
    get_pod,
    guaranteed,
    hints_to_plain,
    machine,
    mt,
    ns,
    pod_with_init,
    q,
)

HP2M = "hugepages-2Mi"
TWO_NODES = machine((0, 0), (1, 0))
NOT_EQUAL = 'the total amount "{}" of type "{}" is not equal to the value "{}" determined by Node Allocatable feature'


def dec(n: int) -> Quantity:
    return Quantity.from_int(n, "DecimalSI")


def binq(n: int) -> Quantity:
    return Quantity.from_int(n, "BinarySI")


def return_machine_info():
    """upstream returnMachineInfo: two 10Gi nodes with five 1Gi pages each."""
    return machine((0, 10 * GB, [(PAGE_1G_KIB, 5)]), (1, 10 * GB, [(PAGE_1G_KIB, 5)]))


# ----- reserved memory ------------------------------------------------------------------------------

VALIDATE_CASES = [
    ("nothing set", {}, [], None),
    ("zero and zero", {MEM: dec(0)}, [MemoryReservation(0, {MEM: dec(0)})], None),
    ("allocatable unset, reserved set", {}, [MemoryReservation(0, {MEM: dec(12)})], NOT_EQUAL.format("12", MEM, "0")),
    ("allocatable set, reserved unset", {HP2M: dec(5)}, [], NOT_EQUAL.format("0", HP2M, "5")),
    ("not equal", {MEM: dec(5)}, [MemoryReservation(0, {MEM: dec(12)})], NOT_EQUAL.format("12", MEM, "5")),
    (
        "unknown NUMA node",
        {MEM: dec(17)},
        [MemoryReservation(0, {MEM: dec(12)}), MemoryReservation(2, {MEM: dec(5)})],
        "the reserved memory configuration references a NUMA node 2 that does not exist on this machine",
    ),
    (
        "totals equal",
        {MEM: dec(17), HP2M: dec(77), HP1G: dec(13)},
        [MemoryReservation(0, {MEM: dec(12), HP2M: dec(70), HP1G: dec(13)}), MemoryReservation(1, {MEM: dec(5), HP2M: dec(7)})],
        None,
    ),
    (
        "hugepages-2Mi total differs",
        {MEM: dec(17), HP2M: dec(14), HP1G: dec(13)},
        [MemoryReservation(0, {MEM: dec(12), HP2M: dec(70), HP1G: dec(13)}), MemoryReservation(1, {MEM: dec(5), HP2M: dec(7)})],
        NOT_EQUAL.format("77", HP2M, "14"),
    ),
]


@pytest.mark.parametrize("name, allocatable, reserved, error", VALIDATE_CASES, ids=[c[0] for c in VALIDATE_CASES])
def test_validate_reserved_memory(name, allocatable, reserved, error):
    if error is None:
        validate_reserved_memory(TWO_NODES, allocatable, reserved)
    else:
        with pytest.raises(MemoryManagerError) as err:
            validate_reserved_memory(TWO_NODES, allocatable, reserved)
        assert str(err.value) == error


@pytest.mark.parametrize(
    "reserved, expected",
    [
        ([], {0: {}, 1: {}}),
        ([MemoryReservation(0, {MEM: dec(12), HP2M: dec(70), HP1G: dec(13)})], {0: {MEM: 12, HP2M: 70, HP1G: 13}, 1: {}}),
        (
            [MemoryReservation(0, {MEM: dec(12), HP2M: dec(70), HP1G: dec(13)}), MemoryReservation(1, {MEM: dec(5), HP2M: dec(7)})],
            {0: {MEM: 12, HP2M: 70, HP1G: 13}, 1: {MEM: 5, HP2M: 7}},
        ),
    ],
)
def test_convert_reserved(reserved, expected):
    assert convert_reserved(TWO_NODES, reserved) == expected


def test_convert_reserved_non_integral_quantity():
    with pytest.raises(MemoryManagerError) as err:
        convert_reserved(TWO_NODES, [MemoryReservation(0, {MEM: q("1500m")})])
    assert str(err.value) == "could not covert a variable of type Quantity to int64"


def test_get_system_reserved_memory():
    mi = return_machine_info()
    assert get_system_reserved_memory(mi, {}, []) == {0: {}, 1: {}}
    with pytest.raises(MemoryManagerError) as err:
        get_system_reserved_memory(mi, {}, [MemoryReservation(0, {MEM: binq(GB)})])
    assert str(err.value) == NOT_EQUAL.format("1Gi", MEM, "0")
    got = get_system_reserved_memory(
        mi, {MEM: binq(2 * GB)}, [MemoryReservation(0, {MEM: binq(GB)}), MemoryReservation(1, {MEM: binq(GB)})]
    )
    assert got == {0: {MEM: GB}, 1: {MEM: GB}}


def test_reserved_total_takes_the_format_of_the_quantities():
    """1Gi + 1Gi prints as "2Gi"; a mismatching total keeps kubelet's Quantity String()."""
    with pytest.raises(MemoryManagerError) as err:
        validate_reserved_memory(
            TWO_NODES, {MEM: q("100Mi")}, [MemoryReservation(0, {MEM: q("1Gi")}), MemoryReservation(1, {MEM: q("1Gi")})]
        )
    assert str(err.value) == NOT_EQUAL.format("2Gi", MEM, "100Mi")


# ----- NewManager -----------------------------------------------------------------------------------

def make(policy_name, allocatable=None, reserved=(), options=None, feature_gates=None, state_dir=None):
    return new_manager(
        policy_name, return_machine_info(), allocatable or {}, list(reserved), state_dir, FakeStore(),
        policy_options=options, feature_gates=feature_gates,
    )


def test_new_manager_static_stores_per_node_reservations():
    mgr = make("Static", {MEM: binq(2 * GB)}, [MemoryReservation(0, {MEM: binq(GB)}), MemoryReservation(1, {MEM: binq(GB)})])
    assert mgr.policy_name() == "Static"
    assert mgr.policy.system_reserved == {0: {MEM: GB}, 1: {MEM: GB}}


@pytest.mark.parametrize(
    "policy_name, allocatable, reserved, options, message",
    [
        ("Static", {MEM: binq(2 * GB)}, [MemoryReservation(0, {MEM: binq(GB)}), MemoryReservation(1, {MEM: binq(2 * GB)})],
         None, NOT_EQUAL.format("3Gi", MEM, "2Gi")),
        ("Static", {}, [], None, "[memorymanager] you should specify the system reserved memory"),
        ("fake", {}, [], None, 'unknown policy: "fake"'),
        ("static", {}, [], None, 'unknown policy: "static"'),
        ("None", {}, [], {"memory-drift-tolerance": "off"},
         'policy "None" does not support policy options map[memory-drift-tolerance:off]'),
        ("BestEffort", {}, [], {"memory-drift-tolerance": "off"},
         'policy "BestEffort" does not support policy options map[memory-drift-tolerance:off]'),
        ("BestEffort", {}, [], None, 'policy "BestEffort" is not available for platform "linux"'),
        ("Static", {MEM: binq(GB)}, [MemoryReservation(3, {MEM: binq(GB)})], None,
         "the reserved memory configuration references a NUMA node 3 that does not exist on this machine"),
    ],
)
def test_new_manager_errors(policy_name, allocatable, reserved, options, message):
    with pytest.raises(MemoryManagerError) as err:
        make(policy_name, allocatable, reserved, options)
    assert str(err.value) == message


def test_new_manager_none_policy():
    mgr = make("None")
    assert isinstance(mgr.policy, NonePolicy)


# ----- manager operations over an in-memory state ----------------------------------------------------

R1G = {0: {MEM: GB}, 1: {MEM: GB}}


def started_manager(policy, machine_state=None, assignments=None, active=None, containers=None) -> Manager:
    mgr = Manager(policy, None, gates())
    active_pods = active if active is not None else []
    mgr.start(lambda: active_pods, ContainerMap(containers or {}))
    store = mgr._started_state()  # the writable store behind the read-only state()
    if machine_state is not None:
        store.set_machine_state(machine_state)
    if assignments is not None:
        store.set_memory_assignments(assignments)
    return mgr


def static_policy(store=None):
    return new_policy_static(return_machine_info(), R1G, store or FakeStore(), gates())


def node_state(mem_free, mem_res, hp_free, hp_res, cells, n):
    return ns({MEM: mt(9 * GB, mem_free, mem_res, GB, 10 * GB), HP1G: mt(5 * GB, hp_free, hp_res, 0, 5 * GB)}, cells, n)


FRESH = {0: node_state(9 * GB, 0, 5 * GB, 0, [0], 0), 1: node_state(9 * GB, 0, 5 * GB, 0, [1], 0)}
TWO_CONTAINERS = {
    "fakePod1": {
        "fakeContainer1": [blk([0], MEM, GB), blk([0], HP1G, GB)],
        "fakeContainer2": [blk([0], MEM, GB), blk([0], HP1G, GB)],
    }
}
TWO_CONTAINERS_STATE = {0: node_state(7 * GB, 2 * GB, 3 * GB, 2 * GB, [0], 4), 1: node_state(9 * GB, 0, 5 * GB, 0, [1], 0)}


class RefusingPolicy(NonePolicy):
    """upstream mockPolicy: every call fails, RemoveContainer does nothing."""

    def name(self):
        return "mock"

    def allocate(self, state, pod, container):
        raise MemoryManagerError("fake reg error")


def test_state_is_a_read_only_live_view():
    mgr = started_manager(static_policy(), TWO_CONTAINERS_STATE, TWO_CONTAINERS)
    view = mgr.state()
    assert not hasattr(view, "set_machine_state") and not hasattr(view, "delete")
    assert assignments_equal(view.get_memory_assignments(), TWO_CONTAINERS)
    mgr.remove_stale_state()
    assert view.get_memory_assignments() == {}


def test_remove_stale_state_with_a_policy_that_does_not_remove():
    mgr = started_manager(RefusingPolicy(), TWO_CONTAINERS_STATE, TWO_CONTAINERS)
    mgr.remove_stale_state()
    assert assignments_equal(mgr.state().get_memory_assignments(), TWO_CONTAINERS)
    assert are_machine_states_equal(mgr.state().get_machine_state(), TWO_CONTAINERS_STATE)


def test_remove_stale_state_drops_inactive_pods():
    mgr = started_manager(static_policy(), TWO_CONTAINERS_STATE, TWO_CONTAINERS)
    mgr.remove_stale_state()
    assert mgr.state().get_memory_assignments() == {}
    assert are_machine_states_equal(mgr.state().get_machine_state(), FRESH)


def test_remove_stale_state_drops_inactive_multi_numa_pods():
    assignments = {
        "fakePod1": {
            "fakeContainer1": [blk([0, 1], MEM, 12 * GB), blk([0, 1], HP1G, GB)],
            "fakeContainer2": [blk([0, 1], MEM, GB), blk([0, 1], HP1G, GB)],
        }
    }
    ms = {0: node_state(0, 9 * GB, 4 * GB, GB, [0, 1], 4), 1: node_state(5 * GB, 4 * GB, 4 * GB, GB, [0, 1], 4)}
    mgr = started_manager(static_policy(), ms, assignments)
    mgr.remove_stale_state()
    assert mgr.state().get_memory_assignments() == {}
    assert mgr.state().get_machine_state() == FRESH


def test_remove_stale_state_keeps_active_pods_and_forgets_inactive_container_ids():
    pod = get_pod("fakePod1", "fakeContainer1", REQ_GUARANTEED)
    assignments = {"fakePod1": {"fakeContainer1": [blk([0], MEM, GB), blk([0], HP1G, GB)]}}
    ms = {0: node_state(8 * GB, GB, 4 * GB, GB, [0], 2), 1: node_state(9 * GB, 0, 5 * GB, 0, [1], 0)}
    mgr = started_manager(static_policy(), ms, assignments, active=[pod],
                          containers={"id1": ("fakePod1", "fakeContainer1"), "gone": ("oldPod", "c")})
    mgr.remove_stale_state()
    assert assignments_equal(mgr.state().get_memory_assignments(), assignments)
    assert [cid for cid, _ in mgr.container_map.items()] == ["id1"]


def test_allocate_and_add_container_on_numa_0():
    pod = get_pod("fakePod1", "fakeContainer1", REQ_GUARANTEED)
    mgr = started_manager(static_policy(), FRESH, {}, active=[pod])
    mgr.allocate(pod, pod.containers[0])
    mgr.add_container(pod, pod.containers[0], "fakeID1")
    assert mgr.container_map.get_container_ref("fakeID1") == ("fakePod1", "fakeContainer1")
    expected = {0: node_state(8 * GB, GB, 4 * GB, GB, [0], 2), 1: node_state(9 * GB, 0, 5 * GB, 0, [1], 0)}
    assert are_machine_states_equal(mgr.state().get_machine_state(), expected)
    assert mgr.get_memory_numa_nodes(pod, pod.containers[0]) == [0]
    assert mgr.get_memory("fakePod1", "fakeContainer1") is not None


def test_none_policy_never_errors():
    pod = get_pod("fakePod1", "fakeContainer1", REQ_GUARANTEED)
    mgr = started_manager(NonePolicy(), {}, {}, active=[pod])
    mgr.allocate(pod, pod.containers[0])
    mgr.add_container(pod, pod.containers[0], "fakeID1")
    assert mgr.get_topology_hints(pod, pod.containers[0]) is None
    assert mgr.get_pod_topology_hints(pod) is None
    assert mgr.get_allocatable_memory() == []
    assert mgr.state().get_machine_state() == {}
    assert mgr.get_memory_numa_nodes(pod, pod.containers[0]) is None


def test_allocate_error_of_the_policy_is_returned():
    pod = get_pod("fakePod1", "fakeContainer1", REQ_GUARANTEED)
    mgr = started_manager(RefusingPolicy(), FRESH, {}, active=[pod])
    with pytest.raises(MemoryManagerError, match="fake reg error"):
        mgr.allocate(pod, pod.containers[0])
    assert mgr.state().get_machine_state() == FRESH


BIG_POD = get_pod("fakePod1", "fakeContainer1", guaranteed("12Gi", hp1g="4Gi"))


def test_allocate_spans_two_nodes_when_one_is_too_small():
    mgr = started_manager(static_policy(), FRESH, {}, active=[BIG_POD])
    mgr.allocate(BIG_POD, BIG_POD.containers[0])
    got = mgr.state().get_machine_state()
    assert got[0] == node_state(0, 9 * GB, GB, 4 * GB, [0, 1], 2)
    assert got[1] == node_state(6 * GB, 3 * GB, 5 * GB, 0, [0, 1], 2)
    assert assignments_equal(
        mgr.state().get_memory_assignments(),
        {"fakePod1": {"fakeContainer1": [blk([0, 1], MEM, 12 * GB), blk([0, 1], HP1G, 4 * GB)]}},
    )


def test_allocate_fails_when_node_0_holds_a_single_numa_pod():
    small = get_pod("fakePod2", "fakeContainer2", REQ_GUARANTEED)
    ms = {0: node_state(8 * GB, GB, 4 * GB, GB, [0], 2), 1: node_state(9 * GB, 0, 5 * GB, 0, [1], 0)}
    assignments = {"fakePod2": {"fakeContainer2": [blk([0], MEM, GB), blk([0], HP1G, GB)]}}
    mgr = started_manager(static_policy(), ms, assignments, active=[small, BIG_POD])
    with pytest.raises(MemoryManagerError) as err:
        mgr.allocate(BIG_POD, BIG_POD.containers[0])
    assert str(err.value) == (
        "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available"
    )


def test_remove_container_frees_only_its_memory():
    containers = {"fakeID1": ("fakePod1", "fakeContainer1"), "fakeID2": ("fakePod1", "fakeContainer2")}
    mgr = started_manager(static_policy(), TWO_CONTAINERS_STATE, TWO_CONTAINERS, containers=containers)
    mgr.remove_container("fakeID2")
    assert assignments_equal(
        mgr.state().get_memory_assignments(),
        {"fakePod1": {"fakeContainer1": [blk([0], MEM, GB), blk([0], HP1G, GB)]}},
    )
    expected = {0: node_state(8 * GB, GB, 4 * GB, GB, [0], 2), 1: node_state(9 * GB, 0, 5 * GB, 0, [1], 0)}
    assert are_machine_states_equal(mgr.state().get_machine_state(), expected)
    assert "fakeID2" not in mgr.container_map


def test_remove_big_group_member_keeps_the_group():
    assignments = {
        "fakePod1": {
            "fakeContainer1": [blk([0, 1], MEM, 12 * GB), blk([0, 1], HP1G, GB)],
            "fakeContainer2": [blk([0, 1], MEM, GB), blk([0, 1], HP1G, GB)],
        }
    }
    ms = {0: node_state(0, 9 * GB, 4 * GB, GB, [0, 1], 4), 1: node_state(5 * GB, 4 * GB, 4 * GB, GB, [0, 1], 4)}
    containers = {"fakeID1": ("fakePod1", "fakeContainer1"), "fakeID2": ("fakePod1", "fakeContainer2")}
    mgr = started_manager(static_policy(), ms, assignments, containers=containers)
    mgr.remove_container("fakeID1")
    got = mgr.state().get_machine_state()
    assert got[0].cells == [0, 1] and got[1].cells == [0, 1]
    assert got[0].number_of_assignments == 2 and got[1].number_of_assignments == 2
    free = got[0].memory_map[MEM].free + got[1].memory_map[MEM].free
    assert free == 18 * GB - GB


def test_remove_unknown_container_id_is_not_an_error():
    mgr = started_manager(static_policy(), TWO_CONTAINERS_STATE, TWO_CONTAINERS,
                          containers={"fakeID1": ("fakePod1", "fakeContainer1")})
    mgr.remove_container("fakeID3")
    assert assignments_equal(mgr.state().get_memory_assignments(), TWO_CONTAINERS)
    assert mgr.state().get_machine_state() == TWO_CONTAINERS_STATE


def test_get_topology_hints_drops_stale_state_first():
    pod = get_pod("fakePod1", "fakeContainer1", REQ_GUARANTEED)
    mgr = started_manager(static_policy(), TWO_CONTAINERS_STATE, TWO_CONTAINERS, active=[])
    got = mgr.get_topology_hints(pod, pod.containers[0])
    both = [([0], True), ([1], True), ([0, 1], False)]
    assert hints_to_plain(got) == {MEM: both, HP1G: both}
    assert mgr.state().get_memory_assignments() == {}


def test_add_container_releases_finished_init_containers_never_sidecars():
    init = ctr("init", guaranteed("4Gi", hp1g="2Gi"))
    sidecar = ctr("sidecar", guaranteed("1Gi"), "Always")
    app = ctr("app", guaranteed("1Gi", hp1g="1Gi"))
    pod = pod_with_init("pod", [app], [init, sidecar])
    mgr = started_manager(static_policy(), FRESH, {}, active=[pod])
    for c in pod.all_containers():
        mgr.allocate(pod, c)
    for c in pod.all_containers():
        mgr.add_container(pod, c, f"pod/{c.name}")
    entries = mgr.state().get_memory_assignments()["pod"]
    assert sorted(entries) == ["app", "sidecar"]
    node0 = mgr.state().get_machine_state()[0]
    # init's residue (4Gi - 1Gi sidecar - 1Gi app memory, 2Gi - 1Gi hugepages) is freed
    assert node0.memory_map[MEM].reserved == 2 * GB
    assert node0.memory_map[HP1G].reserved == GB
    assert node0.number_of_assignments == 3


def test_init_container_residue_is_freed_by_add_container():
    """upstream: init 4Gi+4Gi hugepages, app 1Gi+3Gi -> after AddContainer(app) 2 assignments left."""
    init = ctr("init", guaranteed("4Gi", hp1g="4Gi"))
    app = ctr("app", guaranteed("1Gi", hp1g="3Gi"))
    pod = pod_with_init("pod", [app], [init])
    mgr = started_manager(static_policy(), FRESH, {}, active=[pod])
    for c in pod.all_containers():
        mgr.allocate(pod, c)
    node0 = mgr.state().get_machine_state()[0]
    assert node0.memory_map[MEM].reserved == 4 * GB and node0.number_of_assignments == 4
    for c in pod.all_containers():
        mgr.add_container(pod, c, c.name)
    node0 = mgr.state().get_machine_state()[0]
    assert node0.memory_map[MEM].reserved == GB and node0.memory_map[HP1G].reserved == 3 * GB
    assert node0.number_of_assignments == 2
    assert list(mgr.state().get_memory_assignments()["pod"]) == ["app"]


def test_allocatable_memory_is_cached_at_start():
    mgr = started_manager(static_policy())
    first = mgr.get_allocatable_memory()
    assert {(tuple(b.numa_affinity), b.type, b.size) for b in first} == {
        ((0,), MEM, 4 * GB), ((0,), HP1G, 5 * GB), ((1,), MEM, 4 * GB), ((1,), HP1G, 5 * GB)
    }  # 10Gi - 1Gi reserved - 5Gi of hugepages
    pod = get_pod("p", "c", REQ_GUARANTEED)
    mgr._active_pods = lambda: [pod]
    mgr.allocate(pod, pod.containers[0])
    assert mgr.get_allocatable_memory() == first


def test_operations_before_start_are_a_clear_error():
    mgr = Manager(static_policy(), None, gates())
    with pytest.raises(MemoryManagerError, match="not started"):
        mgr.remove_container("x")


# ----- restore from the checkpoint ------------------------------------------------------------------

RESERVATION = dict(
    allocatable={MEM: binq(2 * GB)}, reserved=[MemoryReservation(0, {MEM: binq(GB)}), MemoryReservation(1, {MEM: binq(GB)})]
)


def test_checkpoint_restore_and_stale_state(tmp_path):
    pod = get_pod("pod1", "c1", REQ_GUARANTEED)
    mgr = make("Static", state_dir=str(tmp_path), **RESERVATION)
    mgr.start(lambda: [pod])
    mgr.allocate(pod, pod.containers[0])
    mgr.add_container(pod, pod.containers[0], "pod1/c1")
    assert os.path.exists(tmp_path / "memory_manager_state")
    saved_state = mgr.state().get_machine_state()

    again = make("Static", state_dir=str(tmp_path), **RESERVATION)
    again.start(lambda: [pod])
    assert again.state().get_machine_state() == saved_state
    assert hints_to_plain(again.get_topology_hints(pod, pod.containers[0])) == {MEM: [([0], True)], HP1G: [([0], True)]}

    # a third start whose active pods do not include pod1 drops it at the first hint call
    third = make("Static", state_dir=str(tmp_path), **RESERVATION)
    third.start(lambda: [])
    third.get_topology_hints(pod, pod.containers[0])
    assert third.state().get_memory_assignments() == {}


def test_restart_with_another_policy_is_refused(tmp_path):
    make("None", state_dir=str(tmp_path)).start(lambda: [])
    data = json.loads((tmp_path / "memory_manager_state").read_text())
    assert data["policyName"] == "None" and data["machineState"] == {}
    mgr = make("Static", state_dir=str(tmp_path), **RESERVATION)
    with pytest.raises(Exception) as err:
        mgr.start(lambda: [])
    assert 'configured policy "Static" differs from state checkpoint policy "None"' in str(err.value)


def test_restart_with_changed_reservation_is_refused(tmp_path):
    pod = get_pod("pod1", "c1", REQ_GUARANTEED)
    mgr = make("Static", state_dir=str(tmp_path), **RESERVATION)
    mgr.start(lambda: [pod])
    mgr.allocate(pod, pod.containers[0])
    other = make("Static", {MEM: binq(4 * GB)}, [MemoryReservation(0, {MEM: binq(2 * GB)}), MemoryReservation(1, {MEM: binq(2 * GB)})],
                 state_dir=str(tmp_path))
    with pytest.raises(MemoryManagerError) as err:
        other.start(lambda: [pod])
    assert str(err.value) == "[memorymanager] the expected machine state is different from the real one"


def test_pod_level_allocation_survives_a_restart(tmp_path):
    """[PLRM] pod-level and container blocks are restored; pod hints are regenerated as one
    preferred hint on the original node; AllocatePod again changes nothing."""
    from kubeinputs.pod import Pod
    from tests.helpers.memory import hint, resources

    plrm = gates(PodLevelResourceManagers=True)
    pod = Pod(
        name="pod1", uid="pod1",
        containers=[ctr("a", resources({"cpu": "1", MEM: "512Mi"})), ctr("b", resources({"cpu": "1"}))],
        resources=resources({"cpu": "3", MEM: "1Gi"}),
    )

    def manager():
        return new_manager("Static", return_machine_info(), RESERVATION["allocatable"], RESERVATION["reserved"],
                           str(tmp_path), FakeStore(hint([1], True)), feature_gates=plrm)

    first = manager()
    first.start(lambda: [pod])
    first.allocate_pod(pod)
    assert [(b.numa_affinity, b.size) for b in first.get_pod_memory("pod1")] == [([1], GB)]
    assert first.get_memory("pod1", "b")[0].size == 512 * MB
    saved = (first.state().get_machine_state(), first.state().get_memory_assignments())

    second = manager()
    second.start(lambda: [pod])
    assert (second.state().get_machine_state(), second.state().get_memory_assignments()) == saved
    assert hints_to_plain(second.get_pod_topology_hints(pod)) == {MEM: [([1], True)]}
    second.allocate_pod(pod)
    assert (second.state().get_machine_state(), second.state().get_memory_assignments()) == saved
