"""The node-control service `memorymanager.v1alpha1.NodeControl` (see docs/grpc.md): drive a
simulated node from any language through the public `memorymanager.Node` API.

Every call runs under the node's lock (`NodeHost`), so admissions are serialised as kubelet
serialises them. Errors are gRPC statuses whose message names what is wrong:
INVALID_ARGUMENT for a bad pod, hint or configuration, NOT_FOUND for an unknown pod or
container, FAILED_PRECONDITION when kubelet refused to start, INTERNAL for anything else;
the server keeps serving.
"""
from __future__ import annotations

from typing import Any, Callable

import grpc

from kubeinputs.errors import InputError, echo
from kubeinputs.limits import WorkLimitError
from kubeinputs.quantity import QuantityError
from kubeinputs.reader import load_json_text, load_text
from memorymanager.explain.build import explain_pod
from memorymanager.explain.jsondoc import dumps, explanation_document
from memorymanager.explain.text import explanation_lines
from memorymanager.node.api import Admission, hint_provider, read_pod
from memorymanager.policy import MemoryManagerError
from memorymanager.node.simulated_node import KubeletStartError, NodeError
from memorymanager.server.host import NodeHost, parse_overrides
from memorymanager.server.status import status_message
from memorymanager.server.protos.control import control_pb2 as pb
from memorymanager.server.protos.control import control_pb2_grpc as pb_grpc
from topologymanager.errors import BoundedWorkError
from topologymanager.hint_family import HintFamily


def _hints(text: str) -> Any:
    """The request's hints field: empty = none, else a YAML/JSON document."""
    if not text.strip():
        return None
    try:
        return load_json_text(text, "hints")
    except InputError as exc:
        if not exc.reason.startswith("not valid JSON: line"):
            raise  # a limit (depth, number length) or a duplicate key: the JSON reader's own words
        return load_text(text, "hints")  # YAML, or the error with line and column


def _pod(text: str) -> Any:
    """The request's pod manifest: a JSON object parsed here (the fast path), else the text for
    the API's YAML reader; an empty one is a clear error (never a file lookup)."""
    if not text.strip():
        raise InputError("pod", "empty; expected a v1 Pod manifest (JSON or YAML)")
    if text.lstrip().startswith("{"):
        try:
            doc = load_json_text(text, "pod")
        except InputError as exc:
            if not exc.reason.startswith("not valid JSON: line"):
                raise  # a limit (depth, number length) or a duplicate key
            doc = None  # the YAML reader gives the error with line and column
        if isinstance(doc, dict):
            return doc
    # A newline makes it text for the API: a client never names a file on the server's disk.
    return text if "\n" in text else text + "\n"


def admission_message(answer: Admission) -> pb.AdmitResponse:
    """The Python `Admission` as an AdmitResponse."""
    return pb.AdmitResponse(
        admitted=answer.admitted, reason=answer.reason, message=answer.message,
        placements=[
            pb.Placement(container=name, numa_nodes=list(p.numa_nodes), preferred=p.preferred,
                         memory=dict(p.memory), cpuset_mems=p.cpuset_mems)
            for name, p in answer.placements.items()
        ],
    )


# The Hints call lists a hint family (17+ NUMA nodes) only up to this many hints.
MAX_LISTED_HINTS = 4096


def status_of(exc: Exception) -> tuple[grpc.StatusCode, str]:
    """The gRPC status of an exception the API raised (INTERNAL for a bug: the server keeps serving)."""
    if isinstance(exc, InputError):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, WorkLimitError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)
    if isinstance(exc, QuantityError):  # quantities that parse but cannot be summed here (1e999999999 + 1Gi)
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, MemoryManagerError):  # e.g. a request kubelet would crash on: an answer, not a bug
        return grpc.StatusCode.FAILED_PRECONDITION, str(exc)
    if isinstance(exc, KubeletStartError):
        return grpc.StatusCode.FAILED_PRECONDITION, f"kubelet is not running: {exc}"
    if isinstance(exc, NodeError):
        code = grpc.StatusCode.FAILED_PRECONDITION if "not running" in str(exc) else grpc.StatusCode.NOT_FOUND
        return code, str(exc)
    return grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}"


def _guard(method: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the API's exceptions into gRPC statuses with their message."""

    def guarded(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return method(self, request, context)
        except Exception as exc:
            code, message = status_of(exc)
        context.abort(code, status_message(message))

    guarded.__name__ = method.__name__
    guarded.__doc__ = method.__doc__
    return guarded


class NodeControl(pb_grpc.NodeControlServicer):
    """The service over one `NodeHost`."""

    def __init__(self, host: NodeHost) -> None:
        self.host = host

    @_guard
    def Admit(self, request: pb.AdmitRequest, context: grpc.ServicerContext) -> pb.AdmitResponse:
        """Admit and keep the pod."""
        return admission_message(self.host.admit(_pod(request.pod), _hints(request.hints)))

    @_guard
    def WouldAdmit(self, request: pb.AdmitRequest, context: grpc.ServicerContext) -> pb.AdmitResponse:
        """Admit's answer, node unchanged."""
        return admission_message(self.host.would_admit(_pod(request.pod), _hints(request.hints)))

    @_guard
    def Remove(self, request: pb.RemoveRequest, context: grpc.ServicerContext) -> pb.RemoveResponse:
        """Remove a pod (name or UID) or one container."""
        if not request.pod.strip() or "\n" in request.pod:
            raise InputError("pod", "expected the name or UID of an admitted pod")
        self.host.remove(request.pod, request.container or None)
        return pb.RemoveResponse()

    @_guard
    def Hints(self, request: pb.HintsRequest, context: grpc.ServicerContext) -> pb.HintsResponse:
        """The memory manager's hints per container (or for the pod in pod scope)."""
        hints = self.host.locked(lambda: self.host.node.hints(_pod(request.pod)))
        containers = []
        for name, by_resource in hints.items():
            if by_resource is None:
                containers.append(pb.ContainerHints(container=name, no_preference=True))
                continue
            resources = []
            for resource, items in by_resource.items():
                if items is None:
                    resources.append(pb.ResourceHints(resource=resource, no_preference=True))
                    continue
                if isinstance(items, HintFamily):  # 17+ NUMA nodes: list it only when short
                    listed = items.as_list(MAX_LISTED_HINTS)
                    if listed is None:
                        raise BoundedWorkError(
                            f"kubelet would enumerate 2^{items.nodes.bit_count()} NUMA masks here: the {resource} "
                            f"hints of {name!r} are a family of more than {MAX_LISTED_HINTS} hints, too many to list "
                            "(the Python API gives the family itself: docs/api.md)")
                    items = listed
                resources.append(pb.ResourceHints(resource=resource, hints=[
                    pb.TopologyHint(numa_nodes=list(h.nodes() or ()), preferred=h.preferred,
                                    any_numa_node=h.nodes() is None)
                    for h in items
                ]))
            containers.append(pb.ContainerHints(container=name, resources=resources))
        return pb.HintsResponse(containers=containers)

    @_guard
    def MachineState(self, request: pb.MachineStateRequest, context: grpc.ServicerContext) -> pb.MachineStateResponse:
        """The memory manager's machine state, nodes and resources sorted."""
        state = self.host.locked(self.host.node.machine_state)
        nodes = []
        for numa, node in sorted(state.items()):
            tables = [
                pb.MemoryTable(resource=resource, total_mem_size=t.total_mem_size, system_reserved=t.system_reserved,
                               allocatable=t.allocatable, reserved=t.reserved, free=t.free)
                for resource, t in sorted((node.memory_map or {}).items()) if t is not None
            ]
            nodes.append(pb.NUMANodeState(id=numa, number_of_assignments=node.number_of_assignments,
                                          cells=list(node.cells or []), memory=tables))
        return pb.MachineStateResponse(nodes=nodes)

    @_guard
    def Restart(self, request: pb.RestartRequest, context: grpc.ServicerContext) -> pb.RestartResponse:
        """A kubelet restart, optionally with changed configuration fields."""
        self.host.restart(parse_overrides(request.kubelet, "kubelet"))
        return pb.RestartResponse()

    @_guard
    def ListPods(self, request: pb.ListPodsRequest, context: grpc.ServicerContext) -> pb.ListPodsResponse:
        """The active pods, admission order."""
        pods = self.host.locked(self.host.node.active_pods)
        return pb.ListPodsResponse(pods=[pb.PodRef(name=p.name, namespace=p.namespace, uid=p.uid) for p in pods])

    @_guard
    def Explain(self, request: pb.ExplainRequest, context: grpc.ServicerContext) -> pb.ExplainResponse:
        """Why the pod would be admitted where it would, or refused; the node is not changed."""
        form = request.format or "text"
        if form not in ("text", "json"):
            raise InputError("format", f'unknown format "{echo(form)}"; expected "text" or "json"')

        def explain() -> Any:
            node = self.host.node
            node.pods()  # starts the node on first use, as every other call does
            pod = read_pod(_pod(request.pod))
            return explain_pod(node.simulated_node, pod, hint_provider(pod, _hints(request.hints)))

        explanation = self.host.locked(explain)
        if form == "json":
            return pb.ExplainResponse(explanation=dumps(explanation_document(explanation)))
        return pb.ExplainResponse(explanation="\n".join(explanation_lines(explanation)) + "\n")
