"""The device manager's hints, table by table as upstream's topology_hints_test.go tests them.

Upstream's tables (getCommonTestCases, getPodScopeTestCases) were written before #138244; in
v1.37 a mask names only NUMA nodes that host devices of the resource, so where the devices sit on
one node of the two, the `{0, 1}` non-preferred hint of the old tables is gone (marked "v1.37").
Hints are compared in kubelet's order (IterateBitMasks), not only as sets.
"""
from __future__ import annotations

import dataclasses
import random

import pytest

from devicemanager.hint_family import FAMILY_MIN_NODES, DeviceHintFamily
from devicemanager.reference_hints import reference_generate_device_topology_hints
from devicemanager.topology_hints import (generate_device_topology_hints, get_pod_topology_hints,
                                          get_topology_hints, listed_device_hints)
from devicemanager.requests import pod_device_request
from kubeinputs.devices import Device
from kubeinputs.pod import Pod
from topologymanager.errors import BoundedWorkError
from topologymanager.hint_family import HintFamily

from tests.devicemanager.helpers import N, P, container, numa_device, pod, state_with

R, R1, R2 = "example.com/dev", "example.com/dev1", "example.com/dev2"
FOUR_PER_SOCKET = [numa_device("Dev1", 0), numa_device("Dev2", 1), numa_device("Dev3", 0), numa_device("Dev4", 1)]
TWO_PER_SOCKET = [numa_device("Dev1", 0), numa_device("Dev2", 0), numa_device("Dev3", 1), numa_device("Dev4", 1)]

# (description, request, devices, held {pod: {container: {resource: ids}}}, expected hints)
CONTAINER_CASES = [
    # two devices without topology, one with an empty NUMA list, one with none: no device reports a node
    ("Single Request, no alignment", {R: 1},
     {R: [numa_device("Dev1"), numa_device("Dev2"), Device("Dev3", ()), Device("Dev4", None)]}, {}, {R: None}),
    ("Single Request, only one with alignment (v1.37)", {R: 1},
     {R: [numa_device("Dev1"), numa_device("Dev2", 1)]}, {}, {R: [P(1)]}),
    ("Single Request, one device per socket", {R: 1},
     {R: [numa_device("Dev1", 0), numa_device("Dev2", 1)]}, {}, {R: [P(0), P(1), N(0, 1)]}),
    ("Request for 2, one device per socket", {R: 2},
     {R: [numa_device("Dev1", 0), numa_device("Dev2", 1)]}, {}, {R: [P(0, 1)]}),
    ("Request for 2, 2 devices per socket", {R: 2}, {R: FOUR_PER_SOCKET}, {}, {R: [P(0), P(1), N(0, 1)]}),
    ("Request for 2, optimal on 1 NUMA node, forced cross-NUMA", {R: 2}, {R: FOUR_PER_SOCKET},
     {"fakePod": {"fake-other-container": {R: ["Dev1", "Dev2"]}}}, {R: [N(0, 1)]}),
    ("2 device types, mixed configuration (v1.37)", {R1: 2, R2: 1},
     {R1: FOUR_PER_SOCKET, R2: [numa_device("Dev1", 0)]}, {},
     {R1: [P(0), P(1), N(0, 1)], R2: [P(0)]}),
    ("Single device type, more requested than available", {R: 6}, {R: TWO_PER_SOCKET}, {}, {R: []}),
    ("Single device type, all already allocated to container (v1.37)", {R: 2},
     {R: [numa_device("Dev1", 0), numa_device("Dev2", 0)]},
     {"fakePod": {"fake-container": {R: ["Dev1", "Dev2"]}}}, {R: [P(0)]}),
    ("Single device type, less already allocated to container than requested", {R: 4}, {R: TWO_PER_SOCKET},
     {"fakePod": {"fake-container": {R: ["Dev1", "Dev2"]}}}, {R: []}),
    ("Single device type, more already allocated to container than requested", {R: 2}, {R: TWO_PER_SOCKET},
     {"fakePod": {"fake-container": {R: ["Dev1", "Dev2", "Dev3", "Dev4"]}}}, {R: []}),
    ("A resource no plugin registered is not the device manager's", {"example.com/other": 1}, {R: TWO_PER_SOCKET},
     {}, {}),
]


@pytest.mark.parametrize("description,request_,devices,held,expected", CONTAINER_CASES, ids=[c[0] for c in CONTAINER_CASES])
def test_get_topology_hints(description, request_, devices, held, expected):
    state = state_with(devices, held)
    p = pod("fakePod", [container("fake-container", request_)])
    assert get_topology_hints(state, [0, 1], p, p.containers[0]) == expected


@pytest.mark.parametrize("description,request_,devices,held,expected", CONTAINER_CASES, ids=[c[0] for c in CONTAINER_CASES])
def test_get_pod_topology_hints_of_the_common_cases(description, request_, devices, held, expected):
    # upstream runs its container-scope table through GetPodTopologyHints too: a one-container pod gets the
    # same hints at pod scope (the devices the whole pod holds stand in for the container's)
    state = state_with(devices, held)
    assert get_pod_topology_hints(state, [0, 1], pod("fakePod", [container("fake-container", request_)])) == expected


POD_CASES = [
    ("2 device types, user container only",
     pod("fakePod", [container("c1", {R1: 2}), container("c2", {R2: 2}), container("c3", {"example.com/notregistered": 2})]),
     {R1: TWO_PER_SOCKET, R2: TWO_PER_SOCKET}, {},
     {R1: [P(0), P(1), N(0, 1)], R2: [P(0), P(1), N(0, 1)]}),
    ("2 device types, request resources for init containers and user container",
     pod("fakePod", [container("c1", {R1: 1, R2: 1}), container("c2", {R1: 1, R2: 1}),
                     container("c3", {"example.com/notregistered": 1})],
         [container("i1", {R1: 1, R2: 1}), container("i2", {R1: 1, R2: 2})]),
     {R1: TWO_PER_SOCKET, R2: TWO_PER_SOCKET}, {},
     {R1: [P(0), P(1), N(0, 1)], R2: [P(0), P(1), N(0, 1)]}),
    ("2 device types, user container only, optimal on 1 NUMA node, forced cross-NUMA",
     pod("fakePod", [container("c1", {R1: 1, R2: 1}), container("c2", {R1: 1, R2: 1})]),
     {R1: TWO_PER_SOCKET, R2: TWO_PER_SOCKET},
     {"fakeOtherPod": {"fake-other-container": {R1: ["Dev1", "Dev3"], R2: ["Dev1", "Dev3"]}}},
     {R1: [N(0, 1)], R2: [N(0, 1)]}),
    ("sidecar and init peak: the pod asks for max(apps + sidecars, init + earlier sidecars)",
     pod("fakePod", [container("c1", {R1: 1})],
         [container("side", {R1: 1}, "Always"), container("i1", {R1: 2})]),
     {R1: TWO_PER_SOCKET}, {}, {R1: [P(0, 1)]}),  # 1 + 2 = 3 devices: both nodes, the narrowest possible
    ("the devices the pod holds are regenerated", pod("fakePod", [container("c1", {R1: 1}), container("c2", {R1: 1})]),
     {R1: TWO_PER_SOCKET}, {"fakePod": {"c1": {R1: ["Dev1"]}, "c2": {R1: ["Dev2"]}}}, {R1: [P(0), N(0, 1)]}),
]


@pytest.mark.parametrize("description,p,devices,held,expected", POD_CASES, ids=[c[0] for c in POD_CASES])
def test_get_pod_topology_hints(description, p, devices, held, expected):
    assert get_pod_topology_hints(state_with(devices, held), [0, 1], p) == expected


# getPodDeviceRequest (upstream TestGetPodDeviceRequest): what the pod asks for of each registered device
# resource, CPU and memory limits beside it. Init containers run one at a time, so the pod needs the largest of
# them or the sum of its app containers, whichever is more.
GPU_, NIC_ = "example.com/gpu", "example.com/nic"


def _limits(gpu=None, nic=None, cpu="2"):
    limits = {"cpu": cpu, "memory": "1G"}
    if gpu is not None:
        limits[GPU_] = gpu
    if nic is not None:
        limits[NIC_] = nic
    return limits


def _request_pod(init=(), apps=()):
    """A pod of these containers (an init-only pod too, which the manifest reader would refuse)."""
    inits = [container(f"i{k}", limits) for k, limits in enumerate(init)]
    parsed = pod("p", [container(f"a{k}", limits) for k, limits in enumerate(apps)] or [container("x", {})], inits)
    return dataclasses.replace(parsed, containers=parsed.containers if apps else [])


POD_REQUESTS = [
    ("a pod with no container asks for nothing", Pod("p", "p"), [], {}),
    ("one init container asks for two GPUs", _request_pod(init=[_limits(2)]), [GPU_], {GPU_: 2}),
    ("two init containers: the larger one counts", _request_pod(init=[_limits(2), _limits(4)]), [GPU_], {GPU_: 4}),
    ("one app container asks for two GPUs", _request_pod(apps=[_limits(2)]), [GPU_], {GPU_: 2}),
    ("init containers and app containers ask for the same in total",
     _request_pod(init=[_limits(2, 2), _limits(2, 2)], apps=[_limits(1, 1), _limits(1, 1)]), [GPU_, NIC_],
     {GPU_: 2, NIC_: 2}),
    ("an init container asks for more than the app containers together",
     _request_pod(init=[_limits(2, 1), _limits(3, 2)], apps=[_limits(1, 1, "1"), _limits(1, cpu="1")]),
     [GPU_, NIC_], {GPU_: 3, NIC_: 2}),
    ("the app containers together ask for more than any init container",
     _request_pod(init=[_limits(2, 1), _limits(2, 1)], apps=[_limits(3, 2, "1"), _limits(3, 2, "1")]),
     [GPU_, NIC_], {GPU_: 6, NIC_: 4}),
]


@pytest.mark.parametrize("description,p,registered,expected", POD_REQUESTS, ids=[c[0] for c in POD_REQUESTS])
def test_pod_device_request(description, p, registered, expected):
    state = state_with({r: [] for r in registered})
    assert pod_device_request(state, p) == expected


def test_masks_name_only_the_nodes_hosting_devices():
    # kubernetes/kubernetes#138244 (v1.37): a 4-node machine, devices on nodes 0 and 2
    state = state_with({R: [numa_device("a", 0), numa_device("b", 2)]})
    p = pod("p", [container("c", {R: 1})])
    assert get_topology_hints(state, [0, 1, 2, 3], p, p.containers[0]) == {R: [P(0), P(2), N(0, 2)]}


def test_unhealthy_and_held_devices_still_count_for_the_narrowest_mask():
    # preferred compares with what *all* registered devices could fill, not with what is free
    devices = [numa_device("a", 0), numa_device("b", 0, healthy=False), numa_device("c", 1), numa_device("d", 1)]
    state = state_with({R: devices}, {"other": {"x": {R: ["c"]}}})
    p = pod("p", [container("c", {R: 2})])
    assert get_topology_hints(state, [0, 1], p, p.containers[0]) == {R: [N(0, 1)]}


def test_reusable_devices_must_all_touch_the_mask():
    state = state_with({R: TWO_PER_SOCKET}, {"p": {"init": {R: ["Dev3"]}}})
    state.to_reuse = {"p": {R: {"Dev3"}}}
    p = pod("p", [container("app", {R: 2})], [container("init", {R: 1})])
    # Dev3 (node 1) is re-usable: every mask must contain node 1; Dev4 or Dev1/Dev2 complete it
    assert get_topology_hints(state, [0, 1], p, p.containers[0]) == {R: [P(1), N(0, 1)]}


def test_a_reusable_device_with_an_empty_node_list_fits_no_mask():
    # kubelet skips a re-usable device only when its Topology is nil; an empty (non-nil) node list touches no
    # mask, so no mask is kept. The devices reader turns `numaNodes: []` into None, so only a Device built in
    # code can carry (); the hint functions still follow kubelet for it.
    devices = [numa_device("a", 0), numa_device("b", 1), Device("c", ())]
    state = state_with({R: devices})
    for hints in (listed_device_hints(state.plugins, [0, 1], R, {"a", "b"}, {"c"}, 2),
                  reference_generate_device_topology_hints(state.plugins, [0, 1], R, {"a", "b"}, {"c"}, 2)):
        assert hints == []
    assert listed_device_hints(state.plugins, [0, 1], R, {"a", "b"}, set(), 2) == [P(0, 1)]


def test_a_device_on_two_nodes_counts_for_either():
    state = state_with({R: [numa_device("a", 0, 1), numa_device("b", 1)]})
    p = pod("p", [container("c", {R: 2})])
    assert get_topology_hints(state, [0, 1], p, p.containers[0]) == {R: [P(1), N(0, 1)]}


def test_gb200_shaped_machine_lists_a_handful_of_hints():
    # 36 NUMA nodes, 4 GPUs on the two CPU nodes: kubelet before 1.36 walked 2^36 masks
    devices = [numa_device(f"gpu{i}", i // 2) for i in range(4)]
    state = state_with({"nvidia.com/gpu": devices})
    p = pod("p", [container("c", {"nvidia.com/gpu": 2})])
    hints = get_topology_hints(state, list(range(36)), p, p.containers[0])
    assert hints == {"nvidia.com/gpu": [P(0), P(1), N(0, 1)]}


def _random_case(rng: random.Random, max_nodes: int, multi: bool):
    n = rng.randint(1, max_nodes)
    machine = list(range(n))
    devices = []
    for i in range(rng.randint(0, 8)):
        r = rng.random()
        if r < 0.15:
            nodes = None
        elif multi and r < 0.35:
            nodes = tuple(rng.sample(machine, rng.randint(1, min(3, n))))
        else:
            nodes = (rng.choice(machine),)
        devices.append(Device(f"d{i}", nodes, rng.random() < 0.85))
    state = state_with({R: devices})
    ids = [d.id for d in devices]
    available = set(rng.sample(ids, rng.randint(0, len(ids))))
    rest = [i for i in ids if i not in available]
    reusable = set(rng.sample(rest, rng.randint(0, len(rest))))
    if rng.random() < 0.1:
        reusable.add("gone")  # a re-usable device the plugin no longer reports: kubelet skips it
    return state, machine, available, reusable, rng.randint(0, 5)


def test_listed_hints_equal_kubelets_loop():
    rng = random.Random(20260901)
    for _ in range(600):
        state, machine, available, reusable, request = _random_case(rng, 6, multi=True)
        assert listed_device_hints(state.plugins, machine, R, available, reusable, request) == \
            reference_generate_device_topology_hints(state.plugins, machine, R, available, reusable, request)


def test_family_is_kubelets_list():
    from devicemanager.hint_family import family_device_hints

    rng = random.Random(7)
    families = 0
    for _ in range(400):
        state, machine, available, reusable, request = _random_case(rng, 7, multi=False)
        family = family_device_hints(state.plugins, machine, R, available, reusable, request)
        expected = reference_generate_device_topology_hints(state.plugins, machine, R, available, reusable, request)
        assert list(family) == expected
        if isinstance(family, HintFamily):
            families += 1
            assert family.count() == len(expected)
            assert all(h in family for h in expected)
            assert family.best_hint() in expected
    assert families > 100


def test_family_from_17_device_nodes_without_listing_masks():
    # 64 NUMA nodes, one GPU on each of 32 of them, 3 free: 2^29 masks kept, answered by rules
    machine = list(range(64))
    devices = [numa_device(f"g{n}", n) for n in range(0, 64, 2)]
    state = state_with({R: devices}, {"other": {"x": {R: [d.id for d in devices[3:]]}}})
    hints = generate_device_topology_hints(state.plugins, machine, R, state.available(R), set(), 3)
    assert isinstance(hints, DeviceHintFamily) and hints.relist is None
    assert hints.preferred_width == 3 and hints.best_hint() == P(0, 2, 4)
    assert hints.count() == 1 << 29
    assert P(0, 2, 4) in hints and N(0, 2, 4, 6) in hints and N(0, 2) not in hints


def test_family_relists_where_kubelets_loop_finishes():
    machine = list(range(FAMILY_MIN_NODES))
    devices = [numa_device(f"g{n}", n) for n in machine]
    state = state_with({R: devices}, {"o": {"x": {R: [f"g{n}" for n in range(2, FAMILY_MIN_NODES)]}}})
    family = generate_device_topology_hints(state.plugins, machine, R, state.available(R), set(), 2)
    assert isinstance(family, HintFamily)
    assert family.kubelet_list() == list(family)


def test_devices_on_several_nodes_each_over_more_than_20_nodes_are_refused():
    machine = list(range(24))
    devices = [numa_device(f"g{n}", n, (n + 1) % 24) for n in machine]
    state = state_with({R: devices})
    with pytest.raises(BoundedWorkError, match="2\\^24 NUMA masks"):
        generate_device_topology_hints(state.plugins, machine, R, state.available(R), set(), 1)
