"""The explanation of one pod on one node, as plain dataclasses (the JSON schema's source).

Five parts, in the order a reader needs them: what is asked (`Asked`), the memory
manager's hints (`HintsPart`, one per container or one for the pod), the merge
(`MergePart`, one per topology manager merge), the decision (`Decision`) and the
allocation (`AllocationPart`). Byte counts are ints; NUMA masks are sorted lists of ids;
machine states are in the checkpoint's JSON shape.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from memorymanager.machine_state import AllocatableTerms
from memorymanager.node.whatif import LargestFit, NodeHeadroom, RemovalFix, SettingTry
from memorymanager.node.whatif_cpu import ConfigTry, CPUFit
from memorymanager.node.whatif_devices import DeviceFit

SCHEMA_VERSION = 1
OMIT_NONE = {"omit_none": True}  # a field left out of the JSON document when it is None (see `as_obj`)


@dataclass
class ContainerAsk:
    """What one container (or the pod, in pod scope) asks the Static policy for."""

    name: str
    kind: str  # init | sidecar | app | pod
    requested: dict[str, int]
    note: str = ""  # why it asks nothing, or how the pod total comes about
    # only when the node models CPUs or devices (a CPU manager other than none, or device resources); else left out
    cpu: Optional[str] = field(default=None, metadata=OMIT_NONE)  # the cpu request as written ("": none)
    exclusive_cpus: Optional[int] = field(default=None, metadata=OMIT_NONE)  # guaranteedCPUs (0: the shared pool)
    cpu_note: Optional[str] = field(default=None, metadata=OMIT_NONE)  # why it gets exclusive CPUs or not
    devices: Optional[dict[str, int]] = field(default=None, metadata=OMIT_NONE)  # device resource -> count


@dataclass
class PodPart:
    """How a pod-scope request of one resource is made: max(app + sidecars, init peak)."""

    resource: str
    app: int
    sidecars: int
    init_peak: int
    peak_container: Optional[str]
    total: int


@dataclass
class Asked:
    """Part 1: the pod's QoS class and what each container (or the pod) requests."""

    pod: str
    uid: str
    qos: str
    qos_reason: str
    memory_policy: str
    topology_policy: str
    scope: str
    containers: list[ContainerAsk] = field(default_factory=list)
    pod_parts: list[PodPart] = field(default_factory=list)


@dataclass
class MaskRow:
    """One candidate mask as calculateHints judged it."""

    nodes: list[int]
    free: dict[str, int]
    allocatable: dict[str, int]
    allocatable_ok: bool
    group_rule: Optional[str]  # "" passes; else the rule broken; None: not evaluated
    group_node: Optional[int]
    reusable: dict[str, int]
    fits: Optional[bool]  # None: not evaluated
    hint: bool
    preferred: bool
    verdict: str


@dataclass
class HintsPart:
    """Part 2: how the memory manager produced its hints for one container or the pod."""

    target: str
    path: str  # calculated | regenerated | none
    note: str
    requested: dict[str, int]
    hints: Optional[dict[str, Optional[list[dict]]]]  # as returned (None: no preference)
    preferred_width: Optional[int] = None
    total_masks: int = 0
    masks: list[MaskRow] = field(default_factory=list)
    omitted: dict[str, int] = field(default_factory=dict)  # verdict kind -> count of masks not listed
    consistent: bool = True  # the recomputed hints equal the ones the manager returned


@dataclass
class ProviderList:
    """One hint list the merge sees: provider, resource, hints before and after filtering."""

    provider: str
    resource: str
    hints: list[dict]
    filtered: list[dict]


@dataclass
class Rival:
    """A merged mask that lost against the winner, and the rule that decided."""

    nodes: Optional[list[int]]
    preferred: bool
    rule: str


@dataclass
class MergePart:
    """Part 3: one topology manager merge (per container, or once per pod)."""

    target: str
    policy: str
    prefer_closest: bool
    lists: list[ProviderList]
    combinations: int
    path: str  # preferred | non-preferred | empty-list | nothing-produced | policy-none
    best_non_preferred_count: Optional[int]
    preferred_candidates: int
    produced_masks: int
    winner: dict
    rule: str  # why the winner won (in one sentence)
    rivals: list[Rival] = field(default_factory=list)
    single_numa_note: str = ""
    admit: bool = True
    admit_rule: str = ""
    consistent: bool = True  # the recomputed result equals the merge's own


@dataclass
class Decision:
    """Part 4: kubelet's answer and why, in one sentence."""

    admitted: bool
    reason: str
    message: str
    why: str


@dataclass
class Take:
    """Bytes one container's allocation took from one NUMA node (kubelet's fill order)."""

    node: int
    resource: str
    size: int


@dataclass
class ContainerAllocation:
    """What Allocate did for one container (or AllocatePod for the pod)."""

    name: str
    nodes: list[int]
    blocks: list[dict]
    taken: list[Take]
    reused: dict[str, int]
    cpuset_mems: str = ""
    error: str = ""
    note: str = ""  # how the mask was chosen when it is not the stored hint


@dataclass
class AllocationPart:
    """Part 5: the allocation, and the machine state before and after the admission."""

    containers: list[ContainerAllocation]
    blocks_after: dict[str, Optional[list[dict]]]
    before: Optional[dict]
    after: Optional[dict]


@dataclass
class MaskShortfall:
    """One candidate mask of the container (or pod) that was refused: the free memory it lacks."""

    target: str
    nodes: list[int]
    preferred_width: bool  # the mask has the preferred width (restricted and single-numa-node admit only these)
    lacking: dict[str, int]  # resource -> bytes of free memory (plus re-usable init memory) still needed; 0: enough
    free_by_node: dict[str, dict[str, int]]  # node -> resource -> free bytes
    blocked_by: str  # "" or why the mask is no hint whatever is free (the group rule), in one phrase


@dataclass
class CPUShortfall:
    """One NUMA mask whose CPUs could hold the refused container's (or pod's) exclusive CPUs: the free CPUs it
    lacks (0: enough)."""

    target: str
    nodes: list[int]
    preferred_width: bool  # the mask has the narrowest width (restricted and single-numa-node admit only these)
    cpus: int  # the machine's CPUs in the mask
    free: int  # free CPUs in the mask (plus re-usable ones)
    lacking: int  # free CPUs still needed


@dataclass
class DeviceShortfall:
    """One NUMA mask whose registered devices could hold the refused container's (or pod's) request of a device
    resource: the free devices it lacks (0: enough)."""

    target: str
    resource: str
    nodes: list[int]
    preferred_width: bool
    devices: int  # registered devices touching the mask
    free: int  # free devices touching it
    lacking: int


@dataclass
class WhatIf:
    """Part 6 (`--what-if`): what would make a refused pod fit, each answer checked by admitting it on a copy
    of the node; or, for an admitted pod, the room left per NUMA node."""

    admitted: bool
    shortfalls: list[MaskShortfall] = field(default_factory=list)
    shortfall_note: str = ""  # when no mask even has the allocatable memory: the most any has
    removals: list[RemovalFix] = field(default_factory=list)
    removal_note: str = ""
    settings: list[SettingTry] = field(default_factory=list)
    largest: Optional[LargestFit] = None
    largest_note: str = ""
    headroom: list[NodeHeadroom] = field(default_factory=list)
    checks: int = 0
    cpu_shortfalls: list[CPUShortfall] = field(default_factory=list)  # refused for want of CPUs: per mask
    cpu_note: str = ""  # a sentence on the CPU side (SMTAlignmentError, no mask can hold the request)
    device_shortfalls: list[DeviceShortfall] = field(default_factory=list)  # refused for want of devices: per mask
    smaller_cpus: Optional[CPUFit] = None  # the largest CPU request admitted now
    smaller_cpus_note: str = ""
    cpu_settings: list[ConfigTry] = field(default_factory=list)  # CPU manager settings tried (restarts)
    cpu_headroom: list["CPUNodeRow"] = field(default_factory=list)  # admitted: each NUMA node's CPUs after it
    device_headroom: list["DeviceInventory"] = field(default_factory=list)  # admitted: the devices after it
    smaller_devices: list[DeviceFit] = field(default_factory=list)  # per refused device resource: the largest count
    # only when the node models CPUs or devices (left out of the JSON otherwise):
    limited_by: Optional[list[str]] = field(default=None, metadata=OMIT_NONE)  # cpu / device resources that refused it
    provider_fits: Optional[list["ProviderFit"]] = field(default=None, metadata=OMIT_NONE)  # the refused merge's lists


@dataclass
class ProviderFit:
    """Where one hint provider's resource fits the refused container (or pod) as preferred, after the policy's
    filter: the masks of its preferred hints (None: no preference, it fits anywhere)."""

    provider: str
    resource: str
    masks: Optional[list[list[int]]]


@dataclass
class CPUNodeRow:
    """One NUMA node's CPUs as the static CPU policy sees them (cpusets written like `0-3,8-11`)."""

    node: int
    cpus: str  # every CPU of the node
    free: str  # in the shared pool and not reserved
    reserved: str
    exclusive: str  # held exclusively by containers
    takeable: str = ""  # the free CPUs an exclusive request can be given (full-pcpus-only: whole free cores only)


@dataclass
class CPUMaskRow:
    """One NUMA mask as generateCPUTopologyHints judged it."""

    nodes: list[int]
    cpus: int  # CPUs of the machine in the mask (free or not): what the narrowest width is counted on
    free: int  # free CPUs in the mask
    reusable_inside: bool  # every re-usable CPU lies in the mask
    fits: bool  # re-usable + free CPUs cover the request
    hint: bool
    preferred: bool
    verdict: str


@dataclass
class CPUHintsPart:
    """The CPU manager's hints for one container (or the pod): the CPUs counted per NUMA mask."""

    target: str
    path: str  # calculated | regenerated | none
    note: str
    requested: int  # exclusive CPUs asked for (0: the shared pool)
    available: str = ""  # free CPUs (shared pool minus reserved)
    reusable: str = ""  # the pod's finished init containers' CPUs
    held: str = ""  # CPUs the container (pod) already holds
    min_affinity_size: Optional[int] = None  # the narrowest width whose CPUs could hold the request
    align_by_socket: bool = False
    hints: Optional[list[dict]] = None  # the `cpu` hints returned (None: no preference)
    total_masks: int = 0
    masks: list[CPUMaskRow] = field(default_factory=list)
    omitted: dict[str, int] = field(default_factory=dict)  # hint | fails -> masks not listed
    consistent: bool = True


@dataclass
class CPUTakeRow:
    """CPUs one stage of takeByTopology took, and why."""

    phase: str  # aligned (from the merged hint's NUMA nodes or sockets) | rest (from anywhere)
    stage: str  # whole NUMA nodes | whole sockets | uncore cache | whole cores | single CPUs | distributed ...
    numa_node: Optional[int]
    cpus: str


@dataclass
class CPUAllocation:
    """What the CPU manager's Allocate did for one container (AllocatePod: the pod)."""

    target: str
    requested: int
    affinity: Optional[list[int]]  # the merged hint's NUMA nodes it aligned to (None: any)
    cpus: str  # the exclusive CPUs it holds after the call ("": the shared pool)
    free_before: str = ""
    aligned_free: str = ""  # free (+ re-usable) CPUs of the hint's NUMA nodes (align-by-socket: sockets)
    steps: list[CPUTakeRow] = field(default_factory=list)
    note: str = ""
    error: str = ""
    reason: str = ""  # the admission reason of the error (SMTAlignmentError, ...)
    consistent: bool = True  # the re-derived CPUs equal the ones Allocate took


@dataclass
class DeviceInfo:
    """One device of a resource as the device manager sees it."""

    id: str
    numa_nodes: Optional[list[int]]  # None: no topology
    healthy: bool
    state: str  # free | held (by this container or pod) | re-usable | in use | unhealthy | in use (no plugin)


@dataclass
class DeviceMaskRow:
    """One NUMA mask (over the NUMA nodes hosting the resource's devices) as generateDeviceTopologyHints judged it."""

    nodes: list[int]
    devices: int  # registered devices touching the mask (the narrowest width is counted on these)
    free: int  # available devices touching the mask
    reusable_inside: bool  # every re-usable device with topology touches the mask
    fits: bool
    hint: bool
    preferred: bool
    verdict: str


@dataclass
class DeviceHintsPart:
    """The device manager's hints for one resource of one container (or the pod)."""

    target: str
    resource: str
    requested: int
    path: str  # calculated | regenerated | no-topology | too-few
    note: str
    device_nodes: list[int] = field(default_factory=list)  # the NUMA nodes masks are made of
    devices: list[DeviceInfo] = field(default_factory=list)
    min_affinity_size: Optional[int] = None
    hints: Optional[list[dict]] = None  # None: no preference
    total_masks: int = 0
    masks: list[DeviceMaskRow] = field(default_factory=list)
    omitted: dict[str, int] = field(default_factory=dict)
    consistent: bool = True


@dataclass
class DevicePick:
    """A device Allocate gave, and why it was taken."""

    id: str
    numa_nodes: Optional[list[int]]
    why: str  # re-used | aligned | not aligned | no topology | already held


@dataclass
class DeviceAllocation:
    """What the device manager's Allocate did for one resource of one container."""

    target: str
    resource: str
    requested: int
    affinity: Optional[list[int]]
    picks: list[DevicePick] = field(default_factory=list)
    error: str = ""


@dataclass
class DeviceInventory:
    """A device resource of the node: its devices, their NUMA nodes and state."""

    resource: str
    devices: list[DeviceInfo]
    registered: bool  # a plugin declared it (else known from the checkpoint only)


@dataclass
class Explanation:
    """Everything explain says about one pod (one `admit` or `hints` step)."""

    op: str
    asked: Optional[Asked] = None
    allocatable: list[AllocatableTerms] = field(default_factory=list)  # how each node's allocatable comes about
    hints: list[HintsPart] = field(default_factory=list)
    merges: list[MergePart] = field(default_factory=list)
    decision: Optional[Decision] = None
    allocation: Optional[AllocationPart] = None
    error: str = ""  # the node could not be asked (not running, bad input)
    what_if: Optional[WhatIf] = None  # only when asked for (`--what-if`)
    cpu_policy: str = "none"  # the CPU manager's policy
    cpu_options: dict[str, str] = field(default_factory=dict)  # cpuManagerPolicyOptions
    cpu_nodes: list[CPUNodeRow] = field(default_factory=list)  # static policy: CPUs per NUMA node, before
    cpu_hints: list[CPUHintsPart] = field(default_factory=list)
    cpu_allocation: list[CPUAllocation] = field(default_factory=list)
    devices: list[DeviceInventory] = field(default_factory=list)  # the node's device resources, before
    device_hints: list[DeviceHintsPart] = field(default_factory=list)
    device_allocation: list[DeviceAllocation] = field(default_factory=list)


@dataclass
class StepView:
    """One scenario step: its explanation (admit and hints steps) and the node after it."""

    index: int
    op: str
    title: str
    status: str  # passed | failed
    failures: list[dict]
    explanation: Optional[Explanation]
    machine_state: Optional[dict]  # after the step, checkpoint shape
    entries: Optional[dict]  # after the step: pod uid -> container -> blocks
    pod_names: dict[str, str] = field(default_factory=dict)  # uid -> name
    error: Optional[str] = None


@dataclass
class ScenarioView:
    """A scenario as explain and the HTML report see it."""

    file: str
    name: str
    description: str
    steps: list[StepView]
    error: str = ""  # an invalid scenario


def as_obj(value: Any) -> Any:
    """A dataclass tree as JSON-ready dicts and lists (field names kept)."""
    from dataclasses import fields, is_dataclass

    if is_dataclass(value):
        return {f.name: as_obj(getattr(value, f.name)) for f in fields(value)
                if not (f.metadata.get("omit_none") and getattr(value, f.name) is None)}
    if isinstance(value, dict):
        return {str(k): as_obj(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_obj(v) for v in value]
    return value
