"""Who holds which device (pod_devices.go), against upstream's pod_devices_test.go where it applies."""
from __future__ import annotations

from devicemanager.pod_devices import PodDevices

from tests.devicemanager.helpers import numa_device, state_with

R1 = "domain1.com/resource1"


def _one_device_on_two_nodes() -> PodDevices:
    pd = PodDevices()
    pd.insert("pod1", "con1", R1, {0: ["dev1"], 1: ["dev1"]}, b"")
    return pd


def test_a_device_recorded_on_two_nodes_reports_both():
    # upstream's TestGetContainerDevices: dev1 is listed under NUMA nodes 0 and 1
    assert _one_device_on_two_nodes().get_container_devices("pod1", "con1") == {R1: {"dev1": (0, 1)}}


def test_who_holds_a_device():
    # upstream's TestGetPodAndContainerForDevice: nobody holds dev2, pod1/con1 holds dev1
    pd = _one_device_on_two_nodes()
    assert pd.pod_and_container_of("dev2") == ("", "")
    assert pd.pod_and_container_of("dev1") == ("pod1", "con1")


def test_allocatable_devices_are_the_registered_ones_filtered_by_health():
    # upstream's TestResourceDeviceInstanceFilter, as kubelet uses the filter (registered devices kept where
    # they are healthy): a resource whose devices are all unhealthy is listed with none
    devices = {r: [numa_device(f"{r}{i}", healthy=i in healthy) for i in (1, 2, 3)]
               for r, healthy in (("foo", {1, 2}), ("bar", {1}), ("baz", set()))}
    state = state_with(devices)
    assert {r: sorted(d) for r, d in state.plugins.allocatable().items()} == {
        "foo": ["foo1", "foo2"], "bar": ["bar1"], "baz": []}
    for r in ("foo", "bar", "baz"):
        state.plugins.update(r, [numa_device(f"{r}{i}") for i in (1, 2, 3)])
    assert {r: sorted(d) for r, d in state.plugins.allocatable().items()} == {
        r: [f"{r}1", f"{r}2", f"{r}3"] for r in ("foo", "bar", "baz")}
