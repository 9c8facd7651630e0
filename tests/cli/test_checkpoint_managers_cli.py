"""`memorymanager checkpoint inspect|verify` of the CPU manager's and the device manager's files."""
from __future__ import annotations

import io
import json

import pytest

from cpumanager.state.checkpoint import encode_checkpoint as encode_cpu
from devicemanager.checkpoint import DeviceCheckpointData, encode_checkpoint as encode_device
from devicemanager.pod_devices import CheckpointEntry
from kubeinputs.cpuset import CPUSet
from memorymanager.cli.app import main
from memorymanager.cli.checkpoint_cmd import inspect, verify
from memorymanager.cli.checkpoint_managers import checkpoint_kind
from tests.helpers.paths import FIXTURES

STATIC = encode_cpu("static", CPUSet.parse("0,3-15"), {"p1": {"c1": CPUSet.parse("1-2")}})
DEVICES = encode_device(DeviceCheckpointData(
    [CheckpointEntry("trainer", "c", "nvidia.com/gpu", {0: ["g9"]}, b"")], {"nvidia.com/gpu": ["g0", "g1"]}))
ONE_SOCKET = str(FIXTURES / "machines" / "cpu-1s-ht.json")  # 16 CPUs
TWO_NODES = str(FIXTURES / "machines" / "two-nodes.json")


def run(fn, *args) -> tuple[int, str]:
    out = io.StringIO()
    code = fn(*args[:2], out, *args[2:]) if fn is inspect else fn(args[0], args[1], out, *args[2:])
    return code, out.getvalue()


def write(tmp_path, blob: bytes, name: str) -> str:
    path = tmp_path / name
    path.write_bytes(blob)
    return str(path)


@pytest.mark.parametrize("name,blob,kind", [
    ("cpu_manager_state", b"{}", "cpu"),  # kubelet's file names decide
    ("kubelet_internal_checkpoint", b"{}", "device"),
    ("memory_manager_state", STATIC, "memory"),
    ("x.json", STATIC, "cpu"),  # else the content
    ("x.json", DEVICES, "device"),
    ("x.json", b'{"policyName":"None","machineState":{},"checksum":1}', "memory"),
    ("x.json", b"not json", "memory"),
])
def test_kind_from_name_then_content(name, blob, kind) -> None:
    assert checkpoint_kind(f"/var/lib/kubelet/{name}", blob) == kind


def test_cpu_inspect_and_verify(tmp_path) -> None:
    path = write(tmp_path, STATIC, "cpu_manager_state")
    code, text = run(inspect, path, False)
    assert code == 0 and "kubelet:     loads it (as v4" in text and "shared pool: 0,3-15" in text
    assert "pod p1" in text and "c1: 1-2" in text
    report = json.loads(run(inspect, path, True)[1])
    assert report["kind"] == "cpu" and report["entries"] == {"p1": {"c1": "1-2"}} and report["loadError"] is None
    code, text = run(verify, path, "static", None, ONE_SOCKET)
    assert code == 0 and 'policy "static"' in text and "1 container assignment(s)" in text


@pytest.mark.parametrize("blob,policy,machine,message", [
    (STATIC, "none", None, 'configured policy "none" differs from state checkpoint policy "static"'),
    (STATIC.replace(b'"dataChecksum":', b'"dataChecksum":1'), None, None,
     "could not load v4 checkpoint: checkpoint is corrupted, please drain this node and delete the CPU manager"),
    (STATIC, None, TWO_NODES,  # a machine of 8 CPUs: the file names CPUs it lacks
     'current set of available CPUs "0-7" doesn\'t match with CPUs in state "0-15"'),
    (encode_cpu("static", CPUSet.parse("0-15"), {"p1": {"c1": CPUSet.parse("1-2")}}), None, ONE_SOCKET,
     'pod: p1, container: c1 cpuset: "1-2" overlaps with default cpuset "0-15"'),
    (encode_cpu("static", CPUSet(), {"p1": {"c1": CPUSet.parse("1-2")}}), None, ONE_SOCKET,
     "default cpuset cannot be empty"),
])
def test_cpu_verify_refusals_are_kubelets(tmp_path, blob, policy, machine, message) -> None:
    code, text = run(verify, write(tmp_path, blob, "cpu_manager_state"), policy, None, machine)
    assert code == 1 and text.startswith("FAIL: ") and message in text


def test_device_checkpoint_naming_an_unknown_device(tmp_path) -> None:
    """kubelet restores it silently (verify says so); with the node's devices verify refuses it, naming the entry."""
    path = write(tmp_path, DEVICES, "kubelet_internal_checkpoint")
    code, text = run(inspect, path, False)
    assert code == 0 and "checksum:    valid" in text and "pod trainer container c nvidia.com/gpu: NUMA 0: g9" in text
    code, text = run(verify, path, None, None)
    assert code == 0 and "devices not checked" in text
    devices = tmp_path / "devices.yaml"
    devices.write_text("nvidia.com/gpu: [{id: g0, numaNodes: [0]}, {id: g1, numaNodes: [1]}]\n")
    code, text = run(verify, path, None, None, TWO_NODES, str(devices))
    assert code == 1
    assert 'Data.PodDeviceEntries[0].DeviceIDs.0: device "g9" is not a device of "nvidia.com/gpu" on this node' in text
    assert "kubelet itself restores such entries without a word" in text


def test_device_checkpoint_kubelet_cannot_read(tmp_path) -> None:
    path = write(tmp_path, DEVICES.replace(b'"Checksum":', b'"Checksum":1'), "kubelet_internal_checkpoint")
    code, text = run(verify, path, None, None)
    assert code == 1 and "checkpoint is corrupted (kubelet logs this and starts with no device allocation)" in text
    code, text = run(inspect, path, False)
    assert code == 0 and "checksum:    corrupted: expected" in text


def test_command_line_kind_flag(tmp_path) -> None:
    out, err = io.StringIO(), io.StringIO()
    path = write(tmp_path, STATIC, "state.json")
    assert main(["checkpoint", "verify", "--kind", "cpu", "--policy", "static", path], out, err) == 0
    assert main(["checkpoint", "inspect", "--kind", "device", path], io.StringIO(), err) == 1  # not a device file
