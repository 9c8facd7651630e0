"""The per-request work budget of serve's control requests (docs/grpc.md, "Work budget").

A control request is looked at before any work is done for it: the containers and init
containers of its pod and the hints it injects are counted on the decoded document, and a
request past a limit is refused with RESOURCE_EXHAUSTED and a message naming the limit, its
reason and how to raise it (`--limit NAME=N`). The limits live with every other work limit
(`kubeinputs.limits`); their defaults follow the API server's and kubelet's own limits.

The same counts say whether a request is small: a small admission runs in the node's own
process, a larger one (and every trial: WouldAdmit, Explain, Hints) in a fork of it that can be
abandoned (`memorymanager.server.node_process`).
"""
from __future__ import annotations

from kubeinputs.limits import DEFAULT_LIMITS, Limits, WorkLimitError, flag

# A request at most this large runs in the node's process itself (milliseconds of work).
SMALL_CONTAINERS = 32
SMALL_HINTS = 512

_WHY = {
    "max_request_containers": "kubelet stores its whole checkpoint after each container's Allocate, and a pod "
                              "the API server stores has at most ~20,000 containers",
    "max_request_init_containers": "kubelet walks every earlier init container for each container and stores "
                                   "its whole checkpoint at each visit, about n^2/2 writes",
    "max_explain_containers": "the explanation takes up to ~5 KB per container and a gRPC client takes "
                              "answers of 4 MiB unless told otherwise",
    "max_request_hints": "kubelet's providers give at most one hint per NUMA mask and preference, 510 per "
                         "container and resource on 8 NUMA nodes",
}


def _refuse(what: str, count: int, limit_name: str, limits: Limits) -> WorkLimitError:
    limit = getattr(limits, limit_name)
    return WorkLimitError(f"{what}: {count:,}, past the work budget of a control request, {limit:,} "
                          f"({limit_name.replace('_', '-')}: {_WHY[limit_name]}; raise it with {flag(limit_name)})")


def _spec_list(doc: object, key: str) -> int:
    """Items of `spec.<key>` when the document has such a list (anything else is the parser's to refuse)."""
    spec = doc.get("spec") if isinstance(doc, dict) else None
    items = spec.get(key) if isinstance(spec, dict) else None
    return len(items) if isinstance(items, list) else 0


def container_counts(pod_doc: object) -> tuple[int, int]:
    """(containers, init containers) of a decoded pod manifest."""
    return _spec_list(pod_doc, "containers"), _spec_list(pod_doc, "initContainers")


def hint_count(hints_doc: object) -> int:
    """Hints in a decoded hints document, in either form (`{container: {resource: [..]}}` or
    `{resource: [..]}`)."""
    if not isinstance(hints_doc, dict):
        return 0
    total = 0
    for value in hints_doc.values():
        if isinstance(value, list):
            total += len(value)
        elif isinstance(value, dict):
            total += sum(len(items) for items in value.values() if isinstance(items, list))
    return total


def check(pod_doc: object, hints_doc: object = None, *, explain: bool = False,
          limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse (WorkLimitError) a request past the budget of `limits`; a request within it passes."""
    containers, init_containers = container_counts(pod_doc)
    if init_containers > limits.max_request_init_containers:
        raise _refuse("init containers in the pod", init_containers, "max_request_init_containers", limits)
    if containers + init_containers > limits.max_request_containers:
        raise _refuse("containers in the pod (init containers included)", containers + init_containers,
                      "max_request_containers", limits)
    if explain and containers + init_containers > limits.max_explain_containers:
        raise _refuse("containers in the pod to explain (init containers included)", containers + init_containers,
                      "max_explain_containers", limits)
    hints = hint_count(hints_doc)
    if hints > limits.max_request_hints:
        raise _refuse("hints in the request", hints, "max_request_hints", limits)


def is_small(pod_doc: object, hints_doc: object = None) -> bool:
    """Whether a request is small enough to run in the node's own process."""
    containers, init_containers = container_counts(pod_doc)
    return containers + init_containers <= SMALL_CONTAINERS and hint_count(hints_doc) <= SMALL_HINTS
