"""Device allocation: upstream's TestTopologyAlignedAllocation table, kubelet's errors, init-container
re-use, release when the pod goes away, and the device manager under the topology manager."""
from __future__ import annotations

import pytest

from devicemanager.allocation import devices_to_allocate, filter_by_affinity
from devicemanager.errors import DeviceManagerError
from devicemanager.manager import new_manager
from kubeinputs.synthetic_machine import synthetic_machine
from topologymanager.hint import TopologyHint
from topologymanager.manager import new_manager as new_topology_manager

from tests.devicemanager.helpers import FixedAffinity, N, P, container, numa_device, pod, single, state_with

R = "example.com/dev"
GPU = "nvidia.com/gpu"


def _multi(prefix_nodes):
    return [numa_device(f"Dev{i + 1}", n) for i, n in enumerate(prefix_nodes)]


def _numbered(start, end, node):
    return [numa_device(f"Dev{i}", node) for i in range(start, end)]


# (description, request, devices, hint, expected devices per NUMA node)
ALIGNED = [
    ("Single Request, no alignment", 1, [numa_device("Dev1"), numa_device("Dev2")], P(0, 1), {}),
    ("Request for 1, partial alignment", 1, [numa_device("Dev1"), numa_device("Dev2", 1)], P(1), {1: 1}),
    ("Single Request, socket 0", 1, _multi([0, 1]), P(0), {0: 1}),
    ("Single Request, socket 1", 1, _multi([0, 1]), P(1), {1: 1}),
    ("Request for 2, socket 0", 2, _multi([0, 1, 0, 1]), P(0), {0: 2}),
    ("Request for 2, socket 1", 2, _multi([0, 1, 0, 1]), P(1), {1: 2}),
    ("Request for 4, unsatisfiable, prefer socket 0", 4, _multi([0, 1, 0, 1, 0, 1]), P(0), {0: 3, 1: 1}),
    ("Request for 4, unsatisfiable, prefer socket 1", 4, _multi([0, 1, 0, 1, 0, 1]), P(1), {0: 1, 1: 3}),
    ("Request for 4, multisocket", 4, _multi([0, 1, 2, 3, 0, 1, 2, 3]), P(1, 3), {1: 2, 3: 2}),
    # upstream's five cases with a plugin preference, as a plugin without GetPreferredAllocation sees them:
    # the two 100 + 100 cases (and the two 3 + 97 cases) differ only in the plugin's answer
    ("Request for 5, socket 0, 100 devices per socket, no plugin preference", 5,
     _numbered(0, 100, 0) + _numbered(100, 200, 1), P(0), {0: 5}),
    ("Request for 5, socket 1, all 100 devices on socket 1, no plugin preference", 5, _numbered(0, 100, 1), P(1),
     {1: 5}),
    ("Request for 5, multisocket, 3 devices on socket 0, no plugin preference", 5,
     _numbered(0, 3, 0) + _numbered(3, 100, 1), P(0), {0: 3, 1: 2}),
]


@pytest.mark.parametrize("description,request_,devices,hint,alignment", ALIGNED, ids=[c[0] for c in ALIGNED])
def test_topology_aligned_allocation(description, request_, devices, hint, alignment):
    state = state_with({R: devices})
    picked = devices_to_allocate(state, "podUID", "containerName", R, request_, set(), hint)
    assert len(picked) == request_ == len(set(picked))
    got: dict[int, int] = {}
    if state.plugins.has_topology_alignment(R):
        for device_id in picked:
            nodes = state.plugins.device(R, device_id).numa_nodes
            if nodes:
                got[nodes[0]] = got.get(nodes[0], 0) + 1
    assert got == alignment
    assert state.allocated[R] == set(picked)


def test_filter_by_affinity_splits_by_node_and_topology():
    state = state_with({R: [numa_device("a", 0), numa_device("b", 1), numa_device("c"), numa_device("d", 1, 2)]})
    aligned, unaligned, none = filter_by_affinity(state, R, P(0, 2), {"a", "b", "c", "d"})
    assert (aligned, unaligned, none) == ({"a", "d"}, {"b"}, {"c"})
    assert filter_by_affinity(state, R, TopologyHint(), {"a", "b"}) == (set(), set(), {"a", "b"})


# upstream's TestFilterByAffinity: dev2 sits on nodes 1 and 2, the affinity is node 2
FILTER_DEVICES = [numa_device("dev1", 1), numa_device("dev2", 1, 2), numa_device("dev3", 2), numa_device("dev4", 2),
                  numa_device("dev5")]
FILTER = [
    ("a device on two nodes is aligned when one of them is in the affinity", {"dev1", "dev2"},
     ({"dev2"}, {"dev1"}, set())),
    ("every device touching node 2 is aligned", {"dev1", "dev2", "dev3", "dev4"},
     ({"dev2", "dev3", "dev4"}, {"dev1"}, set())),
]


@pytest.mark.parametrize("description,available,expected", FILTER, ids=[c[0] for c in FILTER])
def test_filter_by_affinity_table(description, available, expected):
    state = state_with({R: FILTER_DEVICES})
    assert filter_by_affinity(state, R, P(2), available) == expected


# upstream's TestGetPreferredAllocationParameters, without the plugin: the devices kubelet has picked before it
# would ask a plugin for a preference (re-usable devices, then all aligned ones when they are too few) are in
# the answer, and every device of the answer is one kubelet would have offered. Dev0-Dev3 sit on node 0; from
# Dev4 on, node 0 in the single-socket cases and node 1 in the multisocket ones.
PREFERENCE_INPUTS = [
    ("Request for 1, socket 0, 0 already allocated, 0 reusable", 1, 4, 4, set(), set(),
     set(), {"Dev0", "Dev1", "Dev2", "Dev3"}, ["Dev0"]),
    ("Request for 4, socket 0, 2 already allocated, 2 reusable", 4, 8, 8, {"Dev0", "Dev5"}, {"Dev0", "Dev5"},
     {"Dev0", "Dev5"}, {f"Dev{i}" for i in range(8)}, ["Dev0", "Dev5", "Dev1", "Dev2"]),
    ("Request for 4, socket 0, 4 already allocated, 2 reusable", 4, 8, 8, {"Dev0", "Dev5", "Dev4", "Dev1"},
     {"Dev0", "Dev5"}, {"Dev0", "Dev5"}, {"Dev0", "Dev2", "Dev3", "Dev5", "Dev6", "Dev7"},
     ["Dev0", "Dev5", "Dev2", "Dev3"]),
    ("Request for 6, multisocket, 2 already allocated, 2 reusable", 6, 8, 4, {"Dev1", "Dev6"}, {"Dev1", "Dev6"},
     {"Dev0", "Dev1", "Dev2", "Dev3", "Dev6"}, {f"Dev{i}" for i in range(8)},
     ["Dev1", "Dev6", "Dev0", "Dev2", "Dev3", "Dev4"]),
    ("Request for 6, multisocket, 4 already allocated, 2 reusable", 6, 8, 4, {"Dev0", "Dev1", "Dev6", "Dev7"},
     {"Dev1", "Dev6"}, {"Dev1", "Dev2", "Dev3", "Dev6"}, {"Dev1", "Dev2", "Dev3", "Dev4", "Dev5", "Dev6"},
     ["Dev1", "Dev6", "Dev2", "Dev3", "Dev4", "Dev5"]),
]


@pytest.mark.parametrize("description,request_,count,on_node0,in_use,reusable,must_include,offered,picked",
                         PREFERENCE_INPUTS, ids=[c[0] for c in PREFERENCE_INPUTS])
def test_devices_picked_before_a_plugin_preference(description, request_, count, on_node0, in_use, reusable,
                                                   must_include, offered, picked):
    state = state_with({R: [numa_device(f"Dev{i}", 0 if i < on_node0 else 1) for i in range(count)]})
    state.allocated = {R: set(in_use)}
    got = devices_to_allocate(state, "podUID", "containerName", R, request_, set(reusable), P(0))
    assert len(got) == request_ and must_include <= set(got) <= offered
    assert got == picked  # the plugin's declaration order within each group


def test_picks_follow_the_plugins_order_within_a_group():
    state = state_with({R: [numa_device("z", 0), numa_device("y", 1), numa_device("x", 0)]})
    assert devices_to_allocate(state, "p", "c", R, 2, set(), P(0)) == ["z", "x"]


ERRORS = [
    ("unhealthy only", {R: [numa_device("a", 0, healthy=False)]}, {}, 1,
     "no healthy devices present; cannot allocate unhealthy devices example.com/dev"),
    ("too few free", {R: [numa_device("a", 0), numa_device("b", 1), numa_device("c", 1)]},
     {"other": {"x": {R: ["a"]}}}, 3, "requested number of devices unavailable for example.com/dev. Requested: 3, Available: 2"),
    ("request changed", {R: [numa_device("a", 0), numa_device("b", 1)]}, {"p": {"c": {R: ["a"]}}}, 2,
     'pod "p" container "c" changed request for resource "example.com/dev" from 1 to 2'),
]


@pytest.mark.parametrize("description,devices,held,request_,message", ERRORS, ids=[c[0] for c in ERRORS])
def test_allocation_errors(description, devices, held, request_, message):
    state = state_with(devices, held)
    with pytest.raises(DeviceManagerError) as err:
        devices_to_allocate(state, "p", "c", R, request_, set(), P(0))
    assert str(err.value) == message


# upstream's TestPodContainerDeviceToAllocate: containers holding devices from before, one resource
# registered without a healthy device, one not registered, one whose held device is gone from the healthy set
R1, R2, R3 = "domain1.com/resource1", "domain2.com/resource2", "domain2.com/resource3"
HELD_BEFORE = [
    ("no healthy devices to allocate", "pod1", "con1", R1, 2,
     "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1"),
    ("the resource is not registered", "pod2", "con2", R2, 1, "cannot allocate unregistered device domain2.com/resource2"),
    ("the devices allocated before are no longer healthy", "pod3", "con3", R3, 1,
     "previously allocated devices are no longer healthy; cannot allocate unhealthy devices domain2.com/resource3"),
]


@pytest.mark.parametrize("description,pod_uid,name,resource,required,message", HELD_BEFORE,
                         ids=[c[0] for c in HELD_BEFORE])
def test_admission_errors_for_devices_held_before(description, pod_uid, name, resource, required, message):
    state = state_with({R1: [], R3: [numa_device("dev7"), numa_device("dev8")]},
                       {"pod1": {"con1": {R1: ["dev1", "dev2"]}}, "pod2": {"con2": {R2: ["dev5"]}},
                        "pod3": {"con3": {R3: ["dev5"]}}})
    with pytest.raises(DeviceManagerError) as err:
        devices_to_allocate(state, pod_uid, name, resource, required, set(), TopologyHint())
    assert str(err.value) == message


def test_unregistered_resource_with_allocations_left():
    state = state_with({}, {"old": {"c": {R: ["a"]}}})  # held from a checkpoint, no plugin
    assert state.is_device_plugin_resource(R)
    with pytest.raises(DeviceManagerError, match="^cannot allocate unregistered device example.com/dev$"):
        devices_to_allocate(state, "p", "c", R, 1, set(), P(0))


def _manager(devices, pods, hint=TopologyHint(), nodes=(0, 1)):
    m = new_manager(list(nodes), FixedAffinity(hint), None, devices)
    m.start(lambda: pods)
    return m


def test_devices_held_before_must_stay_healthy():
    p = single("p", "c", {R: 1})
    m = _manager({R: [numa_device("a", 0), numa_device("b", 0)]}, [p], P(0))
    m.allocate(p, p.containers[0])
    held = set(m.get_devices("p", "c")[R])
    m.update_devices(R, [numa_device(d, 0, healthy=d not in held) for d in ("a", "b")])
    with pytest.raises(DeviceManagerError, match="previously allocated devices are no longer healthy"):
        m.allocate(p, p.containers[0])


def test_allocating_twice_gives_the_same_devices():
    p = single("p", "c", {R: 2})
    m = _manager({R: [numa_device(f"d{i}", i % 2) for i in range(4)]}, [p], P(1))
    m.allocate(p, p.containers[0])
    first = m.get_devices("p", "c")
    m.allocate(p, p.containers[0])
    assert m.get_devices("p", "c") == first == {R: {"d1": (1,), "d3": (1,)}}


def test_pods_allocated_one_after_another():
    # upstream's TestPodContainerDeviceAllocation: resource1 has two devices on node 0, resource2 two without
    # topology; each pod stays active after it is admitted
    devices = {R1: [numa_device("dev1", 0), numa_device("dev2", 0)], R2: [numa_device("dev3"), numa_device("dev4")]}
    active = []
    m = new_manager([0, 1], FixedAffinity(), None, devices)
    m.start(lambda: active)
    steps = [
        ("two of resource1 and one of resource2", {R1: 2, "cpu": 2, R2: 1}, None, (2, 1)),
        ("one more of resource1 than is left", {R1: 1}, "requested number of devices unavailable for "
         "domain1.com/resource1. Requested: 1, Available: 0", (2, 1)),
        ("the last device of resource2", {R2: 1}, None, (2, 2)),
    ]
    for k, (description, limits, error, counts) in enumerate(steps):
        p = single(f"pod{k}", "c", limits)
        active.append(p)
        if error is None:
            m.allocate(p, p.containers[0])
        else:
            with pytest.raises(DeviceManagerError) as err:
                m.allocate(p, p.containers[0])
            assert str(err.value) == error, description
            assert m.get_devices(p.uid, "c") is None
        held = m.allocated_devices()
        assert (len(held.get(R1, ())), len(held.get(R2, ()))) == counts, description


def test_a_request_for_zero_devices_allocates_nothing():
    # the part of upstream's TestDevicePreStartContainer that needs no plugin: a container asking for 0 devices
    # of a registered resource is admitted with none, even when every device is taken
    p1, p2 = single("p1", "c", {R1: 2}), single("p2", "c", {R1: 0})
    m = _manager({R1: [numa_device("dev1"), numa_device("dev2")]}, [p1, p2])
    m.allocate(p1, p1.containers[0])
    m.allocate(p2, p2.containers[0])
    assert m.get_devices("p2", "c") is None and m.allocated_devices() == {R1: {"dev1", "dev2"}}


def test_init_container_devices_go_to_the_app_containers():
    # upstream's TestInitContainerDeviceAllocation: two devices of resource1 (no topology), two of resource2 on
    # node 0; init containers ask for 1 then 2 of resource1, each app container for one of each resource
    p = pod("p", [container("app1", {R1: 1, R2: 1}), container("app2", {R1: 1, R2: 1})],
            [container("init1", {R1: 1}), container("init2", {R1: 2})])
    m = _manager({R1: [numa_device("dev1"), numa_device("dev2")], R2: [numa_device("dev3", 0), numa_device("dev4", 0)]},
                 [p])
    for c in (*p.init_containers, *p.containers):
        m.allocate(p, c)
    init1, init2, app1, app2 = (set(m.get_devices("p", n)[R1]) for n in ("init1", "init2", "app1", "app2"))
    assert (len(init1), len(init2), len(app1), len(app2)) == (1, 2, 1, 1)
    assert init1 <= init2 and app1 <= init2 and app2 <= init2 and not app1 & app2


def test_restartable_init_container_devices_stay_their_own():
    # upstream's TestRestartableInitContainerDeviceAllocation: six devices; a regular init container takes 3,
    # two sidecars 1 and 2, two app containers 1 and 2. The sidecars take from what the init container
    # leaves and keep it; nobody shares with a sidecar or another app container.
    p = pod("p", [container("app1", {R1: 1}), container("app2", {R1: 2})],
            [container("init1", {R1: 3}), container("side2", {R1: 1}, "Always"), container("side3", {R1: 2}, "Always")])
    m = _manager({R1: [numa_device(f"dev{i}") for i in range(1, 7)]}, [p])
    for c in (*p.init_containers, *p.containers):
        m.allocate(p, c)
    names = ("init1", "side2", "side3", "app1", "app2")
    held = {n: set(m.get_devices("p", n)[R1]) for n in names}
    assert [len(held[n]) for n in names] == [3, 1, 2, 1, 2]
    assert held["side2"] <= held["init1"] and held["side3"] <= held["init1"]
    dedicated = names[1:]
    for i, a in enumerate(dedicated):
        for b in dedicated[i + 1:]:
            assert not held[a] & held[b], (a, b)


def test_init_container_devices_are_reused_and_app_devices_are_not():
    # upstream's TestInitContainerDeviceAllocation, with its resource counts
    pods = []
    p = pod("p", [container("app1", {R: 4, GPU: 1}), container("app2", {R: 1, GPU: 2})],
            [container("init1", {R: 2}), container("init2", {R: 1})])
    pods.append(p)
    m = _manager({R: [numa_device(f"r{i}", 0) for i in range(6)], GPU: [numa_device(f"g{i}", 0) for i in range(4)]}, pods)
    for c in (*p.init_containers, *p.containers):
        m.allocate(p, c)
    devs = {c.name: m.get_devices("p", c.name) for c in (*p.init_containers, *p.containers)}
    init1, init2 = set(devs["init1"][R]), set(devs["init2"][R])
    app1, app2 = set(devs["app1"][R]), set(devs["app2"][R])
    assert len(init1) == 2 and len(init2) == 1 and len(app1) == 4 and len(app2) == 1
    assert init2 <= init1 <= app1 and not app1 & app2
    assert not set(devs["app1"][GPU]) & set(devs["app2"][GPU])
    assert m.allocated_devices()[R] == app1 | app2


def test_sidecar_devices_are_not_left_for_later_containers():
    p = pod("p", [container("app", {R: 1})], [container("init", {R: 1}), container("side", {R: 1}, "Always")])
    m = _manager({R: [numa_device(f"r{i}", 0) for i in range(3)]}, [p])
    for c in (*p.init_containers, *p.containers):
        m.allocate(p, c)
    init, side, app = (set(m.get_devices("p", n)[R]) for n in ("init", "side", "app"))
    assert side == init  # the sidecar takes what the regular init container left
    assert not app & side  # ... and keeps it: the app container gets another device


def test_devices_are_released_when_the_pod_is_no_longer_active():
    active = []
    m = new_manager([0, 1], FixedAffinity(P(0)), None, {R: [numa_device("a", 0), numa_device("b", 1)]})
    m.start(lambda: active)
    first = single("first", "c", {R: 2})
    active.append(first)
    m.allocate(first, first.containers[0])
    second = single("second", "c", {R: 1})
    active.append(second)
    assert m.get_topology_hints(second, second.containers[0]) == {R: []}
    with pytest.raises(DeviceManagerError, match="Available: 0"):
        m.allocate(second, second.containers[0])
    active.remove(first)  # removed whole: no longer an active pod
    assert m.get_topology_hints(second, second.containers[0]) == {R: [P(0), P(1), N(0, 1)]}
    m.allocate(second, second.containers[0])
    assert m.get_devices("second", "c") == {R: {"a": (0,)}}
    assert m.get_devices("first", "c") is None


def test_a_container_without_devices_needs_no_device_manager():
    m = _manager({R: [numa_device("a", 0)]}, [])
    p = single("p", "c", {"cpu": 1, "memory": "1Gi"})
    assert m.get_topology_hints(p, p.containers[0]) == {}
    m.allocate(p, p.containers[0])
    assert m.get_devices("p", "c") is None


def test_readers():
    m = _manager({R: [numa_device("a", 0), numa_device("b", 1, healthy=False), numa_device("c")]}, [])
    assert sorted(m.get_allocatable_devices()[R]) == ["a", "c"]
    assert m.get_capacity() == ({R: 3}, {R: 2})
    assert m.is_device_plugin_resource(R) and not m.is_device_plugin_resource("example.com/none")


def test_capacity_and_allocatable_follow_the_plugins_reports(tmp_path):
    # upstream's TestUpdateCapacityAllocatable, without its clock (a plugin gone for 5 minutes is not dropped here)
    m = new_manager([0], FixedAffinity(), str(tmp_path), {})
    m.start(lambda: [])
    d1, d2, d3 = numa_device("Device1"), numa_device("Device2"), numa_device("Device3", healthy=False)
    d2_bad = numa_device("Device2", healthy=False)
    steps = [
        ("two healthy devices and one unhealthy", R1, [d1, d2, d3], {R1: (3, 2)}),
        ("the unhealthy device is removed", R1, [d1, d2], {R1: (2, 2)}),
        ("a healthy device turns unhealthy", R1, [d1, d2_bad, d3], {R1: (3, 1)}),
        ("a healthy device is removed", R1, [d2_bad, d3], {R1: (2, 0)}),
        ("another resource registers", R2, [d1, d2_bad, d3], {R1: (2, 0), R2: (3, 1)}),
    ]
    for description, resource, devices, expected in steps:
        m.update_devices(resource, devices)
        capacity, allocatable = m.get_capacity()
        assert {r: (capacity[r], allocatable[r]) for r in capacity} == expected, description
    m.plugin_disconnected(R2)  # markResourceUnhealthy: capacity stays, nothing allocatable
    assert (m.get_capacity()[0][R2], m.get_capacity()[1][R2]) == (3, 0)
    m.write_checkpoint()
    again = new_manager([0], FixedAffinity(), str(tmp_path), {})
    again.start(lambda: [])  # restored from the file: known, zero until its plugin registers again
    capacity, allocatable = again.get_capacity()
    assert (capacity[R2], allocatable[R2]) == (0, 0) and again.is_device_plugin_resource(R2)


def test_a_plugin_registering_again_replaces_its_devices():
    # upstream's TestDevicePluginReRegistration without the sockets: the same devices again change nothing,
    # another list replaces the old one (no device of the earlier registration is left behind)
    m = _manager({R: [numa_device("Dev1"), numa_device("Dev2")]}, [])
    assert m.get_capacity() == ({R: 2}, {R: 2})
    m.update_devices(R, [numa_device("Dev1"), numa_device("Dev2")])
    assert m.get_capacity() == ({R: 2}, {R: 2})
    m.update_devices(R, [numa_device("Dev3")])
    assert m.get_capacity() == ({R: 1}, {R: 1}) and list(m.get_allocatable_devices()[R]) == ["Dev3"]


def test_allocatable_devices_per_resource_and_after_a_health_change():
    # upstream's TestGetAllocatableDevicesMultipleResources and TestGetAllocatableDevicesHealthTransition
    other = "other.domain2.org/resource2"
    m = _manager({R1: [numa_device("R1Device1"), numa_device("R1Device2"), numa_device("R1Device3", healthy=False)],
                  other: [numa_device("R2Device1")]}, [])
    assert {r: sorted(d) for r, d in m.get_allocatable_devices().items()} == {
        R1: ["R1Device1", "R1Device2"], other: ["R2Device1"]}
    m.update_devices(R1, [numa_device("R1Device1"), numa_device("R1Device2"), numa_device("R1Device3")])
    assert sorted(m.get_allocatable_devices()[R1]) == ["R1Device1", "R1Device2", "R1Device3"]


def test_using_the_manager_before_start_is_an_error():
    m = new_manager([0], FixedAffinity(), None, {})
    with pytest.raises(DeviceManagerError, match="not started"):
        m.get_devices("p", "c")


# -- under the topology manager -------------------------------------------------------------------------------
def _node(policy, devices, nodes=2):
    machine = synthetic_machine(nodes, 4 << 30)
    options = {"max-allowable-numa-nodes": str(nodes)} if nodes > 8 else None
    tm = new_topology_manager(machine.topology, policy, "container", options)
    pods = []
    dm = new_manager(machine, tm, None, devices)
    dm.start(lambda: pods)
    tm.add_hint_provider(dm)
    return tm, dm, pods


def test_single_numa_node_refuses_gpus_split_across_nodes():
    tm, dm, pods = _node("single-numa-node", {GPU: [numa_device("g0", 0), numa_device("g1", 1)]})
    p = single("p", "c", {GPU: 2})
    pods.append(p)
    result = tm.admit(p)
    assert not result.admit and result.reason == "TopologyAffinityError"


def test_restricted_places_gpus_on_the_node_that_has_them():
    tm, dm, pods = _node("restricted", {GPU: [numa_device("g0", 0), numa_device("g1", 1), numa_device("g2", 1)]})
    p = single("p", "c", {GPU: 2})
    pods.append(p)
    assert tm.admit(p).admit
    assert tm.get_affinity("p", "c") == P(1)
    assert dm.get_devices("p", "c") == {GPU: {"g1": (1,), "g2": (1,)}}


def test_gb200_shaped_node_admits_in_a_handful_of_masks():
    # 36 NUMA nodes, GPUs only on the two CPU nodes: one GPU lands next to its sibling's node
    tm, dm, pods = _node("single-numa-node", {GPU: [numa_device(f"g{i}", i // 2) for i in range(4)]}, nodes=36)
    p = single("p", "c", {GPU: 2})
    pods.append(p)
    assert tm.admit(p).admit
    assert tm.get_affinity("p", "c") == P(0)
    assert set(dm.get_devices("p", "c")[GPU]) == {"g0", "g1"}


def test_an_allocation_error_is_an_unexpected_admission_error():
    tm, dm, pods = _node("none", {GPU: [numa_device("g0", 0, healthy=False)]})
    p = single("p", "c", {GPU: 1})
    pods.append(p)
    result = tm.admit(p)
    assert (result.admit, result.reason) == (False, "UnexpectedAdmissionError")
    assert result.message == ("Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "
                              "nvidia.com/gpu, which is unexpected")


def test_a_disconnected_plugin_leaves_its_devices_unhealthy():
    p = single("p", "c", {R: 1})
    m = _manager({R: [numa_device("a", 0), numa_device("b", 1, healthy=False)]}, [p], P(0))
    m.plugin_disconnected(R)
    assert m.get_capacity() == ({R: 2}, {R: 0})
    with pytest.raises(DeviceManagerError, match="no healthy devices present"):
        m.allocate(p, p.containers[0])
    m.plugin_disconnected("example.com/never-registered")  # nothing to do


def test_the_manager_is_a_topology_manager_hint_provider():
    from topologymanager.hint_provider import HintProvider

    assert isinstance(_manager({}, []), HintProvider)


def test_the_observer_hears_hints_and_allocations():
    from topologymanager.observer import Observer

    class Heard(Observer):
        def __init__(self):
            self.events = []

        def hints_given(self, provider, pod, container, hints):
            self.events.append(("hints", provider, container.name, sorted(hints or {})))

        def allocation_started(self, provider, pod, container):
            self.events.append(("allocate", provider, container.name))

        def allocation_done(self, provider, pod, container, error):
            self.events.append(("done", provider, container.name, None if error is None else str(error)))

    heard = Heard()
    p = single("p", "c", {R: 3})
    m = new_manager([0, 1], FixedAffinity(P(0)), None, {R: [numa_device("a", 0), numa_device("b", 1)]},
                    observer=heard)
    m.start(lambda: [p])
    m.get_topology_hints(p, p.containers[0])
    with pytest.raises(DeviceManagerError):
        m.allocate(p, p.containers[0])
    assert heard.events[0] == ("hints", "devices", "c", [R])
    assert heard.events[1] == ("allocate", "devices", "c")
    assert heard.events[2][:3] == ("done", "devices", "c")
    assert "requested number of devices unavailable" in heard.events[2][3]
