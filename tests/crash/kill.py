"""Kill a writer at random moments; after each kill the file must load and hold the state before or
after the write that was interrupted.

A target is (write(directory, j), load(directory), expected(j)): write number j (0, 1, 2, ...) changes
the state and writes it durably; the child reports each finished write on a pipe. With n writes
reported when it died, the file on disk must load as expected(n - 1) or expected(n) (the write in
flight, done or not; expected(-1) is "no file yet"). The child is a fork of this process, so a kill
costs milliseconds and no interpreter start.
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

CHECKPOINT = "memory_manager_state"


@dataclass
class Target:
    name: str
    write: Callable[[str, Any, int], Any]  # (directory, writer state, j) -> writer state
    load: Callable[[str], Any]
    expected: Callable[[int], Any]


# -- memory manager checkpoint (CheckpointState, kubelet's file) -------------------------------------------
def _cp_write(directory: str, state: Any, j: int) -> Any:
    from state.state_checkpoint import new_checkpoint_state
    from state.types import Block

    if j == 0:
        return new_checkpoint_state(directory, CHECKPOINT, "Static")  # writes the empty state
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
def _claims_write(directory: str, store: Any, j: int) -> Any:
    from memorymanager.resmgr.claims import ClaimAllocation, ClaimRecord, ClaimStore

    if store is None:
        store = ClaimStore(directory)
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


def _cache_write(directory: str, cache: Any, j: int) -> Any:
    from memorymanager.resmgr.cache import Container, ContainerCache

    if cache is None:
        cache = ContainerCache(directory)
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
    survived: int = 0  # the file loaded and held the state before or after the interrupted write
    mid_write: int = 0  # kills that left the state before the write in flight (the write was cut)
    writes: int = 0  # writes finished across all runs
    failures: list = field(default_factory=list)


def _child(target: Target, directory: str, report_fd: int) -> None:
    state = None
    j = 0
    os.write(report_fd, b"ready\n")  # the clock of the kill starts here, not at the fork (a loaded machine
    while True:                       # may not run the child for tens of milliseconds)
        state = target.write(directory, state, j)
        os.write(report_fd, b"%d\n" % j)
        j += 1


def kill_once(target: Target, directory: str, delay: float) -> tuple[int, Any]:
    """Fork a writer, SIGKILL it after `delay` seconds; (writes reported, state on disk)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            os.close(read_fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _child(target, directory, write_fd)
        finally:
            os._exit(3)
    os.close(write_fd)
    data = b""
    while b"ready\n" not in data:  # the writer runs
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        data += chunk
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(read_fd)
    reported = data.count(b"\n") - 1 if data else 0
    return reported, target.load(directory)


def run(target_name: str, kills: int, *, seed: int = 12, max_delay: float = 0.03,
        base: Optional[str] = None) -> Report:
    """`kills` kills of the target's writer, each in a fresh folder, at uniform random moments."""
    target = TARGETS[target_name]
    rng = random.Random(seed)
    report = Report(target_name)
    root = tempfile.mkdtemp(prefix=f"crash-{target_name}-", dir=base)
    try:
        for k in range(kills):
            directory = os.path.join(root, str(k))
            os.mkdir(directory)
            reported, on_disk = kill_once(target, directory, rng.uniform(0, max_delay))
            report.kills += 1
            report.writes += reported
            before, after = target.expected(reported - 1), target.expected(reported)
            if on_disk == after:
                report.survived += 1
            elif on_disk == before:
                report.survived += 1
                report.mid_write += 1
            elif len(report.failures) < 10:
                report.failures.append((k, reported, repr(on_disk)[:200]))
            shutil.rmtree(directory, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report
