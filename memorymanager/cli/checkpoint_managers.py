"""`memorymanager checkpoint inspect|verify` for the CPU and device managers' files.

`cpu_manager_state` (the CPU manager) and `device-plugins/kubelet_internal_checkpoint` (the device
manager) are read as kubelet v1.37 reads them (cpumanager.state.checkpoint, devicemanager.checkpoint);
which kind a file is comes from its name, else from its content (`checkpoint_kind`). inspect shows
what a file holds and whether kubelet restores it; verify answers whether kubelet would, with
kubelet's own refusal text:

* a CPU checkpoint kubelet refuses stops kubelet (`could not restore state from checkpoint: ...`);
  with `--policy` the policy name is compared, with `--machine` the CPUs it names are checked against
  the machine as the static policy's validateState checks them;
* a device checkpoint kubelet cannot read is ignored by kubelet (it starts with no device allocation),
  so verify fails saying so; with `--devices` (and `--machine` for NUMA ids) verify also refuses what
  kubelet would restore silently: entries naming devices, resources or NUMA nodes the node lacks.
"""
from __future__ import annotations

import os
from typing import Any, Optional, TextIO

from cpumanager.errors import CPUManagerError
from cpumanager.policy_static import check_state_cpus
from cpumanager.state import CHECKPOINT_FILE_NAME as CPU_FILE_NAME
from cpumanager.state.checkpoint import CheckpointV4, LoadedCheckpoint, read_checkpoint as read_cpu_checkpoint
from cpumanager.state.state_checkpoint import parse_loaded, restore_error
from state.checkpoint_store import go_join
from cpumanager.topology import discover
from devicemanager.checkpoint import (DeviceCheckpointData, check_against_node, checkpoint_checksum,
                                      decode_checkpoint, read_checkpoint as read_device_checkpoint)
from devicemanager.constants import CHECKPOINT_FILE_NAME as DEVICE_FILE_NAME
from devicemanager.errors import DeviceCheckpointError
from kubeinputs import gojson
from kubeinputs.cpuset import CPUSet
from kubeinputs.devices import DeclaredDevices
from kubeinputs.machine import MachineInfo
from state import CHECKPOINT_FILE_NAME as MEMORY_FILE_NAME
from state.checkpoint_errors import CheckpointError

KIND_MEMORY, KIND_CPU, KIND_DEVICE = "memory", "cpu", "device"
KINDS = (KIND_MEMORY, KIND_CPU, KIND_DEVICE)
_NAMES = {MEMORY_FILE_NAME: KIND_MEMORY, CPU_FILE_NAME: KIND_CPU, DEVICE_FILE_NAME: KIND_DEVICE}
NOT_ALLOCATED = "-"


def checkpoint_kind(path: str, blob: bytes) -> str:
    """Which manager's checkpoint a file is: by its file name (kubelet's), else by its keys (a device
    checkpoint has `Data` and `Checksum`, a CPU checkpoint `defaultCpuSet`); anything else is read as
    the memory manager's (whose reader then says what is wrong)."""
    kind = _NAMES.get(os.path.basename(path))
    if kind is not None:
        return kind
    try:
        root = gojson.parse(blob)
    except gojson.GoJSONError:
        return KIND_MEMORY
    if root.kind != "object":
        return KIND_MEMORY
    keys = {key.lower() for key, _ in root.value}
    if "data" in keys and "checksum" in keys and "policyname" not in keys:
        return KIND_DEVICE
    if "defaultcpuset" in keys:
        return KIND_CPU
    return KIND_MEMORY


# ----- the CPU manager's cpu_manager_state ----------------------------------------------------------------


def _cpu_content(blob: bytes) -> Optional[dict[str, Any]]:
    """What the file holds, read without checking its checksum (the inline fields every format has), or None
    when it cannot be decoded at all."""
    cp = CheckpointV4()
    try:
        cp.unmarshal_checkpoint(blob)
    except CheckpointError:
        if not cp.policy_name and not cp.default_cpu_set and not cp.entries:
            return None
    data = cp.checkpoint_data if cp.data else cp
    return {"policyName": data.policy_name, "defaultCpuSet": data.default_cpu_set,
            "entries": {pod: dict(containers or {}) for pod, containers in sorted((data.entries or {}).items())},
            "podEntries": {pod: str(cpus) for pod, cpus in sorted((data.pod_entries or {}).items())
                           if isinstance(cpus, CPUSet)}}


def analyse_cpu(blob: bytes) -> dict[str, Any]:
    """Everything `inspect` reports about a cpu_manager_state file, JSON-ready."""
    report: dict[str, Any] = {"kind": KIND_CPU}
    try:
        loaded = read_cpu_checkpoint(blob, pod_level_resource_managers=True)
        report["loadedAs"], report["loadError"] = loaded.format, None
    except (CheckpointError, gojson.GoJSONError) as err:
        report["loadedAs"], report["loadError"] = None, str(err)
    content = _cpu_content(blob)
    if content is not None:
        report.update(content)
    return report


def _cpu_lines(path: str, r: dict[str, Any]) -> list[str]:
    """inspect's human report of a CPU checkpoint."""
    lines = [f"checkpoint:  {path}", "manager:     CPU manager (cpu_manager_state)"]
    if r["loadError"] is None:
        lines.append(f"kubelet:     loads it (as {r['loadedAs']}; the policy and the CPUs are checked at start)")
    else:
        lines.append(f"kubelet:     refuses it: {r['loadError']}")
    if "policyName" not in r:
        lines.append("content:     cannot be decoded")
        return lines
    lines.append(f"policy:      {r['policyName']}")
    lines.append(f"shared pool: {r['defaultCpuSet'] or '(empty)'}")
    lines.append("")
    lines.append("assignments:" + ("" if r["entries"] else " none"))
    for pod, containers in r["entries"].items():
        lines.append(f"  pod {pod}")
        for container, cpus in sorted(containers.items()):
            lines.append(f"    {container}: {cpus}")
    if r["podEntries"]:
        lines.append("pod-level sets:")
        lines.extend(f"  pod {pod}: {cpus}" for pod, cpus in r["podEntries"].items())
    return lines


def verify_cpu(path: str, blob: bytes, policy_name: Optional[str], machine: Optional[MachineInfo],
               out: TextIO) -> int:
    """Exit 0 when kubelet v1.37 would restore the file (with `policy_name`, and the CPUs checked against
    `machine`, when given), else 1 with kubelet's text."""
    kubelet_path = go_join(os.path.dirname(path) or ".", os.path.basename(path))
    try:
        loaded = read_cpu_checkpoint(blob)
        default, assignments = parse_loaded(loaded, policy_name)
    except (CheckpointError, gojson.GoJSONError) as err:
        print(f"FAIL: {restore_error(kubelet_path, err)}", file=out)
        return 1
    if machine is not None:
        problem = _cpus_against_machine(loaded, default, assignments, machine)
        if problem is not None:
            print(f"FAIL: {problem}", file=out)
            return 1
    containers = sum(len(c) for c in assignments.values())
    policy = f'policy "{loaded.policy_name}"' + ("" if policy_name is not None else " (not compared: no --policy)")
    cpus = "" if machine is not None else ", CPUs not checked (no --machine)"
    print(f"OK: kubelet would load {path}: format {loaded.format}, {policy}, shared pool "
          f'"{default}", {containers} container assignment(s){cpus}', file=out)
    return 0


def _cpus_against_machine(loaded: LoadedCheckpoint, default: CPUSet, assignments: dict[str, dict[str, CPUSet]],
                          machine: MachineInfo) -> Optional[str]:
    """The static policy's validateState checks that need only the machine (kubelet's texts); a file of
    the none policy, or with an empty shared pool and no assignment, is not checked (kubelet does not)."""
    if loaded.policy_name != "static" or (default.is_empty() and not assignments):
        return None
    if default.is_empty():
        return "default cpuset cannot be empty"
    try:
        all_cpus = discover(machine).details().cpus()
        check_state_cpus(default, assignments, (), all_cpus)
    except CPUManagerError as err:
        return str(err)
    return None


# ----- the device manager's kubelet_internal_checkpoint -------------------------------------------------


def _device_entries(data: DeviceCheckpointData) -> list[dict[str, Any]]:
    """The entries as JSON-ready rows (device IDs by NUMA node; -1 is "no topology")."""
    return [{"pod": e.pod_uid, "container": e.container_name, "resource": e.resource_name,
             "devices": {str(numa): list(ids or []) for numa, ids in sorted((e.device_ids or {}).items())},
             "allocRespBytes": None if e.alloc_resp is None else len(e.alloc_resp)}
            for e in data.entries or []]


def analyse_device(blob: bytes) -> dict[str, Any]:
    """Everything `inspect` reports about a kubelet_internal_checkpoint file, JSON-ready."""
    report: dict[str, Any] = {"kind": KIND_DEVICE}
    try:
        decoded = decode_checkpoint(blob)
    except DeviceCheckpointError as err:
        report.update(loaded=False, loadError=str(err))
        return report
    expected = checkpoint_checksum(decoded.data)
    report["checksum"] = {"stored": decoded.checksum, "expected": expected,
                          "verdict": "valid" if expected == decoded.checksum else
                          f"corrupted: expected {expected} stored {decoded.checksum}"}
    try:
        read_device_checkpoint(blob)
        report.update(loaded=True, loadError=None)
    except DeviceCheckpointError as err:
        report.update(loaded=False, loadError=str(err))
    report["entries"] = _device_entries(decoded.data)
    report["registeredDevices"] = {r: list(ids or []) for r, ids in sorted((decoded.data.registered_devices or {}).items())}
    return report


def _device_lines(path: str, r: dict[str, Any]) -> list[str]:
    """inspect's human report of a device checkpoint."""
    lines = [f"checkpoint:  {path}", "manager:     device manager (device-plugins/kubelet_internal_checkpoint)"]
    if "checksum" in r:
        c = r["checksum"]
        lines.append(f"checksum:    {'valid (Checksum ' + str(c['stored']) + ')' if c['verdict'] == 'valid' else c['verdict']}")
    if r["loaded"]:
        lines.append("kubelet:     restores it")
    else:
        lines.append(f"kubelet:     cannot read it and starts with no device allocation: {r['loadError']}")
    if "entries" not in r:
        return lines
    lines.append("")
    lines.append("allocations:" + ("" if r["entries"] else " none"))
    for e in r["entries"]:
        where = ", ".join(f"{'no topology' if numa == '-1' else 'NUMA ' + numa}: {' '.join(ids) or NOT_ALLOCATED}"
                          for numa, ids in e["devices"].items()) or "no devices"
        lines.append(f"  pod {e['pod']} container {e['container']} {e['resource']}: {where}")
    lines.append("registered devices:" + ("" if r["registeredDevices"] else " none"))
    for resource, ids in r["registeredDevices"].items():
        lines.append(f"  {resource}: {', '.join(ids) or '(none healthy)'}")
    return lines


def verify_device(path: str, blob: bytes, devices: Optional[DeclaredDevices], machine: Optional[MachineInfo],
                  out: TextIO) -> int:
    """Exit 0 when kubelet v1.37 restores the file (and, with `devices`, every entry fits the node), else 1."""
    try:
        data = read_device_checkpoint(blob, path)
    except DeviceCheckpointError as err:
        print(f"FAIL: {err} (kubelet logs this and starts with no device allocation)", file=out)
        return 1
    if devices is not None:
        nodes = [n.node_id for n in machine.topology] if machine is not None else range(64)
        problems = check_against_node(data, devices, nodes, path)
        if problems:
            for problem in problems:
                print(f"FAIL: {problem}", file=out)
            print("(kubelet itself restores such entries without a word; this node cannot account for them)",
                  file=out)
            return 1
    entries = len(data.entries or [])
    resources = len(data.registered_devices or {})
    checked = "" if devices is not None else ", devices not checked (no --devices)"
    print(f"OK: kubelet would restore {path}: {entries} allocation entr{'y' if entries == 1 else 'ies'}, "
          f"{resources} registered resource(s){checked}", file=out)
    return 0


def analyse(kind: str, blob: bytes) -> dict[str, Any]:
    """inspect's report of a CPU or device checkpoint."""
    return analyse_cpu(blob) if kind == KIND_CPU else analyse_device(blob)


def report_lines(kind: str, path: str, report: dict[str, Any]) -> list[str]:
    """inspect's human report of a CPU or device checkpoint."""
    return _cpu_lines(path, report) if kind == KIND_CPU else _device_lines(path, report)


def decodable(kind: str, report: dict[str, Any]) -> bool:
    """Whether inspect could show the file's content (its exit status)."""
    return ("policyName" in report) if kind == KIND_CPU else ("entries" in report)
