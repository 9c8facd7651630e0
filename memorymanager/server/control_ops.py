"""The node-control requests themselves, wherever the node lives (docs/grpc.md).

A request is first *prepared*, with no node at hand: its pod and hints documents decoded and
counted against the work budget (`budget.check`), so a request past it is refused before any
work. It is then *executed* on a `NodeHost`: in this process (`NodeControl` over a host), or in
the node's own process or a fork of it (`node_process`). Exceptions are the API's; `status_of`
turns one into the gRPC status the client gets.

Kinds: `READ` requests only read and are cheap (ListPods, MachineState); `TRIAL` requests
compute an answer without changing the node (WouldAdmit, Explain, Hints); `CHANGE` requests
change it (Admit, Remove, Restart).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import grpc
from google.protobuf.message import Message

from kubeinputs.errors import InputError, echo
from kubeinputs.limits import WorkLimitError
from kubeinputs.quantity import QuantityError
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.reader import load_json_text, load_text
from memorymanager.explain.build import explain_pod
from memorymanager.explain.jsondoc import dumps, explanation_document
from memorymanager.explain.text import explanation_lines
from memorymanager.node.api import Admission, hint_provider
from memorymanager.node.simulated_node import KubeletStartError, NodeError
from memorymanager.policy import MemoryManagerError
from memorymanager.server import budget
from memorymanager.server.host import NodeHost, document_pod, not_running_message, parse_overrides
from memorymanager.server.protos.control import control_pb2 as pb
from topologymanager.errors import BoundedWorkError
from topologymanager.hint_family import HintFamily

READ, TRIAL, CHANGE = "read", "trial", "change"
KINDS = {"ListPods": READ, "MachineState": READ, "WouldAdmit": TRIAL, "Explain": TRIAL, "Hints": TRIAL,
         "Admit": CHANGE, "Remove": CHANGE, "Restart": CHANGE}
REQUESTS = {"Admit": pb.AdmitRequest, "WouldAdmit": pb.AdmitRequest, "Remove": pb.RemoveRequest,
            "Hints": pb.HintsRequest, "MachineState": pb.MachineStateRequest, "Restart": pb.RestartRequest,
            "ListPods": pb.ListPodsRequest, "Explain": pb.ExplainRequest}
RESPONSES = {"Admit": pb.AdmitResponse, "WouldAdmit": pb.AdmitResponse, "Remove": pb.RemoveResponse,
             "Hints": pb.HintsResponse, "MachineState": pb.MachineStateResponse, "Restart": pb.RestartResponse,
             "ListPods": pb.ListPodsResponse, "Explain": pb.ExplainResponse}

# The Hints call lists a hint family (17+ NUMA nodes) only up to this many hints.
MAX_LISTED_HINTS = 4096


class ControlStatus(Exception):
    """A status decided elsewhere (in the node's process, or by the queue): code and message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The gRPC status of an exception the API raised (INTERNAL for a bug: the server keeps serving)."""
    if isinstance(exc, ControlStatus):
        return exc.code, exc.message
    if isinstance(exc, InputError):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, WorkLimitError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)
    if isinstance(exc, QuantityError):  # quantities that parse but cannot be summed here (1e999999999 + 1Gi)
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, MemoryManagerError):  # e.g. a request kubelet would crash on: an answer, not a bug
        return grpc.StatusCode.FAILED_PRECONDITION, str(exc)
    if isinstance(exc, KubeletStartError):
        return grpc.StatusCode.FAILED_PRECONDITION, not_running_message(exc)
    if isinstance(exc, NodeError):
        code = grpc.StatusCode.FAILED_PRECONDITION if "not running" in str(exc) else grpc.StatusCode.NOT_FOUND
        return code, str(exc)
    return grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}"


def decode_hints(text: str, limits: Limits = DEFAULT_LIMITS) -> object:
    """The request's hints field: empty = none, else a YAML/JSON document (read within `limits`)."""
    if not text.strip():
        return None
    try:
        return load_json_text(text, "hints", limits)
    except InputError as exc:
        if not exc.reason.startswith("not valid JSON: line"):
            raise  # a limit (depth, number length) or a duplicate key: the JSON reader's own words
        return load_text(text, "hints", limits=limits)  # YAML, or the error with line and column


def decode_pod(text: str, limits: Limits = DEFAULT_LIMITS) -> dict:
    """The request's pod manifest decoded (JSON, else YAML with line and column in its errors); the
    text is never read as a file name on the server's disk."""
    if not text.strip():
        raise InputError("pod", "empty; expected a v1 Pod manifest (JSON or YAML)")
    doc = None
    if text.lstrip().startswith("{"):
        try:
            doc = load_json_text(text, "pod", limits)
        except InputError as exc:
            if not exc.reason.startswith("not valid JSON: line"):
                raise  # a limit (depth, number length) or a duplicate key
    if doc is None:
        doc = load_text(text, "pod", limits=limits)
    if not isinstance(doc, dict):
        raise InputError("pod", "neither an existing file nor a v1 Pod manifest (YAML or JSON)")
    return doc


@dataclass
class Prepared:
    """A request ready to execute: the message, its decoded pod and hints, whether it is small."""

    method: str
    request: Message
    pod: Optional[dict] = None
    hints: object = None
    small: bool = True


def prepare(method: str, request: Message, limits: Limits = DEFAULT_LIMITS) -> Prepared:
    """Decode the request's documents and hold them against the work budget of `limits` (raises
    InputError, WorkLimitError)."""
    prepared = Prepared(method, request)
    if method in ("Admit", "WouldAdmit", "Explain", "Hints"):
        if method == "Explain":
            form = request.format or "text"
            if form not in ("text", "json"):
                raise InputError("format", f'unknown format "{echo(form)}"; expected "text" or "json"')
        prepared.pod = decode_pod(request.pod, limits)
        prepared.hints = decode_hints(request.hints, limits) if method != "Hints" else None
        budget.check(prepared.pod, prepared.hints, explain=method == "Explain", limits=limits)
        prepared.small = budget.is_small(prepared.pod, prepared.hints)
    elif method == "Remove":  # a pod by name and namespace, or by UID
        if not request.pod.strip() or "\n" in request.pod:
            raise InputError("pod", "expected the name or UID of an admitted pod")
    return prepared


def execute(host: NodeHost, prepared: Prepared) -> Message:
    """Run a prepared request on the host; the response message."""
    return _HANDLERS[prepared.method](host, prepared)


def admission_message(answer: Admission) -> pb.AdmitResponse:
    """The Python `Admission` as an AdmitResponse."""
    return pb.AdmitResponse(
        admitted=answer.admitted, reason=answer.reason, message=answer.message,
        placements=[
            pb.Placement(container=name, numa_nodes=list(p.numa_nodes), preferred=p.preferred,
                         memory=dict(p.memory), cpuset_mems=p.cpuset_mems, cpus=list(p.cpus),
                         cpuset_cpus=p.cpuset_cpus,
                         devices=[pb.ResourceDevices(resource=r, ids=list(ids)) for r, ids in sorted(p.devices.items())])
            for name, p in answer.placements.items()
        ],
    )


def _admit(host: NodeHost, p: Prepared) -> pb.AdmitResponse:
    return admission_message(host.admit(p.pod, p.hints))


def _would_admit(host: NodeHost, p: Prepared) -> pb.AdmitResponse:
    return admission_message(host.would_admit(p.pod, p.hints))


def _remove(host: NodeHost, p: Prepared) -> pb.RemoveResponse:
    host.remove(p.request.pod, p.request.container or None, namespace=p.request.namespace or None)
    return pb.RemoveResponse()


def _hints(host: NodeHost, p: Prepared) -> pb.HintsResponse:
    hints = host.locked(lambda: host.node.hints(document_pod(p.pod, host.limits)))
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


def _cpu_state(host: NodeHost) -> dict[str, Any]:
    """The CPU manager's sets and assignments (the node is running: machine_state raised otherwise)."""
    cpu = host.node.simulated_node.cpu_manager
    assignments = cpu.state().get_cpu_assignments()
    return {
        "default_cpu_set": str(cpu.get_default_cpu_set()),
        "reserved_cpus": str(cpu.reserved_cpus()),
        "allocatable_cpus": str(cpu.get_allocatable_cpus()),
        "cpu_assignments": [pb.CPUAssignment(pod_uid=uid, container=name, cpus=str(cpus))
                            for uid, containers in assignments.items() for name, cpus in containers.items()],
    }


def _machine_state(host: NodeHost, p: Prepared) -> pb.MachineStateResponse:
    state, cpus = host.locked(lambda: (host.node.machine_state(), _cpu_state(host)))
    nodes = []
    for numa, node in sorted(state.items()):
        tables = [
            pb.MemoryTable(resource=resource, total_mem_size=t.total_mem_size, system_reserved=t.system_reserved,
                           allocatable=t.allocatable, reserved=t.reserved, free=t.free)
            for resource, t in sorted((node.memory_map or {}).items()) if t is not None
        ]
        nodes.append(pb.NUMANodeState(id=numa, number_of_assignments=node.number_of_assignments,
                                      cells=list(node.cells or []), memory=tables))
    return pb.MachineStateResponse(nodes=nodes, **cpus)


def _restart(host: NodeHost, p: Prepared) -> pb.RestartResponse:
    host.restart(parse_overrides(p.request.kubelet, "kubelet", host.limits))
    return pb.RestartResponse()


def _list_pods(host: NodeHost, p: Prepared) -> pb.ListPodsResponse:
    pods = host.locked(host.node.active_pods)
    return pb.ListPodsResponse(pods=[pb.PodRef(name=x.name, namespace=x.namespace, uid=x.uid) for x in pods])


def _explain(host: NodeHost, p: Prepared) -> pb.ExplainResponse:
    def explain() -> Any:
        node = host.node
        node.pods()  # starts the node on first use, as every other call does
        pod = document_pod(p.pod, host.limits)
        return explain_pod(node.simulated_node, pod, hint_provider(pod, p.hints, node.kubelet.topology_manager_scope))

    explanation = host.locked(explain)
    if (p.request.format or "text") == "json":
        return pb.ExplainResponse(explanation=dumps(explanation_document(explanation)))
    return pb.ExplainResponse(explanation="\n".join(explanation_lines(explanation)) + "\n")


_HANDLERS: dict[str, Callable[[NodeHost, Prepared], Message]] = {
    "Admit": _admit, "WouldAdmit": _would_admit, "Remove": _remove, "Hints": _hints,
    "MachineState": _machine_state, "Restart": _restart, "ListPods": _list_pods, "Explain": _explain,
}
