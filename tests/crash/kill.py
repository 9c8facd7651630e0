"""Kill a writer at chosen points of its writes; after each kill the file must load and hold exactly
the state the kill point implies.

A target is (write(directory, state, j, ops), load(directory), expected(j)): write number j (0, 1, 2,
...) changes the state and writes it durably through `ops`, the project's `FileOps` seam. The writer is
a fork of this process whose `BoundaryOps` reports every write boundary on a pipe before making the
call: creating the temporary file, the first half of the data, the rest, fsync, close, the rename over
the old file, the folder fsync. The killer picks one boundary; the writer stops there (blocked on a pipe
nobody writes) and gets SIGKILL. No kill depends on how fast anything runs: the same kill point gives
the same file on any machine.

With n writes finished, a kill before write n's rename must leave expected(n - 1) on disk (expected(-1):
no file yet) and a kill after it expected(n): nothing in between is allowed.
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from state.checkpoint_manager import FileOps

CHECKPOINT = "memory_manager_state"
# The boundaries of one durable write, in order (state.checkpoint_manager.write_file).
BOUNDARIES = ("create", "write", "write-rest", "fsync", "close", "rename", "fsync_dir")
# From this boundary on the rename has happened: the new file is the one on disk.
AFTER_RENAME = {"fsync_dir"}


class BoundaryOps(FileOps):
    """FileOps that report each write boundary on `report_fd` before the call and stop at number
    `stop_at` until killed; a data write is split in two, so a kill can fall between its halves."""

    def __init__(self, report_fd: int, wait_fd: int, stop_at: int) -> None:
        self.report_fd, self.wait_fd, self.stop_at = report_fd, wait_fd, stop_at
        self.count = 0
        self._split: set[int] = set()

    def _boundary(self, kind: str) -> None:
        number = self.count
        self.count += 1
        os.write(self.report_fd, f"{number} {kind}\n".encode())
        if number == self.stop_at:
            os.read(self.wait_fd, 1)  # never written: the killer ends the process here

    def create_temp(self, directory: str, prefix: str) -> tuple[int, str]:
        self._boundary("create")
        return super().create_temp(directory, prefix)

    def write(self, fd: int, data: bytes) -> int:
        if fd not in self._split and len(data) > 1:
            self._boundary("write")
            self._split.add(fd)
            return super().write(fd, data[: len(data) // 2])
        self._boundary("write-rest")
        self._split.discard(fd)
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._boundary("fsync")
        super().fsync(fd)

    def close(self, fd: int) -> None:
        self._boundary("close")
        super().close(fd)

    def rename(self, src: str, dst: str) -> None:
        self._boundary("rename")
        super().rename(src, dst)

    def fsync_dir(self, directory: str) -> None:
        self._boundary("fsync_dir")
        super().fsync_dir(directory)


@dataclass
class Target:
    name: str
    write: Callable[[str, Any, int, FileOps], Any]  # (directory, writer state, j, ops) -> writer state
    load: Callable[[str], Any]
    expected: Callable[[int], Any]


# -- memory manager checkpoint (CheckpointState, kubelet's file) -------------------------------------------
def _cp_write(directory: str, state: Any, j: int, ops: FileOps) -> Any:
    from state.state_checkpoint import new_checkpoint_state
    from state.types import Block

    if j == 0:
        return new_checkpoint_state(directory, CHECKPOINT, "Static", ops=ops)  # writes the empty state
    state.set_memory_blocks(f"pod-{j - 1:05d}", "app", [Block(numa_affinity=[0], type="memory", size=j << 20)])
    return state


def _cp_load(directory: str) -> Any:
    from state.checkpoint import read_checkpoint

    path = os.path.join(directory, CHECKPOINT)
    if not os.path.exists(path):
        return None
    loaded = read_checkpoint(open(path, "rb").read())
    return {pod: containers["app"][0].size for pod, containers in (loaded.entries or {}).items()}


def _cp_expected(j: int) -> Any:
    if j < 0:
        return None
    return {f"pod-{i:05d}": (i + 1) << 20 for i in range(j)}


# -- resmgr claim records -----------------------------------------------------------------------------------
def _claims_write(directory: str, store: Any, j: int, ops: FileOps) -> Any:
    from memorymanager.resmgr.claims import ClaimAllocation, ClaimRecord, ClaimStore

    if store is None:
        store = ClaimStore(directory, ops=ops)
    store.put(ClaimRecord(f"claim-{j:05d}", f"c{j}", "default",
                          (ClaimAllocation("req", "mem0", 0, "memory", j << 20),), ()))
    return store


def _claims_load(directory: str) -> Any:
    from memorymanager.resmgr.claims import ClaimStore

    if not os.path.exists(os.path.join(directory, "claims.json")):
        return None
    store = ClaimStore(directory)
    store.load()
    return {r.uid: r.allocations[0].size for r in store.records()}


def _claims_expected(j: int) -> Any:
    return None if j < 0 else {f"claim-{i:05d}": i << 20 for i in range(j + 1)}


# -- resmgr container cache ---------------------------------------------------------------------------------
_POD = {"metadata": {"name": "web", "uid": "uid-web"},
        "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


def _cache_write(directory: str, cache: Any, j: int, ops: FileOps) -> Any:
    from memorymanager.resmgr.cache import Container, ContainerCache

    if cache is None:
        cache = ContainerCache(directory, ops=ops)
    cache.insert(Container(id=f"ctr-{j:05d}", pod=_POD, name="app", memset=str(j % 2)))
    return cache


def _cache_load(directory: str) -> Any:
    from memorymanager.resmgr.cache import CACHE_FILE, ContainerCache

    if not os.path.exists(os.path.join(directory, CACHE_FILE)):
        return None
    return {c.id: c.memset for c in ContainerCache(directory).containers()}


def _cache_expected(j: int) -> Any:
    return None if j < 0 else {f"ctr-{i:05d}": str(i % 2) for i in range(j + 1)}


TARGETS = {
    "checkpoint": Target("checkpoint", _cp_write, _cp_load, _cp_expected),
    "claims": Target("claims", _claims_write, _claims_load, _claims_expected),
    "cache": Target("cache", _cache_write, _cache_load, _cache_expected),
}


@dataclass
class Report:
    target: str
    kills: int = 0
    survived: int = 0  # the file loaded and held exactly the state the kill point implies
    mid_write: int = 0  # kills before the rename of the write in flight (its state was not written)
    writes: int = 0  # writes finished across all kills
    kinds: dict[str, int] = field(default_factory=dict)  # kills per boundary kind
    failures: list = field(default_factory=list)


def _child(target: Target, directory: str, report_fd: int, wait_fd: int, stop_at: int) -> None:
    ops = BoundaryOps(report_fd, wait_fd, stop_at)
    state = None
    j = 0
    while True:
        state = target.write(directory, state, j, ops)
        os.write(report_fd, b"done %d\n" % j)
        j += 1


def kill_at(target: Target, directory: str, stop_at: int) -> tuple[int, Optional[str], Any]:
    """Fork a writer, SIGKILL it when it stops at boundary `stop_at`: (writes finished, the boundary's
    kind or None if the writer ended before it, state on disk)."""
    report_r, report_w = os.pipe()
    wait_r, wait_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            os.close(report_r)
            os.close(wait_w)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _child(target, directory, report_w, wait_r, stop_at)
        finally:
            os._exit(3)
    os.close(report_w)
    os.close(wait_r)
    finished, kind = 0, None
    with os.fdopen(report_r, "rb") as stream:
        for line in stream:
            word, _, rest = line.decode().strip().partition(" ")
            if word == "done":
                finished += 1
            elif int(word) == stop_at:
                kind = rest
                break
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(wait_w)
    return finished, kind, target.load(directory)


def kill_points(writes: int, count: Optional[int] = None, seed: int = 12) -> list[int]:
    """Boundary numbers within the first `writes` writes: all of them, or `count` drawn with `seed`."""
    every = range(writes * len(BOUNDARIES))
    if count is None or count >= len(every):
        return list(every)
    return sorted(random.Random(seed).sample(every, count))


def run(target_name: str, points: Iterable[int], *, base: Optional[str] = None) -> Report:
    """One kill at each boundary number of `points`, each in a fresh folder."""
    target = TARGETS[target_name]
    report = Report(target_name)
    root = tempfile.mkdtemp(prefix=f"crash-{target_name}-", dir=base)
    try:
        for k in points:
            directory = os.path.join(root, str(k))
            os.mkdir(directory)
            finished, kind, on_disk = kill_at(target, directory, k)
            report.kills += 1
            report.writes += finished
            if kind is None:
                report.failures.append((k, finished, "the writer ended before this boundary"))
                continue
            report.kinds[kind] = report.kinds.get(kind, 0) + 1
            renamed = kind in AFTER_RENAME
            want = target.expected(finished if renamed else finished - 1)
            if on_disk == want:
                report.survived += 1
                report.mid_write += not renamed
            elif len(report.failures) < 10:
                report.failures.append((k, finished, kind, repr(on_disk)[:200], repr(want)[:200]))
            shutil.rmtree(directory, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report
