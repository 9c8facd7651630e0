"""The checkpoint `device-plugins/kubelet_internal_checkpoint`: real kubelets' files as test vectors,
the bytes this manager writes, restore, and the errors of a file that cannot be restored."""
from __future__ import annotations

import base64
import json
import os

import pytest

from devicemanager.checkpoint import (CORRUPT, DeviceCheckpointData, alloc_resp_problem, checkpoint_checksum,
                                      check_against_node, decode_checkpoint, encode_checkpoint, go_base64_decode,
                                      read_checkpoint)
from devicemanager.errors import DeviceCheckpointError
from devicemanager.manager import new_manager
from devicemanager.pod_devices import CheckpointEntry
from state.checkpoint_manager import NoSyncFileOps

from tests.devicemanager.helpers import FixedAffinity, P, container, numa_device, pod, single

GPU = "nvidia.com/gpu"

# Files written by real kubelets (published in troubleshooting notes): a node with one GPU and
# nothing allocated; a kind node whose one GPU has no topology (NUMA key -1); a node with three
# GPUs, one allocated on NUMA node 0, then two on node 1 (the plugin's Allocate answers kept).
VECTORS = [
    b'{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"nvidia.com/gpu":["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]}},"Checksum":3952659280}',
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"bf52b2cd-b611-4e79-86b1-280b283185c3","ContainerName":"check","ResourceName":"nvidia.com/gpu","DeviceIDs":{"-1":["tegra"]},"AllocResp":"Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh"}],"RegisteredDevices":{"nvidia.com/gpu":["tegra"]}},"Checksum":3660592824}',
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"513cb897-0262-4868-826f-aa943ee45a38","ContainerName":"app","ResourceName":"nvidia.com/gpu","DeviceIDs":{"0":["GPU-77a702db-e37f-3a74-d46d-c5713f66058c"]},"AllocResp":"CkIKFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSKEdQVS03N2E3MDJkYi1lMzdmLTNhNzQtZDQ2ZC1jNTcxM2Y2NjA1OGMaJAoOL2Rldi9udmlkaWFjdGwSDi9kZXYvbnZpZGlhY3RsGgJydxomCg8vZGV2L252aWRpYS11dm0SDy9kZXYvbnZpZGlhLXV2bRoCcncaMgoVL2Rldi9udmlkaWEtdXZtLXRvb2xzEhUvZGV2L252aWRpYS11dm0tdG9vbHMaAnJ3Gi4KEy9kZXYvbnZpZGlhLW1vZGVzZXQSEy9kZXYvbnZpZGlhLW1vZGVzZXQaAnJ3GiAKDC9kZXYvbnZpZGlhMBIML2Rldi9udmlkaWEwGgJydw=="}],"RegisteredDevices":{"nvidia.com/gpu":["GPU-77a702db-e37f-3a74-d46d-c5713f66058c","GPU-9b341c59-f96b-ba85-c137-78c3652fea65","GPU-c1e9f249-b37b-81c2-a8d9-ba5ca0294841"]}},"Checksum":133412836}',
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"de6df8b8-a6b7-41cc-97a6-19d0fbd44714","ContainerName":"app","ResourceName":"nvidia.com/gpu","DeviceIDs":{"1":["GPU-9b341c59-f96b-ba85-c137-78c3652fea65","GPU-c1e9f249-b37b-81c2-a8d9-ba5ca0294841"]},"AllocResp":"CmsKFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSUUdQVS05YjM0MWM1OS1mOTZiLWJhODUtYzEzNy03OGMzNjUyZmVhNjUsR1BVLWMxZTlmMjQ5LWIzN2ItODFjMi1hOGQ5LWJhNWNhMDI5NDg0MRokCg4vZGV2L252aWRpYWN0bBIOL2Rldi9udmlkaWFjdGwaAnJ3GiYKDy9kZXYvbnZpZGlhLXV2bRIPL2Rldi9udmlkaWEtdXZtGgJydxoyChUvZGV2L252aWRpYS11dm0tdG9vbHMSFS9kZXYvbnZpZGlhLXV2bS10b29scxoCcncaLgoTL2Rldi9udmlkaWEtbW9kZXNldBITL2Rldi9udmlkaWEtbW9kZXNldBoCcncaIAoML2Rldi9udmlkaWExEgwvZGV2L252aWRpYTEaAnJ3GiAKDC9kZXYvbnZpZGlhMhIML2Rldi9udmlkaWEyGgJydw=="}],"RegisteredDevices":{"nvidia.com/gpu":["GPU-77a702db-e37f-3a74-d46d-c5713f66058c","GPU-9b341c59-f96b-ba85-c137-78c3652fea65","GPU-c1e9f249-b37b-81c2-a8d9-ba5ca0294841"]}},"Checksum":4219022648}',
]


@pytest.mark.parametrize("blob", VECTORS, ids=["no-entries", "no-topology", "numa-0", "numa-1-two"])
def test_real_kubelet_files_verify_and_reencode_byte_for_byte(blob):
    cp = decode_checkpoint(blob)
    assert checkpoint_checksum(cp.data) == cp.checksum == json.loads(blob)["Checksum"]
    assert encode_checkpoint(cp.data) == blob
    for entry in cp.data.entries or []:
        assert alloc_resp_problem(entry.alloc_resp) is None


def test_a_changed_byte_is_a_corrupted_checkpoint():
    tampered = VECTORS[2].replace(b'"0":["GPU-77a7', b'"1":["GPU-77a7')
    with pytest.raises(DeviceCheckpointError) as err:
        read_checkpoint(tampered, "/x/kubelet_internal_checkpoint")
    assert err.value.reason == CORRUPT == "checkpoint is corrupted"
    assert str(err.value) == "/x/kubelet_internal_checkpoint: Checksum: checkpoint is corrupted"


BAD = [
    (b'{"Data":', "unexpected end of JSON input"),
    (b'{"Data":{"PodDeviceEntries":[{"DeviceIDs":"x"}]}}',
     "json: cannot unmarshal string into Go struct field PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs of type "
     "checkpoint.DevicesPerNUMA"),
    (b'{"Data":{"PodDeviceEntries":[{"DeviceIDs":{"zero":["a"]}}]}}',
     "json: cannot unmarshal number zero into Go struct field PodDevicesEntry.Data.PodDeviceEntries.DeviceIDs of type int64"),
    (b'{"Data":{"PodDeviceEntries":[{"AllocResp":"QUJD!"}]}}', "illegal base64 data at input byte 4"),
    (b'{"Checksum":-1}', "json: cannot unmarshal number -1 into Go struct field Data.Checksum of type checksum.Checksum"),
]


@pytest.mark.parametrize("blob,message", BAD, ids=[b[1][:30] for b in BAD])
def test_unreadable_files_give_gos_error(blob, message):
    with pytest.raises(DeviceCheckpointError) as err:
        decode_checkpoint(blob)
    assert err.value.reason == message


@pytest.mark.parametrize("text,expected", [("QUJD", b"ABC"), ("QUI=", b"AB"), ("QQ==", b"A"), ("QU\nJD", b"ABC"), ("", b"")])
def test_go_base64(text, expected):
    assert go_base64_decode(text) == expected


@pytest.mark.parametrize("text,index", [("QUJ", 0), ("QQ=", 3), ("Q===", 1), ("QQ==QUJD", 4), ("QU*D", 2)])
def test_go_base64_errors(text, index):
    with pytest.raises(ValueError, match=f"^illegal base64 data at input byte {index}$"):
        go_base64_decode(text)


def test_a_file_of_the_old_list_format_is_not_read():
    # kubelet 1.20 and older wrote DeviceIDs as a plain list; v1.37 reads only the per-NUMA map
    blob = (b'{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"example.com/dev",'
            b'"DeviceIDs":["dev1"],"AllocResp":null}],"RegisteredDevices":{"example.com/dev":["dev1"]}},"Checksum":1}')
    with pytest.raises(DeviceCheckpointError) as err:
        decode_checkpoint(blob)
    assert err.value.reason == ("json: cannot unmarshal array into Go struct field PodDevicesEntry.Data.PodDeviceEntries."
                                "DeviceIDs of type checkpoint.DevicesPerNUMA")


def test_missing_data_restores_nothing_when_its_checksum_is_right():
    empty = DeviceCheckpointData([], {})
    blob = b'{"Checksum":%d}' % checkpoint_checksum(empty)
    assert read_checkpoint(blob) == empty


# -- the manager's file -----------------------------------------------------------------------------------------
DEVICES = {GPU: [numa_device("gpu0", 0), numa_device("gpu1", 0), numa_device("gpu2", 1), numa_device("nic", )],
           "example.com/nic": [numa_device("vf0", 0, 1)]}


def _started(tmp_path, pods, strict=False, hint=P(0)):
    m = new_manager([0, 1], FixedAffinity(hint), str(tmp_path), DEVICES, strict_checkpoint=strict)
    m.start(lambda: pods)
    return m


def _file(tmp_path) -> bytes:
    with open(os.path.join(tmp_path, "device-plugins", "kubelet_internal_checkpoint"), "rb") as f:
        return f.read()


def test_registration_writes_the_registered_devices(tmp_path):
    _started(tmp_path, [])
    data = json.loads(_file(tmp_path))
    assert data["Data"] == {"PodDeviceEntries": None,
                            "RegisteredDevices": {"example.com/nic": ["vf0"], GPU: ["gpu0", "gpu1", "gpu2", "nic"]}}


def test_allocation_is_written_and_restored(tmp_path):
    p = pod("uid-1", [container("app", {GPU: 2, "example.com/nic": 1})])
    m = _started(tmp_path, [p])
    m.allocate(p, p.containers[0])
    blob = _file(tmp_path)
    entries = json.loads(blob)["Data"]["PodDeviceEntries"]
    assert [(e["ResourceName"], e["DeviceIDs"], e["AllocResp"]) for e in entries] == [
        ("example.com/nic", {"0": ["vf0"], "1": ["vf0"]}, ""), (GPU, {"0": ["gpu0", "gpu1"]}, "")]
    again = _started(tmp_path, [p])
    assert again.checkpoint_error is None
    assert again.get_devices("uid-1", "app") == m.get_devices("uid-1", "app")
    assert again.allocated_devices() == m.allocated_devices()
    assert _file(tmp_path) == blob


def test_a_removed_pod_stays_in_the_file_until_the_next_write(tmp_path):
    active = [single("a", "c", {GPU: 1})]
    m = _started(tmp_path, active)
    m.allocate(active[0], active[0].containers[0])
    written = _file(tmp_path)
    active.clear()
    m.update_allocated_devices()
    assert m.get_devices("a", "c") is None and _file(tmp_path) == written  # kubelet does not write here
    b = single("b", "c", {GPU: 1})
    active.append(b)
    m.allocate(b, b.containers[0])
    assert b'"PodUID":"a"' not in _file(tmp_path)


# upstream's TestCheckpoint: two resources of pod1/con1, one of pod1/con2 and of pod2/con1, one device without
# topology for pod3/con3
R1, R2, R3 = "domain1.com/resource1", "domain2.com/resource2", "domain2.com/resource3"
UPSTREAM_ENTRIES = [
    CheckpointEntry("pod1", "con1", R1, {0: ["dev1", "dev2"]}, b""),
    CheckpointEntry("pod1", "con1", R2, {0: ["dev1", "dev2"]}, b""),
    CheckpointEntry("pod1", "con2", R1, {0: ["dev3"]}, b""),
    CheckpointEntry("pod2", "con1", R1, {0: ["dev4"]}, b""),
    CheckpointEntry("pod3", "con3", R3, {-1: ["dev5"]}, b""),
]
UPSTREAM_REGISTERED = {R1: ["dev1", "dev2", "dev3", "dev4", "dev5"], R2: ["dev1", "dev2"], R3: ["dev5"]}


def test_written_allocations_read_back_the_same(tmp_path):
    data = DeviceCheckpointData(UPSTREAM_ENTRIES, UPSTREAM_REGISTERED)
    assert read_checkpoint(encode_checkpoint(data)) == data
    _write(tmp_path, UPSTREAM_ENTRIES, UPSTREAM_REGISTERED)
    pods = [single(uid, "x", {}) for uid in ("pod1", "pod2", "pod3")]
    m = new_manager([0, 1], FixedAffinity(), str(tmp_path), {})
    m.start(lambda: pods)
    assert m.checkpoint_error is None and not m.skipped_entries
    assert m.get_devices("pod1", "con1") == {R1: {"dev1": (0,), "dev2": (0,)}, R2: {"dev1": (0,), "dev2": (0,)}}
    assert m.get_devices("pod1", "con2") == {R1: {"dev3": (0,)}}
    assert m.get_devices("pod2", "con1") == {R1: {"dev4": (0,)}}
    assert m.get_devices("pod3", "con3") == {R3: {"dev5": None}}
    assert m.allocated_devices() == {R1: {"dev1", "dev2", "dev3", "dev4"}, R2: {"dev1", "dev2"}, R3: {"dev5"}}
    assert all(m.is_device_plugin_resource(r) for r in UPSTREAM_REGISTERED)


def test_extended_resources_are_reset_once_the_checkpoint_is_gone(tmp_path):
    # upstream's TestResetExtendedResource: a written checkpoint means the node was not recreated
    m = new_manager([0], FixedAffinity(), str(tmp_path), {"domain.com/resource": [numa_device("dev1")]})
    m.start(lambda: [])
    assert not m.should_reset_extended_resource_capacity()
    os.remove(os.path.join(tmp_path, "device-plugins", "kubelet_internal_checkpoint"))
    assert m.should_reset_extended_resource_capacity()


def test_corrupted_file_is_ignored_as_kubelet_does_unless_strict(tmp_path):
    p = single("a", "c", {GPU: 1})
    _started(tmp_path, [p]).allocate(p, p.containers[0])
    path = os.path.join(tmp_path, "device-plugins", "kubelet_internal_checkpoint")
    blob = _file(tmp_path).replace(b'"Checksum":', b'"Checksum":1')
    with open(path, "wb") as f:
        f.write(blob)
    m = _started(tmp_path, [p])
    assert m.checkpoint_error is not None and m.checkpoint_error.reason == "checkpoint is corrupted"
    assert m.get_devices("a", "c") is None
    with open(path, "wb") as f:
        f.write(blob)
    with pytest.raises(DeviceCheckpointError, match="kubelet_internal_checkpoint: Checksum: checkpoint is corrupted"):
        _started(tmp_path, [p], strict=True)


def _write(tmp_path, entries, registered=None):
    os.makedirs(os.path.join(tmp_path, "device-plugins"), exist_ok=True)
    data = DeviceCheckpointData(entries, registered if registered is not None else {GPU: ["gpu0"]})
    with open(os.path.join(tmp_path, "device-plugins", "kubelet_internal_checkpoint"), "wb") as f:
        f.write(encode_checkpoint(data))


STRICT = [
    ("unknown device", CheckpointEntry("a", "c", GPU, {0: ["gpu9"]}, b""),
     "Data.PodDeviceEntries[0].DeviceIDs.0", 'device "gpu9" is not a device of "nvidia.com/gpu" on this node'),
    ("unknown resource", CheckpointEntry("a", "c", "example.com/fpga", {0: ["f0"]}, b""),
     "Data.PodDeviceEntries[0].ResourceName", 'resource "example.com/fpga" has no device plugin on this node'),
    ("NUMA node the machine lacks", CheckpointEntry("a", "c", GPU, {5: ["gpu0"]}, b""),
     "Data.PodDeviceEntries[0].DeviceIDs.5", "NUMA node 5 is not on this machine"),
    ("recorded on the wrong node", CheckpointEntry("a", "c", GPU, {1: ["gpu0"]}, b""),
     "Data.PodDeviceEntries[0].DeviceIDs", 'device "gpu0" is recorded on NUMA nodes [1] but its plugin reports [0]'),
]


@pytest.mark.parametrize("description,entry,where,reason", STRICT, ids=[s[0] for s in STRICT])
def test_strict_restore_names_what_the_node_lacks(tmp_path, description, entry, where, reason):
    _write(tmp_path, [entry])
    with pytest.raises(DeviceCheckpointError) as err:
        _started(tmp_path, [], strict=True)
    assert err.value.where == where and err.value.reason.startswith(reason)
    assert err.value.file.endswith("device-plugins/kubelet_internal_checkpoint")
    # kubelet itself restores it: the entry is kept until its pod is found inactive
    lenient = new_manager([0, 1], FixedAffinity(), str(tmp_path), DEVICES)
    lenient.start(lambda: [])
    assert lenient.checkpoint_error is None


def test_a_device_held_by_two_pods_is_refused_when_strict():
    data = DeviceCheckpointData([CheckpointEntry("a", "c", GPU, {0: ["gpu0"]}, b""),
                                 CheckpointEntry("b", "c", GPU, {0: ["gpu0"]}, b"")], {GPU: ["gpu0"]})
    problems = check_against_node(data, DEVICES, [0, 1])
    assert [p.reason for p in problems] == ['device "gpu0" is also held by a/c']


def test_an_entry_whose_answer_does_not_decode_is_skipped(tmp_path):
    bad = CheckpointEntry("a", "c", GPU, {0: ["gpu0"]}, b"\x0a\x05ab")  # a length past the end
    good = CheckpointEntry("b", "c", GPU, {0: ["gpu1"]}, base64.b64decode("Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh"))
    _write(tmp_path, [bad, good], {GPU: ["gpu0", "gpu1"]})
    pods = [single("a", "c", {GPU: 1}), single("b", "c", {GPU: 1})]
    m = _started(tmp_path, pods)
    assert [(e.pod_uid, why) for e, why in m.skipped_entries] == [("a", "proto: cannot parse invalid wire-format data")]
    assert m.get_devices("a", "c") is None and m.get_devices("b", "c") == {GPU: {"gpu1": (0,)}}
    assert m.allocated_devices() == {GPU: {"gpu1"}}


def test_a_resource_only_the_checkpoint_names_has_no_healthy_device(tmp_path):
    _write(tmp_path, None, {"example.com/gone": ["x"]})
    m = _started(tmp_path, [])
    p = single("p", "c", {"example.com/gone": 1})
    assert m.get_topology_hints(p, p.containers[0]) == {"example.com/gone": None}
    with pytest.raises(Exception, match="no healthy devices present; cannot allocate unhealthy devices example.com/gone"):
        m.allocate(p, p.containers[0])
    assert json.loads(_file(tmp_path))["Data"]["RegisteredDevices"]["example.com/gone"] == []


def test_extended_resource_capacity_is_reset_only_without_a_checkpoint(tmp_path):
    m = new_manager([0], FixedAffinity(), str(tmp_path), {})
    m.start(lambda: [])
    assert m.should_reset_extended_resource_capacity()  # no plugin registered: nothing written yet
    m.update_devices(GPU, [numa_device("gpu0", 0)])
    assert not m.should_reset_extended_resource_capacity()


class _FailingRename(NoSyncFileOps):
    """FileOps whose rename fails (a read-only folder at the last step)."""

    def rename(self, src, dst):
        raise PermissionError(13, "Permission denied")


def test_a_checkpoint_that_cannot_be_written(tmp_path):
    p = single("p", "c", {GPU: 1})
    m = new_manager([0, 1], FixedAffinity(P(0)), str(tmp_path), DEVICES)
    m.file_ops = _FailingRename()
    m.start(lambda: [p])
    assert m.write_error is not None  # registration: kubelet logs it and goes on
    with pytest.raises(Exception) as err:
        m.allocate(p, p.containers[0])  # allocation: the error is Allocate's
    assert str(err.value).startswith('failed to write checkpoint file "kubelet_internal_checkpoint": rename ')
    assert str(err.value).endswith(": permission denied")
