"""`cpu_manager_state`: kubelet's checksum vectors, the v4 -> v3 -> v2 loader, restore errors, and the
bytes written (cases shaped like state_checkpoint_test.go's TestCheckpointStateRestore)."""
from __future__ import annotations

import json
import os

import pytest

from kubeinputs.cpuset import CPUSet
from kubeinputs.checksum import string_checksum
from cpumanager.state import CHECKPOINT_FILE_NAME
from cpumanager.state.checkpoint import CheckpointV1, CheckpointV2, CheckpointV3, encode_checkpoint, read_checkpoint
from cpumanager.state.state_checkpoint import CPUStateError, new_checkpoint_state

NAME = "cpumanager_checkpoint_test"


def s(text):
    return CPUSet.parse(text)


def v4(data: str, data_checksum=None, **inline) -> str:
    """A v4 file: inline fields (as written, checksum 0), `data` and its checksum (computed unless given)."""
    doc = dict(inline)
    doc["data"] = data
    doc["dataChecksum"] = string_checksum(data) if data_checksum is None else data_checksum
    return json.dumps(doc)


# --- checksums of the legacy formats, from kubelet's tests -------------------------------------------------

LEGACY = [  # (name, checkpoint, stored checksum from kubelet's tests)
    ("v2: shared pool only", CheckpointV2("none", "4-6", {}), 354655845),
    ("v2: one pod", CheckpointV2("none", "1-3", {"pod": {"container1": "4-6", "container2": "1-3"}}), 3610638499),
    ("v1: no entries", CheckpointV1("none", "1-3", {}), 1694838852),
    ("v1: container IDs", CheckpointV1("none", "1-3", {"containerID1": "4-6", "containerID2": "1-3"}), 3680390589),
    ("v1: static", CheckpointV1("static", "7-9", {"containerID1": "4-6", "containerID2": "1-3"}), 2026311253),
    # written by 1.36's v3 writer, hashed under the struct's own name
    ("v3: no pod entries", CheckpointV3("static", "7-9", {"pod": {"container1": "4-6", "container2": "1-3"}}),
     1942532442),
    ("v3: pod entries", CheckpointV3("static", "1-2", {"pod1": {"container1": "5-6", "container2": "3-4"}},
                                     {"pod2": s("7-9")}), 2284712151),
    ("v3: pod entries, none", CheckpointV3("none", "1-3", {"pod1": {"container1": "4-6", "container2": "1-3"}},
                                           {"pod2": s("7-9")}), 751755688),
]


@pytest.mark.parametrize("name,checkpoint,stored", LEGACY, ids=[c[0] for c in LEGACY])
def test_legacy_checksums_verify(name, checkpoint, stored):
    """kubelet's stored checksums pass VerifyChecksum, and one changed value does not."""
    checkpoint.checksum = stored
    checkpoint.verify_checksum()
    checkpoint.checksum = stored + 1
    with pytest.raises(Exception, match="checkpoint is corrupted"):
        checkpoint.verify_checksum()


@pytest.mark.parametrize("checkpoint,expected", [(LEGACY[0][1], 354655845), (LEGACY[1][1], 3610638499)])
def test_v2_writer_hashes_under_the_legacy_name(checkpoint, expected):
    assert json.loads(checkpoint.marshal_checkpoint())["checksum"] == expected


def test_v1_checksum_is_the_legacy_name_hash():
    assert CheckpointV1("none", "1-3", {}).computed_checksum() == 1694838852


@pytest.mark.parametrize("data,expected", [
    ('{"policyName":"none","defaultCPUSet":"4-6"}', 657950972),
    ('{"policyName":"static","defaultCPUSet":"7-9","entries":{"pod":{"container1":"4-6","container2":"1-3"}}}',
     1420829534),
    ('{"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"7-9"}},'
     '"podEntries":{"pod":{"cpuSet":"4-10"}}}', 2328898362),
])
def test_data_checksum(data, expected):
    """The v4 `data` string's checksum (checksum.New of a string), as in kubelet's v4 vectors."""
    assert string_checksum(data) == expected


# --- the restore table ------------------------------------------------------------------------------------

POD = {"pod": {"container1": "4-6", "container2": "1-3"}}
V2_ONE_POD = '{"policyName": "none", "defaultCPUSet": "1-3", "entries": {"pod": {"container1": "4-6", "container2": "1-3"}}, "checksum": 3610638499}'
V3_PODS = ('{"policyName": "static", "defaultCPUSet": "1-2", "entries": {"pod1": {"container1": "5-6", "container2": "3-4"}},'
           ' "podEntries": {"pod2": {"cpuSet": "7-9"}}, "checksum": 2284712151}')
DATA_PODS = ('{"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"7-9"}},'
             '"podEntries":{"pod":{"cpuSet":"4-10"}}}')

# (description, gate PodLevelResourceManagers, content, policy, error, (default, assignments, pod entries))
RESTORE = [
    ("non-existing checkpoint", False, "", "none", None, ("", {}, {})),
    ("v2: default cpu set", False,
     '{"policyName": "none", "defaultCPUSet": "4-6", "entries": {}, "checksum": 354655845}', "none", None, ("4-6", {}, {})),
    ("v2: valid checkpoint", False, V2_ONE_POD, "none", None, ("1-3", POD, {})),
    ("v2: a stored zero checksum is not checked", False, V2_ONE_POD.replace("3610638499", "0"), "none", None,
     ("1-3", POD, {})),
    ("v2: static, gate on", True, '{"policyName": "static", "defaultCPUSet": "7-9", "entries": '
     '{"pod": {"container1": "4-6", "container2": "1-3"}}, "checksum": 1942532442}', "static", None, ("7-9", POD, {})),
    ("v2: invalid checksum", False,
     '{"policyName": "none", "defaultCPUSet": "4-6", "entries": {}, "checksum": 1337}', "none",
     "checkpoint is corrupted", None),
    ("invalid JSON", False, "{", "none", "unexpected end of JSON input", None),
    ("v2: invalid policy name", False,
     '{"policyName": "other", "defaultCPUSet": "1-3", "entries": {}, "checksum": 1394507217}', "none",
     'configured policy "none" differs from state checkpoint policy "other"', None),
    ("v1 file (container IDs): the oldest format read is v2", False,
     '{"policyName": "none", "defaultCPUSet": "1-3", "entries": {"containerID1": "4-6"}, "checksum": 3680390589}',
     "none", "json: cannot unmarshal string into Go struct field CPUManagerCheckpointV2.entries of type "
     "map[string]string", None),
    ("v3: pod entries, gate on", True, V3_PODS, "static", None,
     ("1-2", {"pod1": {"container1": "5-6", "container2": "3-4"}}, {"pod2": "7-9"})),
    ("v3: pod entries, gate off", False, V3_PODS, "static", None,
     ("1-2", {"pod1": {"container1": "5-6", "container2": "3-4"}}, {})),
    ("v4: default cpu set", False, v4('{"policyName":"none","defaultCPUSet":"4-6"}'), "none", None, ("4-6", {}, {})),
    ("v4: pod entries, gate on", True, v4(DATA_PODS), "static", None,
     ("1-3", {"pod": {"container1": "4-6", "container2": "7-9"}}, {"pod": "4-10"})),
    ("v4: pod entries, gate off", False, v4(DATA_PODS), "static", None,
     ("1-3", {"pod": {"container1": "4-6", "container2": "7-9"}}, {})),
    ("v4: the inline fields are ignored", False,
     v4('{"policyName":"none","defaultCPUSet":"4-6"}', policyName="other", defaultCpuSet="0", checksum=0), "none",
     None, ("4-6", {}, {})),
    ("v4: unknown fields in data are ignored", False,
     v4('{"policyName":"none","defaultCPUSet":"4-6","unknownField":"value"}'), "none", None, ("4-6", {}, {})),
    ("v4: invalid data checksum", False, v4('{"policyName":"none","defaultCPUSet":"4-6"}', 1234), "none",
     "could not load v4 checkpoint: checkpoint is corrupted", None),
    ("v4: invalid data JSON", False, v4("{", 1234), "none",
     "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: unexpected end of JSON input",
     None),
    ("v4: a data checksum without data", False, '{"dataChecksum": 1234}', "none",
     "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: unexpected end of JSON input",
     None),
    ("v4: data without checksum", False, '{"data": "{\\"policyName\\":\\"none\\",\\"defaultCPUSet\\":\\"4-6\\"}"}',
     "none", "could not load v4 checkpoint: checkpoint is corrupted", None),
    ("v4: unparsable default cpu set", False, v4('{"policyName":"none","defaultCPUSet":"1.3"}'), "none",
     'could not parse default CPU set "1.3": strconv.Atoi: parsing "1.3": invalid syntax', None),
    ("v4: unparsable assignment", False,
     v4('{"policyName":"static","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"asd"}}}'),
     "static", 'could not parse cpuset "asd" for container "container2" in pod "pod": strconv.Atoi: parsing "asd": '
     "invalid syntax", None),
    ("v4: unparsable pod entry", True,
     v4('{"policyName":"static","defaultCPUSet":"1-3","podEntries":{"pod":{"cpuSet":"x"}}}'), "static",
     'could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: failed to parse cpuset: '
     'strconv.Atoi: parsing "x": invalid syntax', None),
]


@pytest.mark.parametrize("description,gate,content,policy,error,expected", RESTORE, ids=[c[0] for c in RESTORE])
def test_restore(tmp_path, description, gate, content, policy, error, expected):
    if content:
        (tmp_path / NAME).write_text(content)
    if error is not None:
        with pytest.raises(CPUStateError) as err:
            new_checkpoint_state(str(tmp_path), NAME, policy, pod_level_resource_managers=gate)
        message = str(err.value)
        assert message.startswith("could not restore state from checkpoint: " + error), message
        assert message.endswith(f', please drain this node and delete the CPU manager checkpoint file '
                                f'"{tmp_path}/{NAME}" before restarting Kubelet')
        return
    state = new_checkpoint_state(str(tmp_path), NAME, policy, pod_level_resource_managers=gate)
    default, assignments, pods = expected
    assert state.get_default_cpu_set() == s(default)
    assert state.get_cpu_assignments() == {p: {c: s(v) for c, v in cs.items()} for p, cs in assignments.items()}
    assert state.get_pod_cpu_assignments() == {p: s(v) for p, v in pods.items()}


def test_a_missing_file_is_created_in_v4(tmp_path):
    new_checkpoint_state(str(tmp_path), CHECKPOINT_FILE_NAME, "none")
    written = (tmp_path / CHECKPOINT_FILE_NAME).read_bytes()
    data = '{"policyName":"none","defaultCpuSet":""}'
    expected = ('{"policyName":"none","defaultCpuSet":"","checksum":0,"data":' + json.dumps(data)
                + f',"dataChecksum":{string_checksum(data)}' + "}").encode()
    assert written == expected


def test_v4_bytes_and_round_trip(tmp_path):
    """The bytes kubelet writes: inline v3 fields (checksum 0) then data and its checksum; maps sorted."""
    blob = encode_checkpoint("static", s("0,5-7"), {"pod-b": {"c2": s("3"), "c1": s("1-2")}, "pod-a": {"c": s("4")}},
                             {"pod-b": s("1-3")})
    data = ('{"policyName":"static","defaultCpuSet":"0,5-7","entries":{"pod-a":{"c":"4"},"pod-b":{"c1":"1-2",'
            '"c2":"3"}},"podEntries":{"pod-b":{"cpuSet":"1-3"}}}')
    inline = ('"policyName":"static","defaultCpuSet":"0,5-7","entries":{"pod-a":{"c":"4"},"pod-b":{"c1":"1-2",'
              '"c2":"3"}},"podEntries":{"pod-b":{"cpuSet":"1-3"}},"checksum":0')
    assert blob == ("{" + inline + ',"data":' + json.dumps(data) + f',"dataChecksum":{string_checksum(data)}'
                    + "}").encode()
    loaded = read_checkpoint(blob, True)
    assert loaded.format == "v4" and loaded.pod_entries == {"pod-b": s("1-3")}
    assert loaded.entries == {"pod-a": {"c": "4"}, "pod-b": {"c1": "1-2", "c2": "3"}}


@pytest.mark.parametrize("fmt", ["v2", "v3", "v4"])
def test_every_written_format_reads_back(fmt):
    blob = encode_checkpoint("static", s("0-1"), {"p": {"c": s("2-3")}}, {"p": s("2-5")}, fmt)
    loaded = read_checkpoint(blob, True)
    assert loaded.format == fmt
    assert (loaded.policy_name, loaded.default_cpu_set, loaded.entries) == ("static", "0-1", {"p": {"c": "2-3"}})
    assert loaded.pod_entries == ({} if fmt == "v2" else {"p": s("2-5")})


def test_v4_file_reads_as_v2_in_older_kubelets():
    """Forward compatibility: the inline fields with checksum 0 load through the v2 reader (0 is unchecked)."""
    blob = encode_checkpoint("static", s("0-1"), {"p": {"c": s("2-3")}})
    old = CheckpointV2()
    from kubeinputs import gojson
    from cpumanager.state.checkpoint import V2_STRUCT
    gojson.unmarshal(blob, old, V2_STRUCT)
    old.verify_checksum()
    assert (old.policy_name, old.default_cpu_set, old.entries) == ("static", "0-1", {"p": {"c": "2-3"}})


def test_writes_follow_every_change_and_restore_the_same_state(tmp_path):
    state = new_checkpoint_state(str(tmp_path), NAME, "static", pod_level_resource_managers=True)
    state.set_default_cpu_set(s("0-3,8-11"))
    state.set_cpu_set("pod", "c1", s("4-5"))
    state.set_cpu_set("pod", "c2", s("6-7"))
    state.set_pod_cpu_set("pod", s("4-7"))
    state.delete("pod", "c2")
    again = new_checkpoint_state(str(tmp_path), NAME, "static", pod_level_resource_managers=True)
    assert again.get_default_cpu_set() == s("0-3,8-11")
    assert again.get_cpu_assignments() == {"pod": {"c1": s("4-5")}}
    assert again.get_pod_cpu_assignments() == {"pod": s("4-7")}
    # with the gate off, pod entries are neither restored nor written
    off = new_checkpoint_state(str(tmp_path), NAME, "static")
    assert off.get_pod_cpu_assignments() == {}
    off.set_default_cpu_set(s("0-3,8-11"))
    assert "podEntries" not in (tmp_path / NAME).read_text()


def test_deferred_writes_write_once(tmp_path):
    state = new_checkpoint_state(str(tmp_path), NAME, "static")
    path = tmp_path / NAME
    before = path.read_bytes()
    with state.deferred_writes():
        state.set_default_cpu_set(s("0-3"))
        state.set_cpu_set("p", "c", s("4"))
        assert path.read_bytes() == before
    assert path.read_bytes() == encode_checkpoint("static", s("0-3"), {"p": {"c": s("4")}})


def test_clear_state(tmp_path):
    state = new_checkpoint_state(str(tmp_path), NAME, "none")
    state.set_default_cpu_set(s("1,5,10"))
    state.set_cpu_assignments({"pod": {"container1": s("1,4")}})
    state.clear_state()
    assert state.get_default_cpu_set() == CPUSet() and state.get_cpu_set("pod", "container1") is None
    assert os.path.exists(tmp_path / NAME)
