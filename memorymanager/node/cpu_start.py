"""The CPU manager's and device manager's side of a kubelet start: what they read and why the CPU manager stops it.

`cpu_start_facts` gathers the arithmetic behind the CPU manager's start errors: the machine's CPUs,
`reservedSystemCPUs` against them, the Node Allocatable `cpu` reservation (systemReserved + kubeReserved)
whose ceiling is the static policy's reserved CPU count, the reserved set kubelet keeps (read from a
simulated start without the CPU checkpoint, through the manager's public reader), and the checkpoint
`cpu_manager_state` against this machine (its policy, the CPUs it names and the machine lacks, the
machine's CPUs it does not name, the assignments it records). `device_checkpoint_facts` reads the device
checkpoint as kubelet does: kubelet never stops on it, but an unreadable one is started without.

The fixes that concern the CPU manager (`cpu_fix_fields`) are KubeletConfiguration changes or the deletion
of `cpu_manager_state`; `memorymanager.node.start_diagnosis` checks each by a simulated start.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

from cpumanager.errors import CPUManagerError
from cpumanager.policy_options import check_policy_option_available
from cpumanager.requests import milli_value
from cpumanager.state.checkpoint import read_checkpoint as read_cpu_checkpoint
from cpumanager.topology import discover
from devicemanager.checkpoint import read_checkpoint as read_device_checkpoint
from kubeinputs.cpuset import CPUSet, CPUSetError
from kubeinputs.features import (CPU_MANAGER_POLICY_ALPHA_OPTIONS_GATE, CPU_MANAGER_POLICY_BETA_OPTIONS_GATE,
                                 FeatureGates)
from kubeinputs.kubelet_config import KubeletConfig, node_allocatable_reservation
from kubeinputs.machine import MachineInfo

CPU_POLICY_STATIC = "static"

# StartFix.kind values of the CPU manager, least destructive first
FIX_CPU_POLICY = "cpuManagerPolicy"
FIX_CPU_OPTIONS = "cpuManagerPolicyOptions"
FIX_CPU_OPTION_GATE = "cpuManagerPolicyOptionsGate"
FIX_RESERVED_CPUS = "reservedSystemCPUs"
FIX_CPU_RESERVATION = "cpuReservation"
FIX_CPU_DELETE = "deleteCPUCheckpoint"


@dataclass
class CPUStart:
    """The CPU manager's inputs at start, in cpusets (`0-3,8-11`): the policy and its options, the machine's
    CPUs, `reservedSystemCPUs` and the Node Allocatable `cpu` reservation with the count the static policy
    derives (ceil), the reserved set kept (`reserved_error` when kubelet cannot make it), and the checkpoint:
    its policy, its shared pool, every CPU it names, those the machine lacks (`lacking`), the machine's
    CPUs it does not name (`unnamed`), the assignments (pod UID -> container -> cpuset) and why kubelet
    cannot read it (`checkpoint_error`)."""

    policy: str
    options: dict[str, str]
    machine_cpus: str
    reserved_system_cpus: str
    reservation: str  # the Node Allocatable cpu reservation as kubelet prints it ("" none)
    reserved_count: Optional[int]
    reserved: str
    reserved_error: str = ""
    checkpoint: str = ""
    checkpoint_policy: str = ""
    checkpoint_error: str = ""
    checkpoint_default: str = ""
    checkpoint_cpus: str = ""
    lacking: str = ""
    unnamed: str = ""
    overlaps: str = ""  # CPUs named twice: in the shared pool and an assignment, or in two assignments
    entries: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class DeviceCheckpointFacts:
    """The device checkpoint as kubelet reads it at start: its entries (pod UID -> container -> resource ->
    device IDs), or why it cannot be read (kubelet then starts without it), and what the start warned."""

    checkpoint: str
    error: str = ""
    entries: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)


def _reservation(config: KubeletConfig, machine: MachineInfo) -> tuple[str, Optional[int]]:
    """(the Node Allocatable cpu reservation as kubelet prints it, the static policy's count from it)."""
    try:
        reserved = node_allocatable_reservation(config, machine).get("cpu")
    except Exception:  # kubelet stops earlier, on the configuration; its error says why
        return "", None
    if reserved is None:
        return "", None
    return str(reserved), math.ceil(milli_value(reserved) / 1000)


def cpu_start_facts(machine: MachineInfo, config: KubeletConfig, checkpoint: Optional[bytes], checkpoint_path: str,
                    reserved_of_start: Callable[[], tuple[Optional[CPUSet], str]]) -> CPUStart:
    """The CPU manager's inputs (see CPUStart); `reserved_of_start` gives the reserved set of a simulated start
    without the CPU checkpoint (None and kubelet's error when that start fails)."""
    try:
        all_cpus = discover(machine).details().cpus()
    except Exception:  # CPUManagerError, a work limit: kubelet's start error says why
        all_cpus = CPUSet()
    reservation, count = _reservation(config, machine)
    facts = CPUStart(config.cpu_manager_policy, dict(config.cpu_manager_policy_options), str(all_cpus),
                     config.reserved_system_cpus, reservation, count, "")
    reserved, error = reserved_of_start()
    if reserved is not None:
        facts.reserved = str(reserved)
    else:
        facts.reserved_error = error
    if checkpoint is None:
        return facts
    facts.checkpoint = checkpoint_path
    try:
        loaded = read_cpu_checkpoint(checkpoint)
    except Exception as exc:  # CheckpointError, GoJSONError, WorkLimitError: kubelet cannot read it
        facts.checkpoint_error = str(exc)
        return facts
    facts.checkpoint_policy = loaded.policy_name
    facts.checkpoint_default = loaded.default_cpu_set
    named, twice = CPUSet(), CPUSet()
    try:
        named = CPUSet.parse(loaded.default_cpu_set)
        for pod, containers in sorted(loaded.entries.items()):
            for name, text in sorted(containers.items()):
                facts.entries.setdefault(pod, {})[name] = text
                assigned = CPUSet.parse(text)
                twice = twice.union(named.intersection(assigned))
                named = named.union(assigned)
    except Exception as err:  # CPUSetError, a work limit
        facts.checkpoint_error = f"a cpuset kubelet cannot parse: {err}"
        return facts
    facts.checkpoint_cpus = str(named)
    facts.overlaps = str(twice)
    facts.lacking = str(named.difference(all_cpus))
    facts.unnamed = str(all_cpus.difference(named)) if not named.is_empty() else ""
    return facts


def device_checkpoint_facts(checkpoint: Optional[bytes], path: str) -> Optional[DeviceCheckpointFacts]:
    """The device checkpoint's entries, or why kubelet cannot read it; None when there is no file."""
    if checkpoint is None:
        return None
    facts = DeviceCheckpointFacts(path)
    try:
        data = read_device_checkpoint(checkpoint, path)
    except Exception as exc:  # DeviceCheckpointError: kubelet logs it and starts without the allocations
        facts.error = str(exc)
        return facts
    for entry in data.entries or []:
        ids = sorted({d for per_node in (entry.device_ids or {}).values() for d in per_node})
        facts.entries.setdefault(entry.pod_uid, {}).setdefault(entry.container_name, {})[entry.resource_name] = ids
    return facts


def _option_fixes(config: KubeletConfig) -> list[tuple[str, dict[str, object]]]:
    """Options changes that may let the static policy start: the gate an option needs turned on, or the
    options without those kubelet refuses (unknown ones, then each other one alone)."""
    options = dict(config.cpu_manager_policy_options)
    try:
        gates = FeatureGates.from_config(config.feature_gates)
    except ValueError:  # kubelet stops on the gates first; its error says why
        return []
    fixes: list[tuple[str, dict[str, object]]] = []
    needed: dict[str, bool] = {}
    unknown = []
    for option in options:
        try:
            check_policy_option_available(option, gates)
        except CPUManagerError as err:
            text = str(err)
            if "Alpha-level" in text:
                needed[CPU_MANAGER_POLICY_ALPHA_OPTIONS_GATE] = True
            elif "Beta-level" in text:
                needed[CPU_MANAGER_POLICY_BETA_OPTIONS_GATE] = True
            else:
                unknown.append(option)
    if needed and not unknown:
        fixes.append((FIX_CPU_OPTION_GATE, {"featureGates": {**dict(config.feature_gates), **needed}}))
    if unknown:
        fixes.append((FIX_CPU_OPTIONS, {"cpuManagerPolicyOptions": {k: v for k, v in options.items()
                                                                    if k not in unknown}}))
    for option in options:
        if option not in unknown:
            fixes.append((FIX_CPU_OPTIONS, {"cpuManagerPolicyOptions": {k: v for k, v in options.items()
                                                                        if k != option}}))
    return fixes


def cpu_fix_fields(config: KubeletConfig, facts: CPUStart, error: str) -> list[tuple[str, dict[str, object], bool]]:
    """The CPU manager's candidate fixes for kubelet's start `error`: (kind, configuration fields, deletes
    cpu_manager_state), least destructive first; each is checked by the caller."""
    out: list[tuple[str, dict[str, object], bool]] = []
    if facts.checkpoint and facts.checkpoint_policy and facts.checkpoint_policy != facts.policy:
        out.append((FIX_CPU_POLICY, {"cpuManagerPolicy": facts.checkpoint_policy}, False))
    if facts.policy == CPU_POLICY_STATIC and facts.options and "option" in error.lower():
        out.extend((kind, fields, False) for kind, fields in _option_fixes(config))
    if facts.reserved_system_cpus and ("reserved-cpus" in error or "reserved cpus" in error):
        try:
            inside = CPUSet.parse(facts.reserved_system_cpus).intersection(CPUSet.parse(facts.machine_cpus))
            if facts.checkpoint_default and "defaultCpuSet" in error:  # those the checkpoint's shared pool still has
                inside = inside.intersection(CPUSet.parse(facts.checkpoint_default))
        except Exception:  # CPUSetError, a work limit: kubelet's error says why
            inside = CPUSet()
        out.append((FIX_RESERVED_CPUS, {"reservedSystemCPUs": str(inside)}, False))
    if facts.policy == CPU_POLICY_STATIC and not facts.reserved_system_cpus and not facts.reserved_count:
        system = {k: str(v) for k, v in config.system_reserved.items()}
        system["cpu"] = "1"
        out.append((FIX_CPU_RESERVATION, {"systemReserved": system}, False))
    if facts.checkpoint:
        out.append((FIX_CPU_DELETE, {}, True))
    return out
