"""The DRA memory claims of the `kubelet-static` backend: one device per NUMA node, and each claim's
memory reserved by kubelet's own Allocate on the claimed node (a synthetic Guaranteed pod per claim,
`Node.admit_on`), in the same machine state as the containers; its record kept beside the
checkpoint (`claims.ClaimStore`).
"""
from __future__ import annotations

import re
from typing import Sequence

from kubeinputs.cpuset import cpuset_string
from kubeinputs.errors import brief, describe
from kubeinputs.pod import Pod
from kubeinputs.quantity import BINARY_SI, Quantity, QuantityError, parse_quantity
from memorymanager.node.api import read_pod
from memorymanager.resmgr.claims import ClaimAllocation, ClaimRecord
from memorymanager.resmgr.kubelet_placement import CLAIM_POD_PREFIX, KubeletPlacement, claim_pod_uid
from memorymanager.resmgr.types import (
    CLAIMED_MEMS,
    ContainerEdits,
    Device,
    DeviceRequestAllocationResult,
    PolicyArgumentError,
    PolicyError,
    ResourceClaim,
)

STATIC_NAME = "kubelet-static"
NUMA_NODE_ATTRIBUTE = "resource.kubernetes.io/numaNode"
MEMORY_TYPE_ATTRIBUTE = "memoryType"
DISTANCES_ATTRIBUTE = "distances"
CLAIM_RESOURCE = "memory"
CONFIG_PARAMETERS = ("size",)
_DEVICE = re.compile(r"^memory-numa(0|[1-9][0-9]{0,9})$")  # the names device_name gives


def device_name(numa_node: int) -> str:
    """The DRA device of the regular memory of one NUMA node."""
    return f"memory-numa{numa_node}"


def _gib(size: int) -> str:
    return str(Quantity.from_int(size, BINARY_SI))


def devices(p: KubeletPlacement) -> list[Device]:
    """One device per NUMA node with allocatable regular memory (hugepages are not claimable: the Static
    policy reserves only for Guaranteed pods, which need regular memory)."""
    lists = p.owner.dra_list_attributes_supported() if p.owner is not None else False
    distances = {n.node_id: n.distances for n in p.node.machine.topology}
    found = []
    for numa, resources in sorted(p.node.allocatable().items()):
        size = resources.get(CLAIM_RESOURCE, 0)
        if size <= 0:
            continue
        attributes: dict[str, object] = {NUMA_NODE_ATTRIBUTE: numa, MEMORY_TYPE_ATTRIBUTE: CLAIM_RESOURCE}
        if lists and distances.get(numa):
            attributes[DISTANCES_ATTRIBUTE] = tuple(distances[numa] or ())
        found.append(Device(device_name(numa), attributes, {"size": Quantity.from_int(size, BINARY_SI)}))
    return found


def publish_devices(p: KubeletPlacement) -> None:
    """Hand the devices to the owner (under the Static policy only)."""
    if p.owner is not None and p.static:
        p.owner.publish_dra_devices(devices(p))


def claim_pod(record: ClaimRecord) -> Pod:
    """The synthetic Guaranteed pod holding a claim: one container per result, requesting the result's
    memory (and 1m CPU, which only makes the pod Guaranteed)."""
    containers = [{"name": f"result-{i}", "resources": {"limits": {"cpu": "1m", "memory": str(a.size)}}}
                  for i, a in enumerate(record.allocations)]
    return read_pod({"metadata": {"name": f"claim-{record.uid}", "uid": claim_pod_uid(record.uid),
                                  "namespace": record.namespace}, "spec": {"containers": containers}})


def claim_held(p: KubeletPlacement, record: ClaimRecord) -> bool:
    """Whether kubelet holds every result of the claim on its NUMA node."""
    uid = claim_pod_uid(record.uid)
    return all(p.memset(uid, f"result-{i}") == [a.numa_node] for i, a in enumerate(record.allocations))


def holders(p: KubeletPlacement, numa: int, resource: str) -> list[str]:
    """Who holds `resource` on NUMA node `numa` (claims and containers, with their sizes), for messages."""
    out = []
    for pod_uid, containers in sorted(p.node.simulated_node.state().get_memory_assignments().items()):
        for name, blocks in sorted((containers or {}).items()):
            mine = [b for b in blocks or [] if b.type == resource and numa in (b.numa_affinity or [])]
            size = sum(b.size for b in mine)
            if size == 0:
                continue
            spans = sorted({n for b in mine for n in (b.numa_affinity or [])})
            where = "" if spans == [numa] else f" on NUMA nodes {cpuset_string(spans)}"
            if pod_uid.startswith(CLAIM_POD_PREFIX):
                claim_uid = pod_uid[len(CLAIM_POD_PREFIX):]
                record = p.claims.get(claim_uid)
                label = record.pretty_name if record else f"claim {claim_uid}"
            else:
                pod = p.node.simulated_node.find_pod(pod_uid)
                label = f"container {pod.namespace}/{pod.name}/{name}" if pod else f"container {pod_uid}/{name}"
            out.append(f"{label} ({_gib(size)}{where})")
    return out


def reserve(p: KubeletPlacement, record: ClaimRecord) -> None:
    """Reserve a claim's memory on its NUMA nodes through kubelet's Allocate, or refuse naming what holds
    the memory."""
    state = p.node.machine_state()
    need: dict[int, int] = {}
    for a in record.allocations:
        need[a.numa_node] = need.get(a.numa_node, 0) + a.size
    for numa, size in sorted(need.items()):
        if numa not in state:
            raise PolicyError(f"{record.pretty_name}: NUMA node {numa} does not exist on this node")
        table = (state[numa].memory_map or {}).get(CLAIM_RESOURCE)
        free = table.free if table is not None else 0
        cells = sorted(state[numa].cells or [numa])
        if size > free or cells != [numa]:
            why = (f"needs {_gib(size)} of {CLAIM_RESOURCE} on NUMA node {numa}, which has {_gib(free)} free"
                   if size > free else
                   f"needs {CLAIM_RESOURCE} on NUMA node {numa} alone, but the node is in the NUMA group {cpuset_string(cells)}")
            held = holders(p, numa, CLAIM_RESOURCE)
            held_text = f"; held by {', '.join(held)}" if held else ""
            raise PolicyError(f"{record.pretty_name} {why}{held_text}")
    pod = claim_pod(record)
    answer = p.node.admit_on(pod, {f"result-{i}": [a.numa_node] for i, a in enumerate(record.allocations)})
    if not answer.admitted:
        raise PolicyError(f"{record.pretty_name}: {answer.reason}: {answer.message}")
    if not claim_held(p, record):  # kubelet widened a mask: never hand out other nodes
        p.remove_pod(pod.uid)
        raise PolicyError(f"{record.pretty_name}: kubelet would not place the memory on the claimed NUMA nodes")


def claim_size(p: KubeletPlacement, claim: ResourceClaim, result: DeviceRequestAllocationResult, where: str) -> int:
    """The bytes a result asks for: its claim config's `size`, else its consumed `size` capacity."""
    value: object = None
    for config in claim.configs:
        if config.driver == p.driver and (not config.requests or result.request in config.requests):
            if "size" in config.parameters:
                value = config.parameters["size"]
    if value is None:
        value = result.consumed_capacity.get("size")
    if value is None:
        raise PolicyError(f"{where}: no size: set a config parameter \"size\" or consume the device's \"size\" capacity")
    try:
        q = value if isinstance(value, Quantity) else parse_quantity(value)  # type: ignore[arg-type]
        size = q.as_int64()
    except (QuantityError, ValueError, TypeError) as err:
        raise PolicyError(f"{where}: size {value!r} is not a whole number of bytes ({err})") from err
    if size <= 0:
        raise PolicyError(f"{where}: size must be positive, got {value!r}")
    return size


def check_claim_arguments(claim: object, results: object) -> None:
    """A ResourceClaim with a UID and a list of DeviceRequestAllocationResult, else a PolicyArgumentError."""
    if not isinstance(claim, ResourceClaim) or not isinstance(claim.uid, str) or not claim.uid:
        raise PolicyArgumentError("allocate_claim: claim", f"expected a ResourceClaim with a UID, got "
                                  f"{describe(claim)}")
    if not isinstance(results, (list, tuple)):
        raise PolicyArgumentError("allocate_claim: results", "expected a list of DeviceRequestAllocationResult, "
                                  f"got {describe(results)}")
    for i, item in enumerate(results):
        if not isinstance(item, DeviceRequestAllocationResult):
            raise PolicyArgumentError(f"claim {claim.uid}: results[{i}]", "expected a DeviceRequestAllocationResult, "
                                      f"got {describe(item)}")


def allocate_claim(p: KubeletPlacement, claim: ResourceClaim,
                   results: Sequence[DeviceRequestAllocationResult]) -> list[ContainerEdits]:
    """Reserve the claim's memory (idempotent by claim UID: a claim already held returns its edits), persist
    its record, and return one `CLAIMED_MEMS=<the claim's NUMA nodes>` edit per result. An allocation
    with no results is an error (there is nothing to reserve or to hand out)."""
    known = p.claims.get(claim.uid)
    if known is not None:
        return list(known.edits)
    label = f"claim {claim.namespace}/{claim.name} ({claim.uid})" if claim.name else f"claim {claim.uid}"
    if not results:
        raise PolicyError(f"{label}: the allocation has no results: nothing to allocate")
    for config in claim.configs:
        if config.driver == p.driver:
            unknown = sorted(set(config.parameters) - set(CONFIG_PARAMETERS))
            if unknown:
                raise PolicyError(f"{label}: config parameters the {STATIC_NAME} policy does not take: "
                                  f"{', '.join(unknown)} (it takes: {', '.join(CONFIG_PARAMETERS)})")
    allocations = []
    for i, result in enumerate(results):
        where = f"{label}: results[{i}] (request {brief(result.request)}, device {brief(result.device)})"
        if result.driver != p.driver:
            raise PolicyError(f"{where}: driver {result.driver!r} is not this policy's ({p.driver!r})")
        m = _DEVICE.fullmatch(result.device)
        if m is None:
            raise PolicyError(f"{where}: no such device (devices are memory-numa<N>)")
        allocations.append(ClaimAllocation(result.request, result.device, int(m.group(1)), CLAIM_RESOURCE,
                                           claim_size(p, claim, result, where)))
    nodes = cpuset_string({a.numa_node for a in allocations})
    edits = tuple(ContainerEdits((f"{CLAIMED_MEMS}={nodes}",)) for _ in allocations)
    record = ClaimRecord(claim.uid, claim.name, claim.namespace, tuple(allocations), edits)
    reserve(p, record)
    try:
        p.claims.put(record)
    except PolicyError:
        release_claim(p, claim.uid)
        raise
    return list(edits)


def release_claim(p: KubeletPlacement, uid: str) -> None:
    """Free a claim's reservation and forget its record (unknown or released twice: fine)."""
    p.remove_pod(claim_pod_uid(uid))
    p.claims.remove(uid)
