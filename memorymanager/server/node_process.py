"""The served node in its own process, its costly requests in forks (`memorymanager serve`).

`NodeProcess` forks the *node process* once, before the gRPC server exists; the node lives
there, and the server process keeps only what readers need: the snapshot of the node published
after every request that changed it (`snapshot`), and the node's part of the `/metrics` page
(`metrics.NodeMetrics`: the managers' counts and the per-NUMA gauges). PodResources and
`/metrics` are answered from them by the server's threads, so they never wait for a control
request, and a control request's work never competes with them for the interpreter (it runs in
another process, on another core when there is one). The PodResources calls are counted here,
where they are served (`metrics`, the servicers' observer), from zero again after each kubelet
restart the node process reports.

Control requests go, one at a time and in arrival order, to the node process over a socket pair;
at most `max-control-queue` wait or run (`control.Slots`). The node process runs a small request
(a read, a removal, the admission of a pod of a few containers) itself; anything larger, and every
trial (WouldAdmit, Explain), runs in a *fork* of it that has the node as it is, copy-on-write. A
forked trial answers and ends. A forked change answers and becomes the node process: the process
it was forked from exits, so the node moves to the fork that changed it.

Nothing reaches the disk before the server process agrees: the first file call of a request
(`GatedFileOps`) asks the server whether it may commit. While the server is stopping it may not:
the process asking ends at once, and nothing of the request was applied, in memory (that process
is gone) or on disk. Once a commit is granted the server waits for its answer (milliseconds:
the checkpoint and the pod list are written, the work is done) before it stops. So SIGTERM stops
the server at once whatever runs: queued requests are refused with UNAVAILABLE, the request in
flight is abandoned with its fork, and the checkpoint and `served_pods.json` stay as the last
answered request left them.
"""
from __future__ import annotations

import os
import queue
import signal
import socket
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Callable, Iterator, Optional

import grpc
from google.protobuf.message import Message

from kubeinputs.limits import DEFAULT_LIMITS, Limits
from memorymanager.server.control import Slots
from memorymanager.server.control_ops import (CHANGE, KINDS, READ, REQUESTS, RESPONSES, ControlStatus, Prepared,
                                              execute, prepare, status_of)
from memorymanager.server.host import NodeHost
from memorymanager.server.metrics import KubeletMetrics, NodeMetrics, metrics_page
from memorymanager.server.snapshot import Changes, SnapshotReader
from state.checkpoint_manager import FileOps

# How long a stopping server waits for a granted commit to answer.
COMMIT_WAIT_SECONDS = 1.5
ABANDONED = "the server is stopping: the request was abandoned, nothing of it was applied"


class GatedFileOps(FileOps):
    """FileOps whose first file call of a request asks `gate` first (the commit point); the gate is
    armed per request by the node process and is None elsewhere (nothing asked)."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(limits)
        self.gate: Optional[Callable[[], None]] = None

    @contextmanager
    def armed(self, gate: Callable[[], None]) -> Iterator[None]:
        """Within (one request): the first file call asks `gate` first."""
        self.gate = gate
        try:
            yield
        finally:
            self.gate = None

    def create_temp(self, directory: str, prefix: str) -> tuple[int, str]:
        """Ask the gate (once per request), then create the temporary file."""
        gate, self.gate = self.gate, None
        if gate is not None:
            gate()
        return super().create_temp(directory, prefix)


# ----- the node process -------------------------------------------------------------------------------


def _ask_to_commit(conn: Connection) -> None:
    """Ask the server whether this request may write; end the process at once if not (or if the
    server is gone): nothing of the request reaches the disk."""
    try:
        conn.send(("commit?",))
        if conn.recv() == ("grant", True):
            return
    except BaseException:  # noqa: BLE001 - any failure here means: do not write
        pass
    os._exit(4)


def _run(host: NodeHost, conn: Connection, prepared: Prepared) -> None:
    """Run one prepared request on the host and send the answer with the changes it published."""
    gated = host.file_ops.armed(lambda: _ask_to_commit(conn)) if isinstance(host.file_ops, GatedFileOps) \
        else nullcontext()
    try:
        with gated:
            response = execute(host, prepared)
        reply: tuple = ("reply", True, response.SerializeToString())
    except Exception as exc:  # the API's errors, and bugs: a status, never a dead node
        code, message = status_of(exc)
        reply = ("reply", False, (code.name, message))
    conn.send(reply + (host.take_changes(),))


def _inline(method: str, prepared: Prepared) -> bool:
    """Whether the node process runs a request itself (small, milliseconds) rather than in a fork."""
    if KINDS[method] == READ or method == "Remove":
        return True
    return method in ("Admit", "Hints") and prepared.small


def _node_main(host: NodeHost, conn: Connection) -> None:
    """The node process: answer requests until the server goes; a forked change takes over."""
    host.take_changes()  # from now on the host keeps what it publishes, for this process to ship
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            os._exit(0)  # the server is gone
        if message[0] == "metrics":
            conn.send(("metrics", host.generation, host.metrics_part()))
            continue
        _, method, data = message
        try:
            prepared = prepare(method, REQUESTS[method].FromString(data), host.limits)
        except Exception as exc:  # a request that does not decode, or past the work budget
            code, text = status_of(exc)
            conn.send(("reply", False, (code.name, text), []))
            continue
        if _inline(method, prepared):
            _run(host, conn, prepared)
            continue
        done_read, done_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the fork: run the request on its copy of the node
            os.close(done_read)
            try:
                _run(host, conn, prepared)
            except BaseException:  # noqa: BLE001 - the node process reports it
                os._exit(5)
            if KINDS[method] != CHANGE:
                os._exit(0)
            os.write(done_write, b"T")  # this process is the node from now on
            os.close(done_write)
            continue
        os.close(done_write)
        took_over = os.read(done_read, 1) == b"T"
        os.close(done_read)
        if took_over:
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            conn.send(("reply", False, ("INTERNAL", f"the worker running {method} ended without an answer "
                                                   f"(wait status {status})"), []))


# ----- the server side ------------------------------------------------------------------------------


@dataclass
class _Job:
    method: str
    data: bytes
    done: threading.Event = field(default_factory=threading.Event)
    payload: Optional[bytes] = None
    error: Optional[Exception] = None


class NodeProcess(SnapshotReader):
    """The server's side of a node in its own process: the readers' snapshot and the control queue."""

    def __init__(self, host: NodeHost) -> None:
        super().__init__()
        self.metrics = KubeletMetrics()  # the PodResources calls served here (the servicers' observer)
        start = host.snapshot
        self._publish(Changes(start.generation, full=list(start.pods), full_refused=list(start.refused),
                              allocatable=start.allocatable, gates=dict(start.gates),
                              started=True, start_error=start.start_error))
        self._metrics_part: tuple[int, NodeMetrics] = (host.generation, host.metrics_part())
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the node process: its own process group, no signal handlers of the server
            code = 0
            try:
                ours.close()
                os.setpgid(0, 0)
                for sig in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                _node_main(host, Connection(theirs.detach()))
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child set it already (or is gone: the first request will say so)
        self.pid = pid
        self.conn = Connection(ours.detach())
        self.slots = Slots(host.limits.max_control_queue)
        self._queue: "queue.Queue[Optional[_Job]]" = queue.Queue()
        self._conn_lock = threading.Lock()  # one exchange with the node process at a time
        self._state = threading.Condition()  # guards the three flags below
        self._closing = False
        self._committing = False
        self._dead: Optional[str] = None
        self._reaper = threading.Thread(target=self._reap, name="node-process-reaper", daemon=True)
        self._reaper.start()
        self._dispatcher = threading.Thread(target=self._dispatch, name="node-process", daemon=True)
        self._dispatcher.start()

    def _reap(self) -> None:
        """Collect the first node process when it ends (later ones are forks of it, not our children)."""
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    # ----- control requests -----

    def call(self, method: str, request: Message) -> Message:
        """Run a control request in the node process; its response message (or the status raised)."""
        self.slots.take()
        try:
            job = _Job(method, request.SerializeToString())
            with self._state:
                if self._closing:
                    raise ControlStatus(grpc.StatusCode.UNAVAILABLE, ABANDONED)
                self._queue.put(job)
            job.done.wait()
            if job.error is not None:
                raise job.error
            return RESPONSES[method].FromString(job.payload)
        finally:
            self.slots.give_back()

    def _dispatch(self) -> None:
        """Send the queued requests to the node process one by one, granting commits, publishing changes."""
        while True:
            job = self._queue.get()
            if job is None:
                return
            with self._conn_lock:
                try:
                    if self._dead is not None:
                        raise EOFError(self._dead)
                    self.conn.send(("call", job.method, job.data))
                    self._exchange(job)
                except (EOFError, OSError) as exc:
                    if self._dead is None:
                        self._dead = f"the node process ended ({exc or 'closed'})"
                    job.error = ControlStatus(grpc.StatusCode.UNAVAILABLE, ABANDONED if self._closing else
                                              f"{self._dead}; the request was not answered")
                finally:
                    with self._state:
                        self._committing = False
                        self._state.notify_all()
                    job.done.set()

    def _exchange(self, job: _Job) -> None:
        """The messages of one request: commit questions, then the answer."""
        while True:
            message = self.conn.recv()
            if message[0] == "commit?":
                with self._state:
                    grant = not self._closing
                    self._committing = grant
                self.conn.send(("grant", grant))
                continue
            _, ok, payload, changes = message
            for change in changes:
                self._publish(change)
            if ok:
                job.payload = payload
            else:
                job.error = ControlStatus(grpc.StatusCode[payload[0]], payload[1])
            return

    # ----- readers -----

    def _publish(self, changes: Changes) -> None:
        """Apply a request's changes; a kubelet restart starts the PodResources counts from zero."""
        if changes.restarted:
            self.metrics.reset()
        super()._publish(changes)

    def metrics_text(self) -> str:
        """The `/metrics` page: the node's part asked from the node process when the node changed and no
        request is in flight, else the last one (a scrape never waits for a control request); the
        PodResources counts as they are."""
        generation, part = self._metrics_part
        if generation != self.snapshot.generation and self._conn_lock.acquire(blocking=False):
            try:
                if self._dead is None:
                    self.conn.send(("metrics",))
                    _, generation, part = self.conn.recv()
                    self._metrics_part = (generation, part)
            except (EOFError, OSError):
                pass
            finally:
                self._conn_lock.release()
        return metrics_page(self._metrics_part[1], self.metrics)

    # ----- stopping -----

    def shutdown(self) -> None:
        """Stop at once: refuse what waits, abandon what runs (a granted commit is waited for), end
        the node process and its forks."""
        with self._state:
            self._closing = True
            deadline = time.monotonic() + COMMIT_WAIT_SECONDS
            while self._committing and time.monotonic() < deadline:
                self._state.wait(deadline - time.monotonic())
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.error = ControlStatus(grpc.StatusCode.UNAVAILABLE, ABANDONED)
                job.done.set()
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass  # the group is gone already
        self._reaper.join(timeout=2.0)  # collected, not left a zombie in its group, when this returns
        self._queue.put(None)
        self._dispatcher.join(timeout=2.0)
        try:
            self.conn.close()
        except OSError:
            pass
