"""The node-control service `memorymanager.v1alpha1.NodeControl` (see docs/grpc.md): drive a
simulated node from any language through the public `memorymanager.Node` API.

The service only hands requests to a runner: `LocalControl` runs them in this process under the
node's lock (a library embedding the server, the tests); `node_process.NodeProcess` runs them in
the node's own process, or a fork of it (`memorymanager serve`). Either way admissions are
serialised as kubelet serialises them, at most `max-control-queue` requests wait or run (the
next one is refused with RESOURCE_EXHAUSTED), and errors are gRPC statuses whose message names
what is wrong (`control_ops.status_of`), never longer than a trailer carries; the server keeps
serving.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Protocol, Union

import grpc
from google.protobuf.message import Message

from kubeinputs.limits import WorkLimitError, flag
from memorymanager.server.control_ops import execute, prepare, status_of
from memorymanager.server.host import NodeHost
from memorymanager.server.protos.control import control_pb2_grpc as pb_grpc
from memorymanager.server.status import status_message


class ControlRunner(Protocol):
    """Runs one control request (its protobuf message) and gives the response message; raises what
    `status_of` turns into a status."""

    def call(self, method: str, request: Message) -> Message: ...


def queue_full(limit: int) -> WorkLimitError:
    """The refusal of a request that finds the control queue full."""
    return WorkLimitError(f"the control queue is full: {limit:,} control requests are waiting or running "
                          f"(max-control-queue; raise it with {flag('max_control_queue')})")


class Slots:
    """At most `limit` (max-control-queue) control requests waiting or running; the next one is refused."""

    def __init__(self, limit: int) -> None:
        self._lock = threading.Lock()
        self.limit = limit
        self.taken = 0

    def take(self) -> None:
        """Take a slot, or raise the queue-full refusal."""
        with self._lock:
            limit = self.limit
            if self.taken >= limit:
                raise queue_full(limit)
            self.taken += 1

    def give_back(self) -> None:
        """Free a slot."""
        with self._lock:
            self.taken -= 1


class LocalControl:
    """Control requests run in this process, one at a time under the host's lock."""

    def __init__(self, host: NodeHost) -> None:
        self.host = host
        self.slots = Slots(host.limits.max_control_queue)

    def call(self, method: str, request: Message) -> Message:
        """Run one control request under the host's lock; its response."""
        self.slots.take()
        try:
            prepared = prepare(method, request, self.host.limits)
            with self.host.lock:
                return execute(self.host, prepared)
        finally:
            self.slots.give_back()


def _rpc(method: str) -> Callable[..., Any]:
    """A servicer method handing its request to the runner; an exception becomes the status."""

    def serve(self: "NodeControl", request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return self.runner.call(method, request)
        except Exception as exc:  # never a dead server
            code, message = status_of(exc)
        context.abort(code, status_message(message))

    serve.__name__ = method
    serve.__doc__ = f"NodeControl.{method}: run by the node's runner."
    return serve


class NodeControl(pb_grpc.NodeControlServicer):
    """The service over a runner (a `NodeHost` is run in this process)."""

    def __init__(self, runner: Union[ControlRunner, NodeHost]) -> None:
        self.runner: ControlRunner = LocalControl(runner) if isinstance(runner, NodeHost) else runner

    Admit = _rpc("Admit")
    WouldAdmit = _rpc("WouldAdmit")
    Remove = _rpc("Remove")
    Hints = _rpc("Hints")
    MachineState = _rpc("MachineState")
    Restart = _rpc("Restart")
    ListPods = _rpc("ListPods")
    Explain = _rpc("Explain")
