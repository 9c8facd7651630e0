"""Why kubelet will not start, with the arithmetic behind its error and fixes that were checked.

`diagnose_start(machine, config, checkpoint)` starts a simulated kubelet on a copy of the
checkpoint (in a temporary folder: the given file is never written) and reports:

* kubelet's start error, word for word (and the one-line reservedMemory hint of `run`);
* per memory type, reservedMemory (per NUMA node and in total) against systemReserved +
  kubeReserved + evictionHard, as kubelet's validateReservedMemory adds them up
  (`memorymanager.node.reservation`);
* for a checkpoint that no longer matches the machine (the reboot drift of
  kubernetes/kubernetes#131253 and #109996), every field of the stored machine state that
  differs from what this machine and configuration give (the default machine state with the
  stored assignments replayed, as kubelet's validateState builds it), node by node;
* fixes, each checked by starting a simulated kubelet with it: reservedMemory entries that add
  up; the memory manager policy the checkpoint was written with; reservedMemory as it was when the
  checkpoint was written; the drift tolerance (KEP-6232) that would accept the drift; deleting the
  checkpoint, with what is lost;
* how each NUMA node's allocatable bytes come about on this machine.

Cost: a few simulated starts (each O(assignments) plus the checkpoint's size), no admission.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from typing import Optional, Union

from cpumanager.state import CHECKPOINT_FILE_NAME as CPU_CHECKPOINT_FILE_NAME
from devicemanager.constants import CHECKPOINT_DIR as DEVICE_CHECKPOINT_DIR
from devicemanager.constants import CHECKPOINT_FILE_NAME as DEVICE_CHECKPOINT_FILE_NAME
from kubeinputs.cpuset import CPUSet
from kubeinputs.devices import DeclaredDevices
from kubeinputs.features import MEMORY_MANAGER_DRIFT_TOLERANCE_GATE, POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from kubeinputs.kubelet_config import KubeletConfig, parse_kubelet_config
from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import BINARY_SI, Quantity
from memorymanager.machine_state import (AllocatableTerms, get_default_machine_state, machine_allocatable_terms,
                                         replay_assignments)
from memorymanager.node.cpu_start import (CPUStart, DeviceCheckpointFacts, cpu_fix_fields, cpu_start_facts,
                                          device_checkpoint_facts)
from memorymanager.node.render import assignments_to_obj, machine_state_to_obj, pod_assignments_to_obj
from memorymanager.node.reservation import ReservationSum, reservation_sums, reserved_memory_fix
from memorymanager.node.simulated_node import KubeletStartError, SimulatedNode
from memorymanager.policy import POLICY_STATIC
from memorymanager.policy_options import MEMORY_DRIFT_TOLERANCE
from memorymanager.reserved_memory import convert_reserved
from state import CHECKPOINT_FILE_NAME
from state.checkpoint import LoadedCheckpoint, read_checkpoint
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from state.checkpoint_manager import NoSyncFileOps
from state.types import MEMORY, NUMANodeMap

# The path kubelet keeps its memory manager checkpoint at (--root-dir /var/lib/kubelet).
DEFAULT_CHECKPOINT_PATH = "/var/lib/kubelet/" + CHECKPOINT_FILE_NAME

# the start errors of the CPU manager: its options, its reserved CPUs, its state (the rest are the memory manager's)
CPU_ERROR_PREFIXES = ("new static policy error", "[cpumanager]", "reserved-cpus", "unable to parse reserved-cpus",
                      "start cpu manager error", "unknown policy", "new none policy error", "unable to discover CPU")
CPU_POLICY_NONE = "none"

# StateDrift.field values
NODE, RESOURCE, ASSIGNMENTS, CELLS = "node", "resource", "numberOfAssignments", "cells"
TABLE_FIELDS = (("total", "total_mem_size"), ("systemReserved", "system_reserved"), ("allocatable", "allocatable"))
GROUP_FIELDS = ("free", "reserved")

# StartFix.kind values, least destructive first
FIX_RESERVED_MEMORY = "reservedMemory"
FIX_POLICY = "memoryManagerPolicy"
FIX_AS_WRITTEN = "reservedMemoryAsWritten"
FIX_DRIFT_TOLERANCE = "memoryDriftTolerance"
FIX_DELETE = "deleteCheckpoint"


@dataclass(frozen=True)
class StateDrift:
    """One field where the checkpoint's machine state differs from this machine's (kubelet's
    areMachineStatesEqual): a node's table value (`total`, `systemReserved`, `allocatable`), free or
    reserved summed over the node's group (`free`, `reserved`; `nodes` is the group), the node's
    assignment count or group (`numberOfAssignments`, `cells`), or a node or resource only one side has
    (`node`, `resource`: the values are then true/false for present)."""

    nodes: list[int]
    resource: str
    field: str
    stored: Union[int, list[int], bool, None]
    expected: Union[int, list[int], bool, None]


@dataclass(frozen=True)
class StartFix:
    """A change that was tried by starting a simulated kubelet with it: KubeletConfiguration fields to
    set (`config`, as they are written in the file), and/or deleting the checkpoint, with what that loses
    (`lost`: the stored assignments, pod UID -> container -> blocks; `lost_pods`: pod-level blocks)."""

    kind: str
    config: dict[str, object]
    delete_checkpoint: bool
    starts: bool
    error: str = ""
    lost: dict[str, object] = field(default_factory=dict)
    lost_pods: dict[str, object] = field(default_factory=dict)
    delete_cpu_checkpoint: bool = False  # the fix deletes cpu_manager_state
    lost_cpus: dict[str, dict[str, str]] = field(default_factory=dict)  # deleting it: pod UID -> container -> cpuset


@dataclass
class StartDiagnosis:
    """Everything `explain --start` says about one kubelet start."""

    starts: bool
    error: str
    hint: str
    reservations: list[ReservationSum]
    reservation_error: str  # why the sums cannot be made (kubelet fails before it adds anything up)
    checkpoint: str  # the checkpoint file ("" when there is none)
    checkpoint_policy: str
    checkpoint_error: str  # why kubelet cannot read it ("" when it can)
    drift: list[StateDrift]
    fixes: list[StartFix]
    allocatable: list[AllocatableTerms]
    machine_state: Optional[dict]  # what this machine and configuration give, stored assignments replayed
    entries: Optional[dict] = None  # the checkpoint's assignments (pod UID -> container -> blocks), replayed there
    cpu: Optional[CPUStart] = None  # the CPU manager's inputs (static policy, or a cpu_manager_state given)
    device_checkpoint: Optional[DeviceCheckpointFacts] = None  # the device checkpoint, when there is one
    warnings: list[str] = field(default_factory=list)  # what a start restored without a word (device checkpoint)


def try_start(machine: MachineInfo, config: KubeletConfig, checkpoint: Optional[bytes],
              shown_path: str = DEFAULT_CHECKPOINT_PATH, limits: Limits = DEFAULT_LIMITS) -> tuple[bool, str, str]:
    """(starts, kubelet's start error, the reservedMemory hint) of a simulated kubelet whose checkpoint folder
    holds `checkpoint` (None: no file), in a temporary folder; the folder's path in the error reads `shown_path`."""
    started = simulated_start(machine, config, ManagerCheckpoints(checkpoint), shown_path, limits)
    return started.starts, started.error, started.hint


@dataclass(frozen=True)
class ManagerCheckpoints:
    """The bytes of the checkpoints a start reads (None: no file): the memory manager's, the CPU manager's
    `cpu_manager_state`, the device manager's `device-plugins/kubelet_internal_checkpoint`; and the devices
    the device plugins declare (resource -> devices); and the files the CPU and device checkpoints were read from,
    named in the diagnosis and in kubelet's errors ("": the kubelet folder's own file names)."""

    memory: Optional[bytes] = None
    cpu: Optional[bytes] = None
    device: Optional[bytes] = None
    devices: Optional[DeclaredDevices] = None
    cpu_path: str = ""
    device_path: str = ""


@dataclass(frozen=True)
class StartResult:
    """One simulated start: whether it started, kubelet's error and reservedMemory hint, the warnings of a start
    (the device checkpoint), and the CPU manager's reserved CPUs (None when it did not start)."""

    starts: bool
    error: str
    hint: str
    warnings: tuple[str, ...] = ()
    reserved_cpus: Optional[CPUSet] = None


def simulated_start(machine: MachineInfo, config: KubeletConfig, checkpoints: ManagerCheckpoints,
                    shown_path: str = DEFAULT_CHECKPOINT_PATH, limits: Limits = DEFAULT_LIMITS) -> StartResult:
    """A simulated kubelet started on copies of the checkpoints in a temporary folder; in its error the memory
    checkpoint reads `shown_path` and the folder reads the folder of `shown_path`."""
    with tempfile.TemporaryDirectory(prefix="memorymanager-start-") as folder:
        files = ((CHECKPOINT_FILE_NAME, checkpoints.memory), (CPU_CHECKPOINT_FILE_NAME, checkpoints.cpu),
                 (os.path.join(DEVICE_CHECKPOINT_DIR, DEVICE_CHECKPOINT_FILE_NAME), checkpoints.device))
        for name, blob in files:
            if blob is not None:
                os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
                with open(os.path.join(folder, name), "wb") as fh:
                    fh.write(blob)
        node = SimulatedNode(machine, config, folder, limits=limits, devices=checkpoints.devices)
        node.file_ops = NoSyncFileOps(limits)  # a throwaway folder
        try:
            node.start()
        except KubeletStartError as exc:
            text = str(exc).replace(os.path.join(folder, CHECKPOINT_FILE_NAME), shown_path)
            for (name, _), given in zip(files[1:], (checkpoints.cpu_path, checkpoints.device_path)):
                if given:
                    text = text.replace(os.path.join(folder, name), given)
            text = text.replace(folder, os.path.dirname(shown_path) or ".")
            return StartResult(False, text, exc.hint or "")
        warnings = tuple(node.start_warnings)
        if checkpoints.device_path:  # the file given, not the kubelet folder's name
            named = f"warning: {DEVICE_CHECKPOINT_DIR}/{DEVICE_CHECKPOINT_FILE_NAME}"
            warnings = tuple(w.replace(named, f"warning: {checkpoints.device_path}", 1) for w in warnings)
        return StartResult(True, "", "", warnings, node.cpu_manager.reserved_cpus())


def _gates(config: KubeletConfig) -> Optional[FeatureGates]:
    """The configuration's feature gates, None when kubelet would refuse them."""
    try:
        return FeatureGates.from_config(config.feature_gates)
    except ValueError:
        return None


def expected_machine_state(machine: MachineInfo, config: KubeletConfig,
                           loaded: Optional[LoadedCheckpoint]) -> tuple[NUMANodeMap, str]:
    """What kubelet's validateState expects: this machine's default state under the configuration's
    reservedMemory, with the stored assignments replayed; and why the replay stopped ("" when it did not)."""
    expected = get_default_machine_state(machine, convert_reserved(machine, config.reserved_memory))
    if loaded is None:
        return expected, ""
    gates = _gates(config) or FeatureGates.from_config({})
    pod_level = gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE)
    pod_entries = loaded.pod_entries or {}

    def pod_blocks(uid: str) -> Optional[list]:
        """The pod-level blocks of a pod (PodLevelResourceManagers)."""
        entry = pod_entries.get(uid)
        return None if entry is None else list(entry.memory_blocks or [])

    try:
        replay_assignments(expected, loaded.entries or {}, pod_blocks if pod_level else None,
                           gates.enabled(MEMORY_MANAGER_DRIFT_TOLERANCE_GATE))
    except Exception as exc:  # kubelet's own replay error (an assignment on a node or type that is gone)
        return expected, str(exc)
    return expected, ""


def _group_sum(state: NUMANodeMap, cells: list[int], resource: str, name: str) -> Optional[int]:
    """free or reserved summed over a group (None where a node or table is missing)."""
    total = 0
    for node_id in cells:
        node = state.get(node_id)
        table = None if node is None else (node.memory_map or {}).get(resource)
        if table is None:
            return None
        total += getattr(table, name)
    return total


def state_drift(stored: NUMANodeMap, expected: NUMANodeMap) -> list[StateDrift]:
    """Every difference kubelet's areMachineStatesEqual would find (it stops at the first), by node."""
    drift: list[StateDrift] = []
    seen_groups: set[tuple] = set()
    for node_id in sorted(set(stored) | set(expected)):
        old, new = stored.get(node_id), expected.get(node_id)
        if old is None or new is None:
            drift.append(StateDrift([node_id], "", NODE, old is not None, new is not None))
            continue
        if old.number_of_assignments != new.number_of_assignments:
            drift.append(StateDrift([node_id], "", ASSIGNMENTS, old.number_of_assignments, new.number_of_assignments))
        if sorted(old.cells or []) != sorted(new.cells or []):
            drift.append(StateDrift([node_id], "", CELLS, sorted(old.cells or []), sorted(new.cells or [])))
        old_map, new_map = old.memory_map or {}, new.memory_map or {}
        for resource in sorted(set(old_map) | set(new_map), key=lambda r: (r != MEMORY, r)):
            t1, t2 = old_map.get(resource), new_map.get(resource)
            if t1 is None or t2 is None:
                drift.append(StateDrift([node_id], resource, RESOURCE, t1 is not None, t2 is not None))
                continue
            for name, attr in TABLE_FIELDS:
                if getattr(t1, attr) != getattr(t2, attr):
                    drift.append(StateDrift([node_id], resource, name, getattr(t1, attr), getattr(t2, attr)))
            cells = sorted(old.cells or [node_id])
            if (tuple(cells), resource) in seen_groups:
                continue
            seen_groups.add((tuple(cells), resource))
            for name in GROUP_FIELDS:
                a, b = _group_sum(stored, cells, resource, name), _group_sum(expected, cells, resource, name)
                if a != b:
                    drift.append(StateDrift(cells, resource, name, a, b))
    return drift


def _quantity(size: int) -> str:
    """Bytes as the quantity a KubeletConfiguration would carry (`1636Mi`, `1000000000`)."""
    return str(Quantity.from_int(size, BINARY_SI))


def reserved_memory_lines(by_node: dict[int, dict[str, int]]) -> list[dict[str, object]]:
    """NUMA node -> resource -> bytes as KubeletConfiguration's reservedMemory list."""
    return [{"numaNode": node_id, "limits": {r: _quantity(size) for r, size in sorted(limits.items())}}
            for node_id, limits in sorted(by_node.items()) if limits]


def _with(config: KubeletConfig, fields: dict[str, object]) -> Optional[KubeletConfig]:
    """The configuration with some fields set, None when the fields do not parse."""
    try:
        return parse_kubelet_config(fields, "fix", base=config)
    except Exception:
        return None


class _Starter:
    """Tries fixes: starts a simulated kubelet with each, keeping the checkpoints unless the fix deletes one."""

    def __init__(self, machine: MachineInfo, config: KubeletConfig, checkpoints: ManagerCheckpoints, shown: str,
                 loaded: Optional[LoadedCheckpoint], limits: Limits, cpu: Optional[CPUStart] = None) -> None:
        """The inputs every fix starts from."""
        self.machine, self.config, self.checkpoints, self.shown, self.loaded = (machine, config, checkpoints, shown,
                                                                                loaded)
        self.checkpoint = checkpoints.memory
        self.limits, self.cpu = limits, cpu

    def fix(self, kind: str, fields: dict[str, object], delete: bool = False, delete_cpu: bool = False) -> StartFix:
        """One fix, checked."""
        config = _with(self.config, fields) if fields else self.config
        lost: dict[str, object] = {}
        lost_pods: dict[str, object] = {}
        if delete and self.loaded is not None:
            lost = assignments_to_obj(self.loaded.entries or {}) or {}
            lost_pods = pod_assignments_to_obj(self.loaded.pod_entries) or {}
        lost_cpus = dict(self.cpu.entries) if delete_cpu and self.cpu is not None else {}
        if config is None:
            return StartFix(kind, fields, delete, False, "the fix does not parse", lost, lost_pods, delete_cpu, lost_cpus)
        checkpoints = replace(self.checkpoints, memory=None if delete else self.checkpoints.memory,
                              cpu=None if delete_cpu else self.checkpoints.cpu)
        started = simulated_start(self.machine, config, checkpoints, self.shown, self.limits)
        return StartFix(kind, fields, delete, started.starts, started.error, lost, lost_pods, delete_cpu, lost_cpus)


def diagnose_start(machine: MachineInfo, config: KubeletConfig, checkpoint: Optional[bytes] = None,
                   checkpoint_path: str = DEFAULT_CHECKPOINT_PATH, limits: Limits = DEFAULT_LIMITS,
                   others: Optional[ManagerCheckpoints] = None) -> StartDiagnosis:
    """Start a simulated kubelet with this machine, configuration and checkpoint bytes (None: no file) and
    say why it fails, with the arithmetic and checked fixes (see the module's docstring); the simulated
    kubelets read their checkpoint within `limits`. `others` gives the CPU and device checkpoints and the
    declared devices (their `memory` is ignored): they are started with, and the CPU manager's side explained."""
    checkpoints = replace(others or ManagerCheckpoints(), memory=checkpoint)
    started = simulated_start(machine, config, checkpoints, checkpoint_path, limits)
    starts, error, hint = started.starts, started.error, started.hint
    static = config.memory_manager_policy == POLICY_STATIC
    rows: list[ReservationSum] = []
    reservation_error = ""
    if static:  # only the Static policy checks reservedMemory
        try:
            rows = reservation_sums(config, machine)
        except Exception as exc:  # kubelet stops before adding anything up; its error says why
            reservation_error = str(exc)
    loaded: Optional[LoadedCheckpoint] = None
    checkpoint_error = ""
    if checkpoint is not None:
        try:
            loaded = read_checkpoint(checkpoint)
        except Exception as exc:  # CheckpointError, GoJSONError: kubelet cannot read it
            checkpoint_error = str(exc)
    diagnosis = StartDiagnosis(starts, error, hint, rows, reservation_error,
                               checkpoint_path if checkpoint is not None else "",
                               loaded.policy_name if loaded is not None else "", checkpoint_error, [], [], [], None)
    expected: Optional[NUMANodeMap] = None
    if static:
        try:
            expected, replay_error = expected_machine_state(
                machine, config, loaded if loaded is not None and loaded.policy_name == POLICY_STATIC else None)
        except Exception:  # a reservation Go could not convert: the start error says so
            expected, replay_error = None, ""
        if expected is not None:
            diagnosis.allocatable = machine_allocatable_terms(expected)
            diagnosis.machine_state = machine_state_to_obj(expected)
            if loaded is not None and loaded.policy_name == POLICY_STATIC and not replay_error:
                diagnosis.entries = assignments_to_obj(loaded.entries or {})
            if loaded is not None and loaded.machine_state and loaded.policy_name == POLICY_STATIC and not replay_error:
                diagnosis.drift = state_drift(loaded.machine_state, expected)
    diagnosis.warnings = list(started.warnings)
    folder = os.path.dirname(checkpoint_path) or "."
    diagnosis.device_checkpoint = device_checkpoint_facts(
        checkpoints.device,
        checkpoints.device_path or os.path.join(folder, DEVICE_CHECKPOINT_DIR, DEVICE_CHECKPOINT_FILE_NAME))
    if config.cpu_manager_policy != CPU_POLICY_NONE or checkpoints.cpu is not None:
        def reserved() -> tuple[Optional[CPUSet], str]:
            """The reserved CPUs of a start with no checkpoint at all (the configuration's own)."""
            bare = simulated_start(machine, config, ManagerCheckpoints(devices=checkpoints.devices), checkpoint_path,
                                   limits)
            return bare.reserved_cpus, bare.error

        diagnosis.cpu = cpu_start_facts(machine, config, checkpoints.cpu,
                                        checkpoints.cpu_path or os.path.join(folder, CPU_CHECKPOINT_FILE_NAME),
                                        reserved)
    if starts:
        return diagnosis
    starter = _Starter(machine, config, checkpoints, checkpoint_path, loaded, limits, diagnosis.cpu)
    if diagnosis.cpu is not None and error.startswith(CPU_ERROR_PREFIXES):
        cpu_fixes = [starter.fix(kind, fields, delete_cpu=delete)
                     for kind, fields, delete in cpu_fix_fields(config, diagnosis.cpu, error)]
        diagnosis.fixes.extend(fix for fix in cpu_fixes if fix.starts)
        return diagnosis
    tried: list[StartFix] = []
    if hint and rows and not all(r.equal for r in rows):  # kubelet's error is the reservation's
        fields = {"reservedMemory": reserved_memory_lines(reserved_memory_fix(rows, machine))}
        fix = starter.fix(FIX_RESERVED_MEMORY, fields)
        if not fix.starts and checkpoint is not None:
            fix = starter.fix(FIX_RESERVED_MEMORY, fields, delete=True)
        diagnosis.fixes.append(fix)  # kept even when something else then stops kubelet: its error is the next one
    if loaded is not None and loaded.policy_name != config.memory_manager_policy:
        tried.append(starter.fix(FIX_POLICY, {"memoryManagerPolicy": loaded.policy_name}))
    if diagnosis.drift:
        tried.extend(_drift_fixes(diagnosis, starter, loaded))
    if checkpoint is not None:
        tried.append(starter.fix(FIX_DELETE, {}, delete=True))
    diagnosis.fixes.extend(fix for fix in tried if fix.starts)
    return diagnosis


def _drift_fixes(diagnosis: StartDiagnosis, starter: _Starter, loaded: Optional[LoadedCheckpoint]) -> list[StartFix]:
    """Fixes that keep the checkpoint: reservedMemory as it was written; a drift tolerance that accepts it."""
    fixes: list[StartFix] = []
    fields = {d.field for d in diagnosis.drift}
    if "systemReserved" in fields and loaded is not None:
        as_written = {node_id: {r: t.system_reserved for r, t in (node.memory_map or {}).items()
                                if t is not None and t.system_reserved}
                      for node_id, node in (loaded.machine_state or {}).items() if node is not None}
        fixes.append(starter.fix(FIX_AS_WRITTEN, {"reservedMemory": reserved_memory_lines(as_written)}))
    moved = [d for d in diagnosis.drift if d.field in ("total", "allocatable")]
    if moved and fields <= {"total", "allocatable", "free"} and all(d.resource == MEMORY for d in moved):
        bound = max(abs(d.stored - d.expected) for d in moved)
        gates = dict(starter.config.feature_gates)
        gates[MEMORY_MANAGER_DRIFT_TOLERANCE_GATE] = True
        options = dict(starter.config.memory_manager_policy_options)
        options[MEMORY_DRIFT_TOLERANCE] = _quantity(bound)
        fixes.append(starter.fix(FIX_DRIFT_TOLERANCE, {"featureGates": gates, "memoryManagerPolicyOptions": options}))
    return fixes
