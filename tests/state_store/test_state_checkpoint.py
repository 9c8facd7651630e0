"""The checkpoint-backed state: kubelet's state_checkpoint_test.go cases, and more."""
from __future__ import annotations

import json
import logging
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from state.checkpoint import CheckpointV1, read_checkpoint
from state.checkpoint_writer import encode_checkpoint
from state.checkpoint_manager import FileOps
from state import CHECKPOINT_FILE_NAME
from state.state_checkpoint import StateError, new_checkpoint_state
from state.state_mem import MemoryState
from state.types import Block, MemoryTable, NUMANodeState, PodEntry

from tests.helpers.state_strategies import assignments, machine_states, pod_assignments

NAME = "memorymanager_checkpoint_test"
MS_JSON = '{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}}'
ENTRIES_JSON = '{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
POD_JSON = '{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
BOGUS_V1 = (
    '"policyName":"other","machineState":{"0":{"numberOfAssignments":5,"memoryMap":{"memory":{"total":1024,'
    '"systemReserved":256,"allocatable":768,"reserved":256,"free":512}},"cells":[]}},'
    '"entries":{"pod":{"containerX":[{"numaAffinity":[0],"type":"memory","size":128}]}},"checksum": 1234'
)
GOOD_V1 = f'"policyName":"static","machineState":{MS_JSON},"entries":{ENTRIES_JSON},"checksum": 4215593881'
DATA = '{"policyName":"static","machineState":' + MS_JSON + ',"entries":' + ENTRIES_JSON + "}"
DATA_PODS = DATA[:-1] + ',"podEntries":' + POD_JSON + "}"

MACHINE = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, [])}
ENTRIES = {"pod": {"container1": [Block([0], "memory", 512)]}}
PODS = {"pod": PodEntry([Block([0], "memory", 512)])}


def doc(*parts: str) -> str:
    return "{" + ",".join(parts) + "}"


def data(text: str) -> str:
    return '"data":' + json.dumps(text)


EMPTY = ({}, {}, {})
FULL = (MACHINE, ENTRIES, {})
FULL_PODS = (MACHINE, ENTRIES, PODS)

# (description, gate requirement, content, configured policy, expected error, expected state)
RESTORE_CASES = [
    ("Restore non-existing checkpoint", None, "", "none", None, EMPTY),
    ("Fail to restore checkpoint without data section", None, doc(GOOD_V1, '"dataChecksum": 1234'), "none",
     "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: unexpected end of JSON input", None),
    ("Fail to restore checkpoint without dataChecksum section", None, doc(GOOD_V1, data(DATA)), "none",
     "could not load v3 checkpoint: checkpoint is corrupted", None),
    ("Restore valid checkpoint", None, doc(BOGUS_V1, data(DATA), '"dataChecksum": 1849615440'), "static", None, FULL),
    ("Fail to restore checkpoint with invalid dataChecksum", None, doc(GOOD_V1, data(DATA), '"dataChecksum": 1234'), "none",
     "could not load v3 checkpoint: checkpoint is corrupted", None),
    ("Fail to restore checkpoint with invalid data JSON", None, doc(GOOD_V1, data("{"), '"dataChecksum": 1234'), "none",
     "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: unexpected end of JSON input", None),
    ("Fail to restore checkpoint with invalid JSON", None, "{", "none", "unexpected end of JSON input", None),
    ("Fail to restore checkpoint with invalid policy name", None, doc(BOGUS_V1, data(DATA), '"dataChecksum": 1849615440'), "none",
     '[memorymanager] configured policy "none" differs from state checkpoint policy "static"', None),
    ("Restore checkpoint ignoring unknown fields in data section", None,
     doc(BOGUS_V1, data('{"unknownField":"value",' + DATA[1:]), '"dataChecksum": 2100279793'), "static", None, FULL),
    ("Restore checkpoint from v1 (migration)", None, doc(GOOD_V1), "static", None, FULL),
    ("Restore checkpoint from v1 (migration) with checksum zeroed", None, doc(GOOD_V1.replace("4215593881", "0")), "static", None, FULL),
    ("Fail to restore checkpoint from v1 with invalid checksum", None,
     doc(GOOD_V1.replace('"numaAffinity"', '"affinity"').replace("4215593881", "101010")), "static", "checkpoint is corrupted", None),
    ("Restore checkpoint from v2 with PodLevelResourceManagers enabled", True,
     doc(GOOD_V1.replace(',"checksum": 4215593881', ""), f'"podEntries":{POD_JSON}', '"checksum": 1278640530'), "static", None, FULL_PODS),
    ("Restore checkpoint from v2 with PodLevelResourceManagers disabled", False,
     doc(GOOD_V1.replace(',"checksum": 4215593881', ""), f'"podEntries":{POD_JSON}', '"checksum": 1278640530'), "static", None, FULL),
    ("Restore checkpoint from v2 with zeroed checksum and with PodLevelResourceManagers disabled", False,
     doc(GOOD_V1.replace(',"checksum": 4215593881', ""), f'"podEntries":{POD_JSON}', '"checksum": 0'), "static", None, FULL),
    ("Fail to restore checkpoint from v2 with invalid checksum", None,
     doc(GOOD_V1.replace(',"checksum": 4215593881', ""), f'"podEntries":{POD_JSON}', '"checksum": 101010'), "static",
     "checkpoint is corrupted", None),
    ("Restore checkpoint from v3 with PodLevelResourceManagers enabled", True,
     doc(BOGUS_V1, '"podEntries":{"podY":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":64}]}}',
         data(DATA_PODS), '"dataChecksum": 637296054'), "static", None, FULL_PODS),
    ("Restore checkpoint from v3 with PodLevelResourceManagers disabled", False,
     doc(BOGUS_V1, '"podEntries":{"podY":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":64}]}}',
         data(DATA_PODS), '"dataChecksum": 637296054'), "static", None, FULL),
]


def expected_view(expected):
    s = MemoryState()
    s.set_machine_state(expected[0])
    s.set_memory_assignments(expected[1])
    s.set_pod_memory_assignments(expected[2])
    return s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments()


def view(state):
    return state.get_machine_state(), state.get_memory_assignments(), state.get_pod_memory_assignments()


@pytest.mark.parametrize("gate", [False, True], ids=["PodLevelResourceManagers=false", "PodLevelResourceManagers=true"])
@pytest.mark.parametrize("case", RESTORE_CASES, ids=[c[0] for c in RESTORE_CASES])
def test_checkpoint_state_restore(tmp_path, case, gate) -> None:
    description, requirement, content, policy, error, expected = case
    if requirement is not None and requirement != gate:
        pytest.skip("feature gate requirement")
    if content:
        (tmp_path / NAME).write_text(content)
    if error is not None:
        with pytest.raises(StateError) as info:
            new_checkpoint_state(str(tmp_path), NAME, policy, pod_level_resource_managers=gate)
        assert str(info.value) == (
            f"could not restore state from checkpoint: {error}, please drain this node and delete the memory "
            f'manager checkpoint file "{tmp_path / NAME}" before restarting Kubelet'
        )
        return
    restored = new_checkpoint_state(str(tmp_path), NAME, policy, pod_level_resource_managers=gate)
    assert view(restored) == expected_view(expected)


def test_missing_checkpoint_is_created_in_v3(tmp_path) -> None:
    state = new_checkpoint_state(str(tmp_path), CHECKPOINT_FILE_NAME, "None")
    path = tmp_path / CHECKPOINT_FILE_NAME
    assert path.read_bytes() == encode_checkpoint("None", {}, {}, fmt="v3")
    assert json.loads(path.read_bytes())["checksum"] == 4236770233
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert state.restored_format is None
    assert [p.name for p in tmp_path.iterdir()] == [CHECKPOINT_FILE_NAME]


@pytest.mark.parametrize("gate", [False, True])
def test_checkpoint_state_store(tmp_path, gate) -> None:
    # TestCheckpointStateStore (and its PodLevelResourceManagers variant)
    machine = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 1024, 512)}, None)}
    entries = {"pod": {"container1": [Block([0], "memory", 1024)]}}
    pods = {"pod": PodEntry([Block([0], "memory", 512)])}
    cs1 = new_checkpoint_state(str(tmp_path), NAME, "static", pod_level_resource_managers=gate)
    cs1.set_machine_state(machine)
    cs1.set_memory_assignments(entries)
    cs1.set_pod_memory_assignments(pods)
    cs2 = new_checkpoint_state(str(tmp_path), NAME, "static", pod_level_resource_managers=gate)
    assert view(cs2) == expected_view((machine, entries, pods if gate else {}))
    assert cs2.restored_format == "v3"


def test_checkpoint_state_helpers_and_clear(tmp_path) -> None:
    state = new_checkpoint_state(str(tmp_path), NAME, "static")
    state.set_machine_state(MACHINE)
    assert state.get_machine_state() == MACHINE
    state.set_memory_blocks("pod", "c1", [Block([0], "memory", 512)])
    assert state.get_memory_blocks("pod", "c1") == [Block([0], "memory", 512)]
    state.delete("pod", "c1")
    assert state.get_memory_blocks("pod", "c1") is None
    state.set_memory_assignments(ENTRIES)
    state.clear_state()
    assert state.get_machine_state() == {} and state.get_memory_assignments() == {}
    again = new_checkpoint_state(str(tmp_path), NAME, "static")
    assert view(again) == EMPTY


def test_every_change_is_written_at_once(tmp_path) -> None:
    state = new_checkpoint_state(str(tmp_path), NAME, "Static", pod_level_resource_managers=True)
    path = tmp_path / NAME

    def on_disk():
        loaded = read_checkpoint(path.read_bytes())
        return loaded.machine_state, loaded.entries, loaded.pod_entries

    steps = [
        lambda: state.set_machine_state(MACHINE),
        lambda: state.set_memory_blocks("p", "c", [Block([0], "memory", 7)]),
        lambda: state.set_memory_assignments(ENTRIES),
        lambda: state.set_pod_memory_blocks("p", [Block([0], "memory", 7)]),
        lambda: state.set_pod_memory_assignments(PODS),
        lambda: state.delete("pod", "container1"),
        lambda: state.delete_pod("pod"),
        lambda: state.clear_state(),
    ]
    for step in steps:
        step()
        assert on_disk() == view(state)
        assert path.read_bytes() == state.checkpoint_bytes()


def test_pod_entries_are_not_written_without_the_gate(tmp_path) -> None:
    state = new_checkpoint_state(str(tmp_path), NAME, "Static")
    state.set_pod_memory_blocks("p", [Block([0], "memory", 7)])
    assert b"podEntries" not in (tmp_path / NAME).read_bytes()


@pytest.mark.parametrize("fmt", ["v1", "v2", "v3"])
def test_write_format_is_selectable(tmp_path, fmt) -> None:
    state = new_checkpoint_state(str(tmp_path), NAME, "static", pod_level_resource_managers=True, write_format=fmt)
    state.set_machine_state(MACHINE)
    state.set_memory_assignments(ENTRIES)
    state.set_pod_memory_assignments(PODS)
    blob = (tmp_path / NAME).read_bytes()
    assert blob == encode_checkpoint("static", MACHINE, ENTRIES, PODS, fmt=fmt)
    keys = list(json.loads(blob))
    assert ("data" in keys) == (fmt == "v3") and ("podEntries" in keys) == (fmt == "v2")
    again = new_checkpoint_state(str(tmp_path), NAME, "static", pod_level_resource_managers=True, write_format=fmt)
    assert again.restored_format == fmt
    assert view(again) == expected_view((MACHINE, ENTRIES, {} if fmt == "v1" else PODS))


def test_unknown_write_format(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown checkpoint format 'v9'"):
        new_checkpoint_state(str(tmp_path), NAME, "None", write_format="v9")


def test_v3_file_stays_readable_by_a_v1_only_kubelet(tmp_path) -> None:
    # rollback: a 1.35 kubelet reads only the v1 fields and verifies `checksum` strictly
    state = new_checkpoint_state(str(tmp_path), NAME, "Static", pod_level_resource_managers=True)
    state.set_machine_state(MACHINE)
    state.set_memory_assignments(ENTRIES)
    state.set_pod_memory_assignments(PODS)
    old = CheckpointV1()
    old.unmarshal_checkpoint((tmp_path / NAME).read_bytes())
    assert old.checksum != 0 and old.legacy_checksum() == old.checksum
    assert (old.policy_name, old.machine_state, old.entries) == ("Static", MACHINE, ENTRIES)


def test_policy_names_compare_exactly(tmp_path) -> None:
    new_checkpoint_state(str(tmp_path), NAME, "Static")
    with pytest.raises(StateError, match='configured policy "static" differs from state checkpoint policy "Static"'):
        new_checkpoint_state(str(tmp_path), NAME, "static")


def test_wrapped_path_is_cleaned_like_filepath_join(tmp_path) -> None:
    (tmp_path / NAME).write_text("{")
    with pytest.raises(StateError) as info:
        new_checkpoint_state(str(tmp_path) + "//./", NAME, "None")
    assert f'checkpoint file "{tmp_path / NAME}" before' in str(info.value)


def test_null_memory_table_is_reported_not_crashed(tmp_path) -> None:
    blob = encode_checkpoint("Static", {0: NUMANodeState(0, {"memory": None}, [0])}, {})
    (tmp_path / NAME).write_bytes(blob)
    with pytest.raises(StateError, match='kubelet would crash.*NUMA node 0 resource "memory" is null'):
        new_checkpoint_state(str(tmp_path), NAME, "Static")


def test_state_dir_that_is_a_file(tmp_path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(StateError) as info:
        new_checkpoint_state(str(target), NAME, "None")
    assert str(info.value).startswith(f"could not restore state from checkpoint: open {target}/{NAME}: not a directory")


def test_state_dir_that_cannot_be_created(tmp_path) -> None:
    class NoMkdir(FileOps):
        def mkdir_all(self, path: str) -> None:
            raise PermissionError(13, "Permission denied")

    with pytest.raises(StateError, match=r"^failed to initialize checkpoint manager: mkdir .*: permission denied$"):
        new_checkpoint_state(str(tmp_path / "sub"), NAME, "None", ops=NoMkdir())


def test_write_errors_are_logged_and_the_state_still_changes(tmp_path, caplog) -> None:
    class Flaky(FileOps):
        fail = False

        def fsync(self, fd: int) -> None:
            if self.fail:
                raise OSError(28, "No space left on device")
            super().fsync(fd)

    ops = Flaky()
    state = new_checkpoint_state(str(tmp_path), NAME, "Static", ops=ops)
    before = (tmp_path / NAME).read_bytes()
    ops.fail = True
    with caplog.at_level(logging.ERROR, logger="memorymanager.state"):
        state.set_machine_state(MACHINE)
    assert state.get_machine_state() == MACHINE
    assert "no space left on device" in str(state.last_store_error)
    assert "Failed to store state to checkpoint" in caplog.text
    assert (tmp_path / NAME).read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == [NAME]  # the temporary file was removed
    ops.fail = False
    state.set_memory_assignments(ENTRIES)
    assert state.last_store_error is None
    assert view(new_checkpoint_state(str(tmp_path), NAME, "Static")) == expected_view(FULL)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    machine_states(False),
    assignments(False),
    pod_assignments(False, empty_block_lists=False),
    st.booleans(),
    st.sampled_from(["v1", "v2", "v3"]),
)
def test_store_round_trip(tmp_path_factory, ms, entries, pods, gate, fmt) -> None:
    directory = str(tmp_path_factory.mktemp("state"))
    state = new_checkpoint_state(directory, NAME, "Static", pod_level_resource_managers=gate, write_format=fmt)
    state.set_machine_state(ms)
    state.set_memory_assignments(entries)
    state.set_pod_memory_assignments(pods)
    written = (open(os.path.join(directory, NAME), "rb")).read()
    again = new_checkpoint_state(directory, NAME, "Static", pod_level_resource_managers=gate, write_format=fmt)
    keeps_pods = gate and fmt != "v1"
    assert view(again) == expected_view((ms, entries, pods if keeps_pods else {}))
    assert again.checkpoint_bytes() == written
