"""scheduler-plugins' NodeResourceTopologyMatch Filter, its single-numa-node rule, on an NRT object.

What a NUMA-aware scheduler predicts before kubelet decides. The rule (scheduler-plugins
`pkg/noderesourcetopology`, snapshot of 2026-08), rewritten from its behaviour:

- BestEffort pods that request no extended (non-native) resource always pass.
- The topology manager configuration comes from the NRT: defaults policy `none`, scope
  `container`; the first `topologyPolicies` entry (deprecated field) sets both, then the
  `topologyManagerPolicy` / `topologyManagerScope` attributes override them (invalid values are
  ignored). Only `single-numa-node` filters; any other policy passes every pod.
- NUMA nodes are the zones of type `Node` named `node-<id>` (other zones, and ids above 64,
  are skipped); each one's resources are the zones' `available` quantities.
- For one request list (a container's requests, or the pod's effective request in pod scope),
  every NUMA node starts as a candidate; for each resource with a non-zero request:
  - not in the node's allocatable at all: refused (cpu, memory, pods and ephemeral-storage are
    always there, as in the scheduler's node info);
  - the candidates are the NUMA nodes listing the resource whose available quantity covers the
    request, where a non-Guaranteed pod's cpu, memory and hugepages count as covered by any
    listing; a resource that no NUMA node lists passes when it is host-level (ephemeral-storage,
    storage, any non-native resource) and otherwise leaves no candidate;
  - no candidate left: refused.
  The chosen NUMA node is the lowest candidate.
- Container scope: each init container must fit on its own (nothing is subtracted for them);
  then each app container in order must fit, and its requests are subtracted from the chosen
  NUMA node (a non-Guaranteed pod's cpu, memory and hugepages are not subtracted; resources the
  node does not list are skipped). Refusal status: `cannot align init container` (or
  `cannot align sidecar container` for a restartable one) / `cannot align container`.
- Pod scope: the pod's effective request (the larger of the summed app containers' requests and
  the largest init container's, per resource, plus overhead, sidecars not treated specially)
  must fit; status `cannot align pod`.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Optional, Sequence

from kubeinputs.pod import Container, Pod
from kubeinputs.qos import get_pod_qos
from kubeinputs.quantity import Quantity, parse_quantity

MAX_NUMA_ID = 64
ALL_NUMA = frozenset(range(MAX_NUMA_ID))
ALWAYS_AT_NODE_LEVEL = ("cpu", "memory", "pods", "ephemeral-storage")
VALID_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
VALID_SCOPES = ("container", "pod")
# the deprecated `topologyPolicies` values -> (policy, scope)
_POLICY_VALUES = {
    "SingleNUMANodePodLevel": ("single-numa-node", "pod"),
    "SingleNUMANodeContainerLevel": ("single-numa-node", "container"),
    "BestEffortPodLevel": ("best-effort", "pod"),
    "BestEffortContainerLevel": ("best-effort", "container"),
    "RestrictedPodLevel": ("restricted", "pod"),
    "RestrictedContainerLevel": ("restricted", "container"),
}

ResourceAmounts = dict[str, Fraction]


@dataclass(frozen=True)
class FilterVerdict:
    """The filter's answer: `fits`, else `status` (the Unschedulable message) and the resource
    that decided (`reason`, upstream's internal reject reason)."""

    fits: bool
    status: str = ""
    reason: str = ""


@dataclass
class NUMAZone:
    """One NUMA node as the filter sees it: id and available amount per resource."""

    numa_id: int
    resources: ResourceAmounts


def _amount(value: object) -> Fraction:
    """A quantity (string, number or Quantity) as its exact value."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, Quantity):
        return value.value
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        return parse_quantity(value).value
    raise ValueError(f"not a quantity: {value!r}")


def is_native(resource: str) -> bool:
    """v1helper.IsNativeResource: no domain, or a `kubernetes.io/` one."""
    return "/" not in resource or "kubernetes.io/" in resource


def is_hugepages(resource: str) -> bool:
    return resource.startswith("hugepages-")


def is_host_level(resource: str) -> bool:
    """Resources that may have no NUMA affinity: storage, ephemeral-storage, non-native ones."""
    return resource in ("ephemeral-storage", "storage") or not is_native(resource)


def is_numa_affine(resource: str) -> bool:
    """cpu, memory and hugepages, which must be NUMA-bound."""
    return resource in ("cpu", "memory") or is_hugepages(resource)


def topology_manager_of(nrt: Mapping[str, object]) -> tuple[str, str]:
    """(policy, scope) as the filter reads them from the NRT object."""
    policy, scope = "none", "container"
    policies = nrt.get("topologyPolicies") or []
    if isinstance(policies, list) and policies:
        policy, scope = _POLICY_VALUES.get(str(policies[0]), (policy, scope))
    for attr in nrt.get("attributes") or []:
        if not isinstance(attr, Mapping):
            continue
        name, value = attr.get("name"), attr.get("value")
        if name == "topologyManagerScope" and value in VALID_SCOPES:
            scope = str(value)
        elif name == "topologyManagerPolicy" and value in VALID_POLICIES:
            policy = str(value)
    return policy, scope


def _numa_id(name: object) -> Optional[int]:
    """`node-<id>` -> id, else None."""
    if not isinstance(name, str) or not name.startswith("node-"):
        return None
    digits = name[len("node-"):]
    if not digits.isdigit():
        return None
    return int(digits)


def numa_zones(nrt: Mapping[str, object]) -> list[NUMAZone]:
    """The NUMA nodes of the NRT, in zone order, with their available amounts."""
    nodes = []
    for zone in nrt.get("zones") or []:
        if not isinstance(zone, Mapping) or zone.get("type") != "Node":
            continue
        numa = _numa_id(zone.get("name"))
        if numa is None or numa >= MAX_NUMA_ID:  # upstream skips ids above 64 (and would panic at 64)
            continue
        resources = {str(r["name"]): _amount(r["available"]) for r in zone.get("resources") or []}
        nodes.append(NUMAZone(numa, resources))
    return nodes


def _requests(container: Container) -> ResourceAmounts:
    return {name: q.value for name, q in container.resources.requests.items()}


def pod_effective_request(pod: Pod, overhead: Optional[Mapping[str, Fraction]] = None) -> ResourceAmounts:
    """The larger of the summed app containers' requests and the largest init container's,
    per resource, plus the pod overhead."""
    init: ResourceAmounts = {}
    for container in pod.init_containers:
        for name, value in _requests(container).items():
            if name not in init or value > init[name]:
                init[name] = value
    total: ResourceAmounts = {}
    for container in pod.containers:
        for name, value in _requests(container).items():
            total[name] = total.get(name, Fraction(0)) + value
    for name, value in init.items():
        if name not in total or value > total[name]:
            total[name] = value
    for name, value in (overhead or {}).items():
        total[name] = total.get(name, Fraction(0)) + value
    return total


def _suitable(guaranteed: bool, resource: str, request: Fraction, available: Fraction) -> bool:
    if not guaranteed and is_numa_affine(resource):
        return True
    return available >= request


def best_numa(zones: Sequence[NUMAZone], node_allocatable: Mapping[str, Fraction], guaranteed: bool,
              requests: Mapping[str, Fraction]) -> tuple[Optional[int], str]:
    """(the lowest NUMA node that fits every request, None when none does; the deciding resource)."""
    candidates = set(ALL_NUMA)
    for resource, request in requests.items():
        if request == 0:
            continue
        if resource not in node_allocatable:
            return None, resource
        listed = False
        fits: set[int] = set()
        for zone in zones:
            if resource not in zone.resources:
                continue
            listed = True
            if _suitable(guaranteed, resource, request, zone.resources[resource]):
                fits.add(zone.numa_id)
        if not listed and is_host_level(resource):
            continue
        candidates &= fits
        if not candidates:
            return None, resource
    return min(candidates), "generic"


def _subtract(zones: Sequence[NUMAZone], numa: int, guaranteed: bool, requests: Mapping[str, Fraction]) -> None:
    for zone in zones:
        if zone.numa_id != numa:
            continue
        for resource, request in requests.items():
            if (not guaranteed and is_numa_affine(resource)) or request == 0 or resource not in zone.resources:
                continue
            zone.resources[resource] = zone.resources[resource] - request


def _include_non_native(pod: Pod) -> bool:
    return any(not is_native(name) for c in pod.init_containers + pod.containers for name in c.resources.requests)


def filter_pod(pod: Pod, nrt: Mapping[str, object], node_allocatable: Mapping[str, object],
               qos: Optional[str] = None, zones: Optional[list[NUMAZone]] = None) -> FilterVerdict:
    """The Filter's verdict for `pod` (requests already defaulted) on a node with this NRT object
    and this node-level allocatable (resource -> quantity). `qos` defaults to the pod's class.
    `zones`: the NRT's `numa_zones` when the caller has them already (a fresh list: the container
    scope subtracts from it)."""
    qos = qos or get_pod_qos(pod, True)
    if qos == "BestEffort" and not _include_non_native(pod):
        return FilterVerdict(True)
    policy, scope = topology_manager_of(nrt)
    if policy != "single-numa-node":
        return FilterVerdict(True)
    # the scheduler's node info always lists cpu, memory, pods and ephemeral-storage
    allocatable = {name: Fraction(0) for name in ALWAYS_AT_NODE_LEVEL}
    allocatable.update({name: _amount(value) for name, value in node_allocatable.items()})
    if zones is None:
        zones = numa_zones(nrt)
    guaranteed = qos == "Guaranteed"
    if scope == "pod":
        numa, reason = best_numa(zones, allocatable, guaranteed, pod_effective_request(pod))
        return FilterVerdict(True) if numa is not None else FilterVerdict(False, "cannot align pod", reason)
    for container in pod.init_containers:
        numa, reason = best_numa(zones, allocatable, guaranteed, _requests(container))
        if numa is None:
            kind = "sidecar" if container.is_restartable else "init"
            return FilterVerdict(False, f"cannot align {kind} container", reason)
    for container in pod.containers:
        requests = _requests(container)
        numa, reason = best_numa(zones, allocatable, guaranteed, requests)
        if numa is None:
            return FilterVerdict(False, "cannot align container", reason)
        _subtract(zones, numa, guaranteed, requests)
    return FilterVerdict(True)
