"""Declared devices (`devices: {RESOURCE: [{id, numaNodes, healthy}]}`) and the API server's integer rule."""
from __future__ import annotations

import pytest

from kubeinputs.devices import Device, devices_to_obj, integer_resource_error, load_devices_file, parse_devices
from kubeinputs.errors import InputError
from kubeinputs.pod import parse_pod
from kubeinputs.quantity import parse_quantity


def test_declaration_with_defaults_and_order():
    devices = parse_devices({
        "nvidia.com/gpu": [{"id": "gpu1", "numaNodes": [1]}, {"id": "gpu0", "numaNodes": [0], "healthy": False},
                           {"id": "gpu2", "numaNodes": []}, {"id": "gpu3", "numaNodes": None}],
        "example.com/vf": [{"id": "vf0", "numaNodes": [0, 1]}],
    }, numa_nodes=[0, 1])
    assert devices == {
        "nvidia.com/gpu": (Device("gpu1", (1,)), Device("gpu0", (0,), False), Device("gpu2"), Device("gpu3")),
        "example.com/vf": (Device("vf0", (0, 1)),),
    }
    assert parse_devices(devices_to_obj(devices), numa_nodes=[0, 1]) == devices
    assert parse_devices(None) == {}


BAD = [
    ({"gpu": []}, "devices.gpu", 'the ResourceName "gpu" is invalid'),
    ({"kubernetes.io/gpu": []}, "devices.kubernetes.io/gpu", "is invalid"),
    ({"x.io/gpu": {"id": "a"}}, "devices.x.io/gpu", "expected a list of devices, got map"),
    ({"x.io/gpu": ["a"]}, "devices.x.io/gpu[0]", "expected a map (a device"),
    ({"x.io/gpu": [{"numaNodes": [0]}]}, "devices.x.io/gpu[0].id", "required key is missing"),
    ({"x.io/gpu": [{"id": ""}]}, "devices.x.io/gpu[0].id", "must be a non-empty string"),
    ({"x.io/gpu": [{"id": 3}]}, "devices.x.io/gpu[0].id", "expected a string, got integer"),
    ({"x.io/gpu": [{"id": "a"}, {"id": "a"}]}, "devices.x.io/gpu[1].id", 'duplicate device id "a" (also [0])'),
    ({"x.io/gpu": [{"id": "a", "numaNodes": [2]}]}, "devices.x.io/gpu[0].numaNodes[0]",
     "NUMA node 2 is not on this machine (its NUMA nodes: 0, 1)"),
    ({"x.io/gpu": [{"id": "a", "numaNodes": [0, 0]}]}, "devices.x.io/gpu[0].numaNodes[1]", "listed twice"),
    ({"x.io/gpu": [{"id": "a", "numaNodes": ["0"]}]}, "devices.x.io/gpu[0].numaNodes[0]", "expected a NUMA node id"),
    ({"x.io/gpu": [{"id": "a", "numaNodes": [True]}]}, "devices.x.io/gpu[0].numaNodes[0]", "expected a NUMA node id"),
    ({"x.io/gpu": [{"id": "a", "numaNodes": 0}]}, "devices.x.io/gpu[0].numaNodes", "expected a list of NUMA node ids"),
    ({"x.io/gpu": [{"id": "a", "healthy": "yes"}]}, "devices.x.io/gpu[0].healthy", "expected a boolean"),
    ({"x.io/gpu": [{"id": "a", "helthy": True}]}, "devices.x.io/gpu[0].helthy", 'did you mean "healthy"?'),
]


@pytest.mark.parametrize("doc,where,reason", BAD, ids=[b[2][:40] for b in BAD])
def test_bad_declarations_name_their_path(doc, where, reason):
    with pytest.raises(InputError) as err:
        parse_devices(doc, numa_nodes=[0, 1])
    assert err.value.where == where and reason in err.value.reason


def test_a_repeated_id_in_another_resource_is_another_device():
    devices = parse_devices({"a.io/x": [{"id": "0"}], "b.io/x": [{"id": "0"}]})
    assert len(devices) == 2


def test_devices_file_errors_name_the_file(tmp_path):
    path = tmp_path / "devices.yaml"
    path.write_text("x.io/gpu:\n  - {id: a, numaNodes: [7]}\n")
    with pytest.raises(InputError) as err:
        load_devices_file(path, numa_nodes=[0])
    assert str(err.value) == f"{path}: x.io/gpu[0].numaNodes[0]: NUMA node 7 is not on this machine (its NUMA nodes: 0)"


def _go(value, scale, s, fmt="DecimalSI"):
    return (f"Invalid value: resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
            f'd:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:"{s}", Format:"{fmt}"}}: must be an integer')


@pytest.mark.parametrize("text,error", [
    ("1", None), ("2", None), ("1000m", None), ("0.9999", None),  # the API server rounds up to thousandths first
    ("0.5", _go(5, -1, "")),  # as an API server printed it for `nvidia.com/gpu: 0.5`
    ("500m", _go(500, -3, "500m")), ("1.5", _go(15, -1, "")),
    ("1.0001", _go(1001, -3, "")), ("1e-9", _go(1, -3, "", "DecimalExponent")),
])
def test_extended_resources_are_whole_numbers(text, error):
    assert integer_resource_error("nvidia.com/gpu", parse_quantity(text)) == error
    assert integer_resource_error("cpu", parse_quantity(text)) is None  # native resources may be fractional


def test_fractional_device_request_in_a_pod_names_its_path():
    """The Pod reader applies the API server's rule (after defaulting: limits before requests)."""
    with pytest.raises(InputError) as err:
        parse_pod({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
            "containers": [{"name": "c", "resources": {"limits": {"cpu": "500m", "nvidia.com/gpu": "0.5"}}}]}})
    assert str(err.value) == "spec.containers[0].resources.limits.nvidia.com/gpu: " + _go(5, -1, "")


def test_negative_device_requests_are_refused_by_the_pod_reader():
    with pytest.raises(InputError, match='limits.nvidia.com/gpu: Invalid value: "-1": must be greater than or equal to 0'):
        parse_pod({"metadata": {"name": "p"},
                   "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "-1"}}}]}})
