"""Kill the serve host at every file operation of a mixed Admit/Remove script, restart it, and check
that PodResources and the checkpoint agree, and that memory is conserved (issue 18, item 2).

The kill points are deterministic: a `FileOps` that counts every file system call of the host
(checkpoint and `served_pods.json` writes alike: create, write, fsync, close, rename, folder fsync,
remove) sends SIGKILL to its own process before call number k. The host runs in a fork of this
process and reports each operation it starts and each answer it gets on a pipe. After the kill a
new host starts on the same folder (a restart) and:

- no temporary file of an interrupted write is left in the folder;
- every pod PodResources lists has, container by container, exactly the blocks the checkpoint holds
  for it, and the checkpoint holds nothing for a pod that is not listed (no pod active with zero
  memory, no memory reserved for an unlisted pod);
- every acknowledged admission not followed by an acknowledged removal is listed, and nothing is
  listed that was never admitted or whose removal was acknowledged;
- nothing is given out twice or lost: per NUMA node reserved + free is allocatable, and what the
  nodes have reserved is what the containers' blocks hold;
- the restarted node admits again.

Each kill point is then followed by a second script on the restored folder, killed again, and
checked again: the checks hold after every restart.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from typing import Any, Optional

import memorymanager
from memorymanager.server.host import PODS_FILE_NAME, NodeHost
from state.checkpoint import read_checkpoint
from state.checkpoint_manager import FileOps

KUBELET = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
CHECKPOINT = "memory_manager_state"


def _container(name: str, memory: str, restart_policy: Optional[str] = None) -> dict:
    doc: dict = {"name": name, "resources": {"limits": {"cpu": "1", "memory": memory}}}
    if restart_policy:
        doc["restartPolicy"] = restart_policy
    return doc


def _pod(name: str, memory: str = "1Gi", apps: int = 1, init: bool = False) -> dict:
    spec: dict = {"containers": [_container(f"app{i}", memory) for i in range(apps)]}
    if init:
        spec["initContainers"] = [_container("setup", "2Gi"), _container("side", "256Mi", "Always")]
    return {"metadata": {"name": name, "namespace": "crash"}, "spec": spec}


BURSTABLE = {"metadata": {"name": "burst", "namespace": "crash"},
             "spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "1Gi"}}}]}}

# (op, argument): admissions of pods of one and several containers (with an init container and a
# sidecar), a Burstable pod (nothing pinned), a refusal, removals of pods and of one container
FIRST = [("admit", _pod("a")), ("admit", _pod("b", "2Gi", apps=2, init=True)), ("remove", "a"),
         ("admit", BURSTABLE), ("admit", _pod("huge", "40Gi")), ("remove_container", ("b", "app1")),
         ("remove", "b"), ("admit", _pod("c", "3Gi"))]
SECOND = [("admit", _pod("d", "1Gi", apps=3)), ("remove", "burst"), ("admit", _pod("e", "2Gi", init=True)),
          ("remove", "c"), ("admit", _pod("f"))]


class KillAt(FileOps):
    """FileOps that SIGKILLs its own process before file call number `at` (None: never); counts calls."""

    def __init__(self, at: Optional[int] = None) -> None:
        self.at = at
        self.calls = 0

    def _tick(self) -> None:
        self.calls += 1
        if self.at is not None and self.calls == self.at:
            os.kill(os.getpid(), signal.SIGKILL)

    def create_temp(self, directory: str, prefix: str) -> tuple[int, str]:
        self._tick()
        return super().create_temp(directory, prefix)

    def write(self, fd: int, data: bytes) -> int:
        self._tick()
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._tick()
        super().fsync(fd)

    def close(self, fd: int) -> None:
        self._tick()
        super().close(fd)

    def rename(self, src: str, dst: str) -> None:
        self._tick()
        super().rename(src, dst)

    def fsync_dir(self, directory: str) -> None:
        self._tick()
        super().fsync_dir(directory)

    def remove(self, path: str) -> None:
        self._tick()
        super().remove(path)


def start_host(folder: str, ops: Optional[FileOps] = None) -> NodeHost:
    """The serve host on `folder`, as `memorymanager serve --state-dir folder` builds it."""
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 16 << 30), KUBELET, state_dir=folder)
    return NodeHost(node, pods_file=os.path.join(folder, PODS_FILE_NAME), file_ops=ops)


def run_script(host: NodeHost, script: list, report: Any) -> None:
    """Run the operations, reporting `start i` before and `ack i admitted` after each."""
    for i, (op, arg) in enumerate(script):
        report(f"start {i}")
        if op == "admit":
            answer = host.admit(json.dumps(arg))
            report(f"ack {i} {int(answer.admitted)}")
        else:
            try:
                host.remove(*((arg,) if op == "remove" else arg))
                report(f"ack {i} 1")
            except memorymanager.Error:  # a pod that was refused, or removed already: NOT_FOUND
                report(f"ack {i} 0")


def count_calls(script: list, folder: str, before: Optional[list] = None) -> int:
    """File calls of a run that is not killed (start plus `script`), after `before` ran unkilled."""
    if before is not None:
        run_script(start_host(folder), before, lambda _: None)
    ops = KillAt()
    run_script(start_host(folder, ops), script, lambda _: None)
    return ops.calls


def killed_run(folder: str, script: list, at: int) -> list[str]:
    """Fork a host on `folder` that runs `script` and dies before file call `at`; its reports."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.close(read_fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            run_script(start_host(folder, KillAt(at)), script,
                       lambda line: os.write(write_fd, line.encode() + b"\n"))
            code = 0  # the kill point lies past the script's last call
        finally:
            os._exit(code)
    os.close(write_fd)
    os.waitpid(pid, 0)
    data = b""
    while chunk := os.read(read_fd, 65536):
        data += chunk
    os.close(read_fd)
    return data.decode().split()


@dataclass
class Ledger:
    """What the clients know: pods whose admission or removal was acknowledged, and those in flight."""

    acked: set = field(default_factory=set)  # admitted, acknowledged, not removed since
    removed: set = field(default_factory=set)  # removal acknowledged
    in_flight: set = field(default_factory=set)  # the operation that was cut

    def replay(self, script: list, reports: list[str]) -> None:
        lines = " ".join(reports).split("start ")[1:]
        for chunk in lines:
            words = chunk.split()
            op, arg = script[int(words[0])]
            name = arg["metadata"]["name"] if op == "admit" else arg if op == "remove" else None
            done = len(words) > 1 and words[1] == "ack"
            if not done:
                if name is not None:
                    self.in_flight.add(name)
                continue
            if op == "admit" and words[3] == "1":
                self.acked.add(name)
                self.removed.discard(name)
            elif op == "remove" and words[3] == "1":
                self.acked.discard(name)
                self.removed.add(name)


def check(folder: str, ledger: Ledger) -> list[str]:
    """Restart on `folder` and compare PodResources with the checkpoint and the ledger; the problems.
    The ledger then holds what the restart settled: the pods listed are the acknowledged ones."""
    host = start_host(folder)
    problems = []
    leftovers = sorted(n for n in os.listdir(folder) if n.startswith("."))
    if leftovers:
        problems.append(f"temporary files left: {leftovers}")
    loaded = read_checkpoint(open(os.path.join(folder, CHECKPOINT), "rb").read())
    stored = {uid: {c: b for c, b in containers.items() if b} for uid, containers in (loaded.entries or {}).items()}
    views = {v.uid: v for v in host.pod_views()}
    for uid in stored:
        if uid not in views:
            problems.append(f"the checkpoint holds memory of {uid}, which PodResources does not list")
    problems.extend(conservation_problems(loaded))
    for uid, view in views.items():
        listed = {c.name: [(sorted(b.numa_affinity), b.type, b.size) for b in c.memory] for c in view.containers if c.memory}
        kept = {c: [(sorted(b.numa_affinity), b.type, b.size) for b in blocks] for c, blocks in stored.get(uid, {}).items()}
        if listed != kept:
            problems.append(f"{uid}: PodResources lists {listed}, the checkpoint holds {kept}")
    names = {v.name for v in views.values()}
    if not ledger.acked - ledger.in_flight <= names:
        problems.append(f"acknowledged pods lost: {sorted(ledger.acked - ledger.in_flight - names)}")
    if names - ledger.acked - ledger.in_flight:
        problems.append(f"listed but never acknowledged: {sorted(names - ledger.acked - ledger.in_flight)}")
    if (ledger.removed - ledger.in_flight) & names:
        problems.append(f"removed but listed: {sorted(ledger.removed & names)}")
    if not host.admit(json.dumps(_pod("after-restart", "64Mi"))).admitted:
        problems.append("the restarted node refused a small pod")
    host.remove("after-restart")
    ledger.removed |= ledger.in_flight - names
    ledger.acked, ledger.in_flight = names, set()
    return problems


def conservation_problems(loaded: Any) -> list[str]:
    """Nothing given out twice, nothing lost: per NUMA node and resource, reserved + free equals
    allocatable, and the memory reserved over all nodes equals the blocks the checkpoint holds."""
    problems = []
    reserved: dict[str, int] = {}
    for numa, node in (loaded.machine_state or {}).items():
        for resource, table in (node.memory_map or {}).items():
            if table.reserved + table.free != table.allocatable:
                problems.append(f"node {numa} {resource}: reserved {table.reserved} + free {table.free} != "
                                f"allocatable {table.allocatable}")
            reserved[resource] = reserved.get(resource, 0) + table.reserved
    held: dict[str, int] = {}
    for containers in (loaded.entries or {}).values():
        for blocks in containers.values():
            for block in blocks:
                held[block.type] = held.get(block.type, 0) + block.size
    for resource in sorted(set(reserved) | set(held)):
        if reserved.get(resource, 0) != held.get(resource, 0):
            problems.append(f"{resource}: {reserved.get(resource, 0)} reserved on the nodes, "
                            f"{held.get(resource, 0)} held by containers")
    return problems


@dataclass
class Result:
    kill_points: int = 0
    restarts: int = 0
    failures: list = field(default_factory=list)


def run(step: int = 1, base: Optional[str] = None) -> Result:
    """Every `step`-th kill point of the first script, each followed by a kill in the second."""
    result = Result()
    root = tempfile.mkdtemp(prefix="crash-serve-", dir=base)
    try:
        first_calls = count_calls(FIRST, os.path.join(root, "count1"))
        second_calls = count_calls(SECOND, os.path.join(root, "count2"), before=FIRST)
        for at in range(1, first_calls + 1, step):
            folder = os.path.join(root, f"k{at}")
            os.mkdir(folder)
            ledger = Ledger()
            ledger.replay(FIRST, killed_run(folder, FIRST, at))
            result.kill_points += 1
            for round_, (script, second_at) in enumerate([(None, None), (SECOND, 1 + (at * 7) % second_calls)]):
                if script is not None:
                    ledger.replay(script, killed_run(folder, script, second_at))
                problems = check(folder, ledger)
                result.restarts += 1
                if problems and len(result.failures) < 10:
                    result.failures.append((at, round_, problems))
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return result


def scripts(max_ops: int = 7) -> Any:
    """Hypothesis: random scripts of admissions (one to three containers, some with init containers,
    sizes from small to too large) and removals of pods or containers named earlier."""
    from hypothesis import strategies as st

    sizes = st.sampled_from(["64Mi", "1Gi", "3Gi", "7Gi", "20Gi"])

    @st.composite
    def build(draw: Any) -> list:
        script: list = []
        names: list[str] = []
        for i in range(draw(st.integers(min_value=1, max_value=max_ops))):
            kind = draw(st.sampled_from(["admit", "admit", "admit", "remove", "remove_container"]))
            if kind == "admit" or not names:
                name = f"p{i}"
                names.append(name)
                script.append(("admit", _pod(name, draw(sizes), apps=draw(st.integers(1, 3)), init=draw(st.booleans()))))
            elif kind == "remove":
                script.append(("remove", draw(st.sampled_from(names))))
            else:
                script.append(("remove_container", (draw(st.sampled_from(names)), "app0")))
        return script

    return build()
