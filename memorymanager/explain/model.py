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

SCHEMA_VERSION = 1


@dataclass
class ContainerAsk:
    """What one container (or the pod, in pod scope) asks the Static policy for."""

    name: str
    kind: str  # init | sidecar | app | pod
    requested: dict[str, int]
    note: str = ""  # why it asks nothing, or how the pod total comes about


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
        return {f.name: as_obj(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): as_obj(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_obj(v) for v in value]
    return value
