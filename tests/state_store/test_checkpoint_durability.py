"""Durable checkpoint writes: a failure or a crash at any step leaves the old file or the new one."""
from __future__ import annotations

import os

import pytest

from state.checkpoint import read_checkpoint
from state.checkpoint_writer import encode_checkpoint
from state.checkpoint_manager import CheckpointManager, FileOps, StoreError, write_file
from state import CHECKPOINT_FILE_NAME
from state.state_checkpoint import new_checkpoint_state
from state.types import Block, MemoryTable, NUMANodeState

MACHINE = {0: NUMANodeState(1, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, [0])}
OLD = encode_checkpoint("Static", MACHINE, {})
NEW = encode_checkpoint("Static", MACHINE, {"pod": {"c": [Block([0], "memory", 512)]}})
STEPS = ["create_temp", "write", "fsync", "close", "rename", "fsync_dir"]


def snapshot(directory: str) -> dict[str, bytes]:
    """Every file in the folder and its bytes: the disk as a crash at this instant leaves it."""
    out = {}
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), "rb") as f:
            out[name] = f.read()
    return out


class Recorder(FileOps):
    """Records the calls; can fail (after snapshotting the folder) at one step."""

    def __init__(self, directory: str, fail_at: str | None = None, partial: bool = False):
        self.directory = directory
        self.fail_at = fail_at
        self.partial = partial
        self.calls: list[str] = []
        self.crash_view: dict[str, bytes] | None = None
        self.temp_modes: list[int] = []

    def _step(self, name: str) -> None:
        self.calls.append(name)
        if name == self.fail_at:
            self.crash_view = snapshot(self.directory)
            raise OSError(5, "Input/output error")

    def create_temp(self, directory, prefix):
        self._step("create_temp")
        fd, path = super().create_temp(directory, prefix)
        self.temp_modes.append(os.stat(path).st_mode & 0o777)
        self.temp_paths = [path]
        return fd, path

    def write(self, fd, data):
        if self.fail_at == "write" and self.partial:
            os.write(fd, bytes(data[: len(data) // 2]))
        self._step("write")
        return super().write(fd, data)

    def fsync(self, fd):
        self._step("fsync")
        super().fsync(fd)

    def close(self, fd):
        self._step("close")
        super().close(fd)

    def rename(self, src, dst):
        self._step("rename")
        super().rename(src, dst)

    def fsync_dir(self, directory):
        self._step("fsync_dir")
        super().fsync_dir(directory)


def test_write_sequence_and_temporary_file(tmp_path) -> None:
    ops = Recorder(str(tmp_path))
    target = str(tmp_path / CHECKPOINT_FILE_NAME)
    write_file(ops, target, NEW)
    assert ops.calls == STEPS
    assert ops.temp_modes == [0o600]
    temp = ops.temp_paths[0]
    assert os.path.dirname(temp) == str(tmp_path) and os.path.basename(temp).startswith(".")
    assert not os.path.exists(temp)
    assert open(target, "rb").read() == NEW
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("partial", [False, True], ids=["fails", "fails after half the bytes"])
@pytest.mark.parametrize("step", STEPS)
def test_failure_at_every_step_leaves_old_or_new(tmp_path, step, partial) -> None:
    if partial and step != "write":
        pytest.skip("partial writes only apply to the write step")
    target = tmp_path / CHECKPOINT_FILE_NAME
    target.write_bytes(OLD)
    ops = Recorder(str(tmp_path), fail_at=step, partial=partial)
    with pytest.raises(StoreError) as info:
        write_file(ops, str(target), NEW)
    assert "input/output error" in str(info.value)
    # a crash at that instant: the checkpoint is whole, old before the rename, new after it
    crash = ops.crash_view
    assert crash is not None
    expected = NEW if step == "fsync_dir" else OLD
    assert crash[CHECKPOINT_FILE_NAME] == expected
    assert all(name.startswith(".") for name in crash if name != CHECKPOINT_FILE_NAME)
    read_checkpoint(crash[CHECKPOINT_FILE_NAME])
    # a reported failure: the same, and the temporary file is gone
    assert target.read_bytes() == expected
    assert os.listdir(tmp_path) == [CHECKPOINT_FILE_NAME]


@pytest.mark.parametrize("step", STEPS)
def test_state_survives_a_failed_write_at_every_step(tmp_path, step) -> None:
    ops = Recorder(str(tmp_path))
    state = new_checkpoint_state(str(tmp_path), CHECKPOINT_FILE_NAME, "Static", ops=ops)
    state.set_machine_state(MACHINE)
    ops.fail_at = step
    state.set_memory_blocks("pod", "c", [Block([0], "memory", 512)])  # logged, not raised
    assert state.last_store_error is not None
    restored = new_checkpoint_state(str(tmp_path), CHECKPOINT_FILE_NAME, "Static")
    if step == "fsync_dir":
        assert restored.get_memory_assignments() == {"pod": {"c": [Block([0], "memory", 512)]}}
    else:
        assert restored.get_memory_assignments() == {}
    assert restored.get_machine_state() == MACHINE


def test_temporary_files_are_not_checkpoints(tmp_path) -> None:
    (tmp_path / ".123456").write_bytes(b"{")
    manager = CheckpointManager(str(tmp_path))
    manager.write_blob(CHECKPOINT_FILE_NAME, OLD)
    assert manager.list_checkpoints() == [CHECKPOINT_FILE_NAME]


def test_memory_file_ops_keep_the_store_off_the_disk(tmp_path) -> None:
    from state.checkpoint_manager import MemoryFileOps

    folder = tmp_path / "never-created"
    ops = MemoryFileOps()
    state = new_checkpoint_state(str(folder), CHECKPOINT_FILE_NAME, "Static", ops=ops)
    state.set_memory_blocks("pod", "app", [Block([0], "memory", 1024)])
    assert not folder.exists()
    assert list(ops.files) == [str(folder / CHECKPOINT_FILE_NAME)]  # no temporary file left behind
    again = new_checkpoint_state(str(folder), CHECKPOINT_FILE_NAME, "Static", ops=ops)
    assert again.get_memory_blocks("pod", "app") == [Block([0], "memory", 1024)]
    assert read_checkpoint(ops.files[str(folder / CHECKPOINT_FILE_NAME)]).entries["pod"]["app"][0].size == 1024


# A SIGKILL at every boundary of the checkpoint writer's durable write: tests/crash (deterministic kill points).
