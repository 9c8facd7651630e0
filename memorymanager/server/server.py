"""One gRPC server on a unix socket serving PodResources (v1, v1alpha1) and the node-control
service for a `NodeHost`, with gRPC server reflection listing the three (so that grpcurl and
the like need no .proto files), plus the optional `/metrics` HTTP server.

Socket handling follows kubelet: a socket file left by a crashed run is removed before
binding, the parent folder is created, and on stop the socket file is removed. A path that
exists and is not a socket, is too long for a unix socket, or cannot be bound is a
`ServeError` with a message naming the path and the reason.
"""
from __future__ import annotations

import os
import stat
from concurrent import futures
from typing import Optional, Union

import grpc
from grpc_reflection.v1alpha import reflection

from memorymanager.server.control import NodeControl
from memorymanager.server.host import NodeHost
from memorymanager.server.metrics import MetricsHTTPServer
from memorymanager.server.node_process import NodeProcess
from memorymanager.server.podresources import PodResourcesV1, PodResourcesV1Alpha1, ProviderData, TokenBucket
from memorymanager.server.protos.control import control_pb2, control_pb2_grpc
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc
from memorymanager.server.protos.v1alpha1 import api_pb2 as v1alpha1
from memorymanager.server.protos.v1alpha1 import api_pb2_grpc as v1alpha1_grpc

MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the terminating NUL
WORKERS = 16
# largest request accepted (gRPC's own default, which kubelet's pod-resources server keeps); a larger
# one gets RESOURCE_EXHAUSTED and the server keeps serving
MAX_RECEIVE_MESSAGE_BYTES = 4 << 20
SOCKET_MODE = 0o600  # only the serving user may connect (kubelet's sockets live in a root-only folder)
# the services reflection lists: v1.PodResourcesLister, v1alpha1.PodResourcesLister, memorymanager.v1alpha1.NodeControl
SERVICE_NAMES = tuple(module.DESCRIPTOR.services_by_name[name].full_name for module, name in (
    (v1, "PodResourcesLister"), (v1alpha1, "PodResourcesLister"), (control_pb2, "NodeControl")))


class ServeError(Exception):
    """The server cannot start (a socket or address that cannot be bound); str() says why."""


def prepare_socket_path(path: str) -> str:
    """The absolute socket path, its folder created and a stale socket removed."""
    path = os.path.abspath(path)
    if len(path.encode()) > MAX_SOCKET_PATH:
        raise ServeError(f"cannot bind {path}: a unix socket path has at most {MAX_SOCKET_PATH} bytes")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    except OSError as exc:
        raise ServeError(f"cannot create the folder of {path}: {exc.strerror or exc}") from exc
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise ServeError(f"cannot bind {path}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(mode):
        raise ServeError(f"cannot bind {path}: it is a symbolic link, which is not followed")
    if not stat.S_ISSOCK(mode):
        raise ServeError(f"cannot bind {path}: it exists and is not a socket")
    try:
        os.remove(path)  # a stale socket from an earlier run, as kubelet removes it
    except OSError as exc:
        raise ServeError(f"cannot remove the stale socket {path}: {exc.strerror or exc}") from exc
    return path


class NodeServer:
    """The gRPC server (and optional metrics server) of one node."""

    def __init__(
        self,
        host: NodeHost,
        socket_path: str,
        *,
        providers: Optional[ProviderData] = None,
        rate_limit: Union[bool, TokenBucket] = True,
        metrics_address: Optional[tuple[str, int]] = None,
        workers: int = WORKERS,
        max_receive_message_bytes: int = MAX_RECEIVE_MESSAGE_BYTES,
        isolate: bool = False,
    ) -> None:
        self.socket_path = prepare_socket_path(socket_path)
        # isolate: the node moves to its own process (forked here, before the gRPC server has threads);
        # this process keeps the readers' snapshot and counts the PodResources calls. Else the node is
        # served in this process.
        self.node_process: Optional[NodeProcess] = NodeProcess(host) if isolate else None
        self.host: Union[NodeHost, NodeProcess] = self.node_process or host
        # one bucket for the whole PodResources server (a given one: its own rate and clock)
        limiter = rate_limit if isinstance(rate_limit, TokenBucket) else TokenBucket() if rate_limit else None
        self.grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grpc"),
                                options=[("grpc.max_receive_message_length", max_receive_message_bytes)])
        readers, observer = self.host, self.host.metrics  # the snapshot; kubelet's PodResources counts
        v1_grpc.add_PodResourcesListerServicer_to_server(PodResourcesV1(readers, providers, limiter, observer),
                                                         self.grpc)
        v1alpha1_grpc.add_PodResourcesListerServicer_to_server(
            PodResourcesV1Alpha1(readers, providers, limiter, observer), self.grpc)
        self.control = NodeControl(self.node_process or host)
        control_pb2_grpc.add_NodeControlServicer_to_server(self.control, self.grpc)
        reflection.enable_server_reflection(SERVICE_NAMES + (reflection.SERVICE_NAME,), self.grpc)
        old_umask = os.umask(0o177)  # the socket is created 0600, never briefly open to others
        try:
            bound = self.grpc.add_insecure_port("unix:" + self.socket_path)
        except RuntimeError as exc:
            self._stop_node_process()
            raise ServeError(f"cannot bind {self.socket_path}: {exc}") from exc
        finally:
            os.umask(old_umask)
        if bound == 0:
            self._stop_node_process()
            raise ServeError(f"cannot bind {self.socket_path}")
        try:
            os.chmod(self.socket_path, SOCKET_MODE)
        except OSError:
            pass  # created under the 0177 umask already
        self.metrics: Optional[MetricsHTTPServer] = None
        if metrics_address is not None:
            try:
                self.metrics = MetricsHTTPServer(metrics_address[0], metrics_address[1], self.host.metrics_text)
            except OSError as exc:
                self._remove_socket()  # bound already: leave nothing behind
                self._stop_node_process()
                raise ServeError(f"cannot serve metrics on {metrics_address[0]}:{metrics_address[1]}: "
                                 f"{exc.strerror or exc}") from exc

    def start(self) -> None:
        self.grpc.start()
        if self.metrics is not None:
            self.metrics.start()

    def stop(self, grace: float = 2.0) -> None:
        """Stop serving and remove the socket file. A node in its own process stops first (queued
        control requests refused, the one in flight abandoned unless it was committing); calls still
        in flight then get `grace` seconds."""
        if self.metrics is not None:
            self.metrics.stop()
        self._stop_node_process()
        self.grpc.stop(grace).wait()
        self._remove_socket()

    def _stop_node_process(self) -> None:
        if self.node_process is not None:
            self.node_process.shutdown()

    def _remove_socket(self) -> None:
        """Remove our socket file (only a socket: never a file someone put there since)."""
        try:
            if stat.S_ISSOCK(os.lstat(self.socket_path).st_mode):
                os.remove(self.socket_path)
        except OSError:
            pass


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (or `:PORT` for every interface) as a pair; ValueError with the reason."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "0.0.0.0", int(port)
