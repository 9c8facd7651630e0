"""The CPU manager's part of an explanation: its hints per NUMA mask (free CPUs, fits, preferred by
the narrowest-width rule of generateCPUTopologyHints) and, after allocation, which CPUs were taken
and why, re-derived with the static policy's own `plan_cpus` (takeByTopology's stages) and checked
against the CPUs Allocate took (`consistent`)."""
from __future__ import annotations

from itertools import islice
from typing import Optional

from cpumanager.errors import CPUManagerError
from cpumanager.hints import FAMILY_MIN_NODES
from cpumanager.listed_hints import is_hint_socket_aligned
from cpumanager.policy_static import SMTAlignmentError, StaticPolicy
from cpumanager.requests import guaranteed_cpus, pod_guaranteed_cpus
from kubeinputs.cpuset import CPUSet
from kubeinputs.pod import Pod
from memorymanager.explain.model import CPUAllocation, CPUHintsPart, CPUMaskRow, CPUNodeRow, CPUTakeRow
from memorymanager.explain.recorder import CPUAllocateCall, CPUHintCall
from memorymanager.explain.units import fmt_nodes
from memorymanager.node.render import hint_to_obj
from memorymanager.node.simulated_node import SimulatedNode
from topologymanager import bitmask
from topologymanager.admission import admission_error_type
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.observer import ALREADY_PRESENT, POD_LEVEL_RESOURCES

FULL_TABLE_NODES = 4  # up to this many NUMA nodes with CPUs, every mask is listed
MAX_ROWS = 32  # beyond: masks no wider than the narrowest fit, up to this many
FAMILY_HINTS_SHOWN = 12


def static_policy(node: SimulatedNode) -> Optional[StaticPolicy]:
    """The node's static CPU policy, None under `none`."""
    policy = node.cpu_manager.policy if node.cpu_manager is not None else None
    return policy if isinstance(policy, StaticPolicy) else None


def cpu_node_rows(node: SimulatedNode) -> list[CPUNodeRow]:
    """Per NUMA node with CPUs: its CPUs, the free ones, the reserved ones, the exclusively held ones, and the
    free ones an exclusive request can be given (`exclusive_takeable`)."""
    policy = static_policy(node)
    if policy is None:
        return []
    cm = node.cpu_manager
    details = policy.topology.details()
    reserved = cm.reserved_cpus()
    free = cm.get_default_cpu_set().difference(reserved)
    takeable = exclusive_takeable(policy, node)
    rows = []
    for numa in details.numa_nodes():
        cpus = details.cpus_in_numa_nodes(numa)
        rows.append(CPUNodeRow(numa, str(cpus), str(free.intersection(cpus)), str(reserved.intersection(cpus)),
                               str(cpus.difference(cm.get_default_cpu_set()).difference(reserved)),
                               str(takeable.intersection(cpus))))
    return rows


def exclusive_takeable(policy: StaticPolicy, node: SimulatedNode) -> CPUSet:
    """The free CPUs an exclusive request can be given: the shared pool less the reserved CPUs; under
    full-pcpus-only only whole free cores of the pool less the reserved CPUs' whole cores (GetAvailablePhysicalCPUs,
    the count enforceSMTAlignment checks), so a CPU whose core sibling is reserved or held is left out."""
    if not policy.options.full_physical_cpus_only:
        return node.cpu_manager.get_default_cpu_set().difference(node.cpu_manager.reserved_cpus())
    available = policy.get_available_physical_cpus(node.cpu_manager.state())
    details = policy.topology.details()
    whole = [details.cpus_in_cores(core) for core in policy.topology.details(available).cores()]
    return CPUSet().union(*[core for core in whole if core.is_subset_of(available)])


def _hints_list(hints: object) -> Optional[list[dict]]:
    """The `cpu` list of a provider's answer as dicts (a family: its first hints); None for no preference."""
    if not hints or "cpu" not in hints or hints["cpu"] is None:
        return None
    found = hints["cpu"]
    if isinstance(found, HintFamily):
        return [hint_to_obj(h) for h in islice(found, FAMILY_HINTS_SHOWN)]
    return [hint_to_obj(h) for h in found]


def _requested(policy: StaticPolicy, pod: Pod, call: CPUHintCall) -> int:
    """The exclusive CPUs the call asks for: the container's, or the pod total in pod scope."""
    if call.container is None:
        return pod_guaranteed_cpus(pod, policy.feature_gates)
    return guaranteed_cpus(pod, call.container, policy.feature_gates)


def _mask_rows(policy: StaticPolicy, available: CPUSet, reusable: CPUSet, request: int
               ) -> tuple[int, list[tuple[int, CPUMaskRow]]]:
    """(the narrowest width, every mask's row in IterateBitMasks order), as generateCPUTopologyHints counts."""
    topo = policy.topology
    details = topo.details()
    numa_nodes = details.numa_nodes()
    masks = list(bitmask.iterate_bit_masks(numa_nodes))
    in_mask = {m: details.cpus_in_numa_nodes(*bitmask.get_bits(m)) for m in masks}
    min_affinity = min((m.bit_count() for m in masks if in_mask[m].size() >= request), default=len(numa_nodes))
    align = policy.options.align_by_socket
    rows = []
    for m in masks:
        cpus = in_mask[m]
        inside = reusable.intersection(cpus).size() == reusable.size()
        free = available.intersection(cpus).size()
        fits = inside and reusable.size() + free >= request
        preferred = fits and (m.bit_count() == min_affinity or (align and is_hint_socket_aligned(topo, m, min_affinity)))
        if not inside:
            verdict = "re-usable CPUs lie outside the mask"
        elif not fits:
            verdict = f"too few free CPUs: {reusable.size() + free} of {request}"
        elif preferred:
            verdict = "hint, preferred" + ("" if m.bit_count() == min_affinity else " (socket-aligned)")
        else:
            verdict = f"hint, not preferred (wider than {min_affinity} node(s))"
        rows.append((m, CPUMaskRow(bitmask.get_bits(m), cpus.size(), free, inside, fits, fits, preferred, verdict)))
    return min_affinity, rows


def build_cpu_hints_part(node: SimulatedNode, pod: Pod, call: CPUHintCall) -> CPUHintsPart:
    """The CPU manager's hints for one call, recomputed mask by mask."""
    policy = static_policy(node)
    hints = _hints_list(call.result)
    if policy is None:
        return CPUHintsPart(call.target, "none", "CPU manager policy none: no exclusive CPUs, no preference", 0)
    request = _requested(policy, pod, call)
    part = CPUHintsPart(call.target, "none", "", request, str(call.available), str(call.reusable),
                        str(CPUSet().union(*call.held.values())), align_by_socket=policy.options.align_by_socket,
                        hints=hints)
    if call.result is None:
        if call.skipped == POD_LEVEL_RESOURCES:
            part.note = "the pod uses pod-level resources, which this static policy does not pin: no preference"
        elif request == 0:
            part.note = ("not a Guaranteed container with an integral CPU request: it runs in the shared pool, "
                         "no preference")
        else:
            part.note = "no preference"
        return part
    held = CPUSet().union(*call.held.values())
    if call.container is None:
        by_name = {c.name: c for c in pod.all_containers()}
        odd = [(name, cpus) for name, cpus in call.held.items() if name in by_name
               and cpus.size() != guaranteed_cpus(pod, by_name[name], policy.feature_gates)]
        if odd:
            name, cpus = odd[0]
            part.path = "regenerated"
            part.note = (f"{name} already holds {cpus.size()} CPUs ({cpus}), not the number it asks for: "
                         "no placement possible")
            return part
    if call.container is not None and call.container.name in call.held:
        part.path = "regenerated"
        if held.size() != request:
            part.note = f"it already holds {held.size()} CPUs ({held}) but asks for {request}: no placement possible"
            return part
        available, reusable = held, CPUSet()
        part.note = f"it already holds CPUs {held}: the hints are those of exactly these CPUs"
    elif call.container is None and call.held and held.size() == request:
        part.path = "regenerated"
        available, reusable = held, CPUSet()
        part.note = f"its containers already hold CPUs {held}, the whole request: the hints are those of these CPUs"
    else:
        part.path = "calculated"
        available, reusable = call.available, call.reusable.union(held) if call.container is None else call.reusable
        part.note = (f"{request} exclusive CPU(s) from {available.size()} free"
                     + (f", re-using {reusable}" if reusable.size() else ""))
    numa_count = len(policy.topology.details().numa_nodes())
    if numa_count >= FAMILY_MIN_NODES or isinstance(call.result.get("cpu"), HintFamily):
        part.note += f"; {numa_count} NUMA nodes with CPUs: too many masks to list"
        return part
    min_affinity, rows = _mask_rows(policy, available, reusable, request)
    part.min_affinity_size = min_affinity
    part.total_masks = len(rows)
    recomputed = [hint_to_obj(TopologyHint(m, r.preferred)) for m, r in rows if r.hint]
    part.consistent = recomputed == hints
    if numa_count <= FULL_TABLE_NODES:
        part.masks = [r for _, r in rows]
        return part
    shown = [r for _, r in rows if len(r.nodes) <= min_affinity][:MAX_ROWS]
    part.masks = shown
    for _, r in rows:
        if not any(r is s for s in shown):
            kind = "hint" if r.hint else "fails"
            part.omitted[kind] = part.omitted.get(kind, 0) + 1
    return part


def _smt_sentence(err: SMTAlignmentError) -> str:
    """Why full-pcpus-only refused, in one sentence."""
    if err.caused_by_physical_cpus:
        return (f"full-pcpus-only: {err.requested_cpus} CPUs asked, but the shared pool less every core holding a "
                f"reserved CPU (with the CPUs the container already holds) has only {err.available_physical_cpus}")
    return (f"full-pcpus-only takes whole cores only: {err.requested_cpus} CPUs is not a multiple of "
            f"{err.cpus_per_core} CPUs per core")


def build_cpu_allocation(node: SimulatedNode, pod: Pod, call: CPUAllocateCall) -> CPUAllocation:
    """What one Allocate of the CPU manager did, with the CPUs re-derived stage by stage."""
    policy = static_policy(node)
    container = call.container
    request = 0
    if policy is not None:
        request = (guaranteed_cpus(pod, container, policy.feature_gates) if container is not None
                   else pod_guaranteed_cpus(pod, policy.feature_gates))
    taken = CPUSet().union(*call.after.values()) if container is None else call.after.get(container.name, CPUSet())
    part = CPUAllocation(call.target, request, None, str(taken) if call.after else "", str(call.available))
    if call.error is not None:
        part.error = str(call.error)
        part.reason = admission_error_type(call.error) or "UnexpectedAdmissionError"
        if isinstance(call.error, SMTAlignmentError):
            part.note = _smt_sentence(call.error)
        return part
    if policy is None:
        part.note = "CPU manager policy none: every container runs on the shared pool"
        return part
    if call.skipped == POD_LEVEL_RESOURCES:
        part.note = "pod-level resources: this static policy pins nothing for the pod"
        return part
    if request == 0:
        part.note = "shared pool: not a Guaranteed container with an integral CPU request"
        part.cpus = ""
        return part
    if call.skipped == ALREADY_PRESENT:
        part.note = f"it already holds CPUs {call.held_before}: kept"
        return part
    if container is None:
        part.note = ("pod-level CPU set on the first container's hint, split into exclusive sets: "
                     + ", ".join(f"{name} {cpus}" for name, cpus in call.after.items()))
        return part
    affinity = node.topology_manager.get_affinity(pod.uid, container.name).numa_node_affinity
    part.affinity = None if affinity is None else bitmask.get_bits(affinity)
    allocatable = call.available.union(call.reusable)
    if affinity is not None:
        part.aligned_free = str(policy.get_aligned_cpus(affinity, allocatable))
    steps: list = []
    try:
        planned = policy.plan_cpus(allocatable, request, affinity, steps)
    except CPUManagerError as err:
        part.note = f"re-derivation failed: {err}"
        part.consistent = False
        return part
    part.steps = [CPUTakeRow(s.phase, s.stage, s.numa_node, str(s.cpus)) for s in steps]
    part.consistent = planned.equals(taken)
    reused = call.reusable.intersection(taken)
    tail = f"; re-used init-container CPUs {reused}" if not reused.is_empty() else ""
    if affinity is None:
        part.note = (f"no NUMA affinity stored for it: from all {allocatable.size()} free"
                     + (" or re-usable" if call.reusable.size() else "") + f" CPU(s){tail}")
        return part
    where = f"{'the sockets of ' if policy.options.align_by_socket else ''}NUMA node(s) {fmt_nodes(part.affinity)}"
    aligned = policy.get_aligned_cpus(affinity, allocatable).size()
    free_word = "free or re-usable" if call.reusable.size() else "free"
    part.note = (f"from the merged hint's {where} first ({aligned} {free_word} CPU(s) there)"
                 + ("" if aligned >= request else f", the other {request - aligned} from anywhere") + tail)
    return part
