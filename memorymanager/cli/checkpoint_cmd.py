"""`memorymanager checkpoint inspect|verify`: read a kubelet checkpoint file.

For `memory_manager_state`, inspect shows what the file holds (format, policy, per-NUMA-node
tables, NUMA groups, assignments) and the checksum verdict; verify answers whether kubelet v1.37
would load it, with kubelet's own error text when it would not. The CPU manager's
`cpu_manager_state` and the device manager's `kubelet_internal_checkpoint` are read by
`checkpoint_managers` (the kind comes from the file name, else the content, or `--kind`).
Neither command ever writes the file.
"""
from __future__ import annotations

import json
import os
from typing import Any, Optional, TextIO

from kubeinputs import gojson
from memorymanager.explain.units import DERIVATION_HEAD, fmt_derivation
from memorymanager.machine_state import allocatable_terms
from memorymanager.node.render import assignments_to_obj, machine_state_to_obj, pod_assignments_to_obj
from state.checkpoint import CheckpointV1, CheckpointV2, CheckpointV3, read_checkpoint
from state.checkpoint_errors import CheckpointError
from kubeinputs.checksum import string_checksum
from kubeinputs.errors import Error
from kubeinputs.devices import load_devices_file
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.machine import load_machine_info
from kubeinputs.quantity import size_text
from state.state_checkpoint import StateError, check_loadable, go_join, restore_error

RESOURCE_COLUMNS = (("total", "total"), ("systemReserved", "systemReserved"), ("allocatable", "allocatable"),
                    ("reserved", "reserved"), ("free", "free"))


def _read(path: str, limits: Limits) -> tuple[Optional[bytes], Optional[str]]:
    """The file's bytes, or a one-line reason why it cannot be read."""
    from kubeinputs.errors import InputError
    from state.checkpoint_manager import read_checkpoint_file

    try:
        blob = read_checkpoint_file(path, limits)
    except InputError as err:
        return None, f"{path}: {err.reason}"
    if blob is None:
        return None, f"{path}: no such file (kubelet would start with an empty state and create it)"
    return blob, None


def apparent_format(cp3: CheckpointV3, blob: bytes) -> str:
    """Which format the file is written in: v3 when it carries data/dataChecksum, v2 when it
    has pod entries, else v1."""
    if cp3.data or cp3.data_checksum:
        return "v3"
    try:
        root = gojson.parse(blob)
    except gojson.GoJSONError:
        return "v1"
    if root.kind == "object" and any(k.lower() == "podentries" for k, _ in root.value):
        return "v2"
    return "v1"


def _verdict(stored: int, expected: int, zero_accepted: bool) -> dict:
    """A checksum verdict: valid, not checked (0) when the format accepts 0, or corrupted."""
    if stored == expected:
        text = "valid"
    elif stored == 0 and zero_accepted:
        text = "not checked (0)"
    else:
        text = f"corrupted: expected {expected} stored {stored}"
    return {"verdict": text, "stored": stored, "expected": expected}


def analyse(blob: bytes) -> dict[str, Any]:
    """Everything inspect reports about a checkpoint's bytes, as one JSON-ready object."""
    report: dict[str, Any] = {}
    cp3 = CheckpointV3()
    decode_error: Optional[str] = None
    try:
        cp3.unmarshal_checkpoint(blob)
    except (CheckpointError, gojson.GoJSONError) as err:
        decode_error = str(err)
    fmt = apparent_format(cp3, blob)
    report["format"] = fmt
    content: Any = None
    if fmt == "v3":
        report["checksumField"] = "dataChecksum"
        report["checksum"] = _verdict(cp3.data_checksum, string_checksum(cp3.data), zero_accepted=False)
        legacy = cp3.embedded_v1()
        report["legacyChecksum"] = _verdict(legacy.checksum, legacy.legacy_checksum(), zero_accepted=True)
        if decode_error is None:
            content = cp3.checkpoint_data
    else:
        report["checksumField"] = "checksum"
        cp: Any = CheckpointV2() if fmt == "v2" else CheckpointV1()
        try:
            cp.unmarshal_checkpoint(blob)
            decode_error = None
            content = cp
        except gojson.GoJSONError as err:
            decode_error = str(err)
        if content is not None:
            if fmt == "v2":
                v2 = _verdict(cp.checksum, cp.computed_checksum(), zero_accepted=False)
                if v2["verdict"] != "valid":
                    # kubelet then reads the file as v1 (pod entries dropped); 0 is accepted there
                    v1 = CheckpointV1(cp.policy_name, cp.machine_state, cp.entries, cp.checksum)
                    as_v1 = _verdict(cp.checksum, v1.legacy_checksum(), zero_accepted=True)
                    if as_v1["verdict"] != "valid" and not as_v1["verdict"].startswith("not checked"):
                        as_v1 = v2
                    v2 = as_v1
                report["checksum"] = v2
            else:
                report["checksum"] = _verdict(cp.checksum, cp.legacy_checksum(), zero_accepted=True)
    report["decodeError"] = decode_error
    try:
        loaded = read_checkpoint(blob)
        report["loadedAs"] = loaded.format
        report["loadError"] = None
    except (CheckpointError, gojson.GoJSONError) as err:
        report["loadedAs"] = None
        report["loadError"] = str(err)
    if content is not None:
        report["policyName"] = content.policy_name
        report["machineState"] = machine_state_to_obj(content.machine_state)
        report["entries"] = assignments_to_obj(content.entries)
        report["podEntries"] = pod_assignments_to_obj(getattr(content, "pod_entries", None)) or {}
        report["nodes"], report["groups"] = _nodes(content.machine_state)
    return report


def _nodes(machine_state: Optional[dict]) -> tuple[list[dict], list[list[int]]]:
    """Per-node tables and the NUMA groups (cells) of a machine state."""
    nodes, groups = [], set()
    for node_id, node in sorted((machine_state or {}).items()):
        if node is None:
            nodes.append({"node": node_id, "state": None})
            continue
        cells = node.cells if node.cells is not None else None
        resources = {}
        for resource, table in sorted((node.memory_map or {}).items()):
            resources[resource] = None if table is None else {
                "total": table.total_mem_size, "systemReserved": table.system_reserved,
                "allocatable": table.allocatable, "reserved": table.reserved, "free": table.free,
            }
        derivation = allocatable_terms(node_id, {name: (t["total"], t["systemReserved"], t["allocatable"])
                                                 for name, t in resources.items() if t is not None})
        nodes.append({"node": node_id, "numberOfAssignments": node.number_of_assignments, "cells": cells,
                      "resources": resources,
                      "allocatableDerivation": [{"resource": d.resource, "total": d.total, "hugepages": d.hugepages,
                                                 "reserved": d.reserved, "allocatable": d.allocatable,
                                                 "addsUp": d.adds_up} for d in derivation]})
        groups.add(tuple(sorted(set(cells))) if cells else (node_id,))
    return nodes, [list(g) for g in sorted(groups)]


def _lines(path: str, r: dict[str, Any]) -> list[str]:
    """The human report."""
    lines = [f"checkpoint:  {path}", f"format:      {r['format']}"]
    if r.get("policyName") is not None:
        lines.append(f"policy:      {r['policyName']}")
    if "checksum" in r:
        lines.append(f"checksum:    {_verdict_text(r['checksum'], r['checksumField'])}")
    if "legacyChecksum" in r:
        lines.append(f"             v1 part for older kubelets: {_verdict_text(r['legacyChecksum'], 'checksum')}")
    if r["loadError"] is None:
        lines.append(f"kubelet:     loads it (as {r['loadedAs']}; the policy name is checked at start)")
    else:
        lines.append(f"kubelet:     refuses it: {r['loadError']}")
    if r.get("decodeError"):
        lines.append(f"content:     cannot be decoded: {r['decodeError']}")
    if "nodes" not in r:
        return lines
    for node in r["nodes"]:
        lines.append("")
        if node.get("state", True) is None:
            lines.append(f"NUMA node {node['node']}: null")
            continue
        cells = "null" if node["cells"] is None else "[" + ",".join(map(str, node["cells"])) + "]"
        lines.append(f"NUMA node {node['node']}   cells {cells}   assignments {node['numberOfAssignments']}")
        lines.append(f"  {'resource':<16}" + "".join(f"{title:>28}" for title, _ in RESOURCE_COLUMNS))
        for resource, table in node["resources"].items():
            if table is None:
                lines.append(f"  {resource:<16}  null")
                continue
            cols = "".join(f"{size_text(table[key]) + ' (' + str(table[key]) + ')':>28}" for _, key in RESOURCE_COLUMNS)
            lines.append(f"  {resource:<16}{cols}")
        lines.append(f"  {DERIVATION_HEAD}:")
        lines.extend(f"    {fmt_derivation(d['resource'], d['total'], d['hugepages'], d['reserved'], d['allocatable'], d['addsUp'])}"
                     for d in node["allocatableDerivation"])
    lines.append("")
    lines.append("NUMA groups: " + (" ".join("[" + ",".join(map(str, g)) + "]" for g in r["groups"]) or "none"))
    lines.append("")
    lines.append("assignments:" + ("" if r["entries"] else " none"))
    for pod, containers in (r["entries"] or {}).items():
        lines.append(f"  pod {pod}")
        for container, blocks in (containers or {}).items():
            lines.append(f"    {container}: {_blocks_text(blocks)}")
    if r["podEntries"]:
        lines.append("pod-level assignments:")
        for pod, entry in r["podEntries"].items():
            lines.append(f"  pod {pod}: {_blocks_text((entry or {}).get('memoryBlocks'))}")
    return lines


def _verdict_text(verdict: dict, field: str) -> str:
    """A verdict as one line."""
    if verdict["verdict"] == "valid":
        return f"valid ({field} {verdict['stored']})"
    return f"{verdict['verdict']} ({field})"


def _blocks_text(blocks: Optional[list]) -> str:
    """Blocks as `memory 1Gi (1073741824) on [0]; ...`."""
    if not blocks:
        return "no blocks"
    parts = []
    for b in blocks:
        affinity = b.get("numaAffinity")
        nodes = "null" if affinity is None else "[" + ",".join(map(str, affinity)) + "]"
        parts.append(f"{b.get('type')} {size_text(b.get('size', 0))} ({b.get('size', 0)}) on {nodes}")
    return "; ".join(parts)


class UnreadableCheckpoint(Error):
    """A checkpoint path that cannot be read at all (missing, a folder, not permitted, past a limit):
    the command's error (exit 2), as for every other path the command line cannot read."""


def inspect(path: str, as_json: bool, out: TextIO, kind: Optional[str] = None, limits: Limits = DEFAULT_LIMITS) -> int:
    """Show a checkpoint file (read within `limits`). Exit 0 when its content could be shown (whatever the
    checksum verdict), 1 when it is not decodable; a path that cannot be read raises UnreadableCheckpoint."""
    from memorymanager.cli import checkpoint_managers as managers

    blob, problem = _read(path, limits)
    if blob is None:
        raise UnreadableCheckpoint(problem)
    kind = kind or managers.checkpoint_kind(path, blob)
    if kind != managers.KIND_MEMORY:
        other = managers.analyse(kind, blob)
        if as_json:
            json.dump({"path": path, **other}, out, indent=2)
            out.write("\n")
        else:
            for line in managers.report_lines(kind, path, other):
                print(line, file=out)
        return 0 if managers.decodable(kind, other) else 1
    report = analyse(blob)
    if as_json:
        json.dump({"path": path, **report}, out, indent=2)
        out.write("\n")
    else:
        for line in _lines(path, report):
            print(line, file=out)
    return 0 if "nodes" in report else 1


def verify(path: str, policy_name: Optional[str], out: TextIO, kind: Optional[str] = None,
           machine_file: Optional[str] = None, devices_file: Optional[str] = None,
           limits: Limits = DEFAULT_LIMITS) -> int:
    """Exit 0 when kubelet v1.37 would load the file (read within `limits`; with `policy_name` configured,
    when given), else 1 with kubelet's reason. A missing file is exit 1 too. For a CPU checkpoint
    `machine_file` checks its CPUs; for a device checkpoint `devices_file` (with `machine_file` for
    the NUMA ids) checks that every entry fits the node's devices."""
    from memorymanager.cli import checkpoint_managers as managers

    machine = None if machine_file is None else load_machine_info(machine_file, limits)
    devices = None if devices_file is None else load_devices_file(
        devices_file, numa_nodes=None if machine is None else [n.node_id for n in machine.topology], limits=limits)
    blob, problem = _read(path, limits)
    if blob is None:
        print(f"FAIL: {problem}", file=out)
        return 1
    kind = kind or managers.checkpoint_kind(path, blob)
    if kind == managers.KIND_CPU:
        return managers.verify_cpu(path, blob, policy_name, machine, out)
    if kind == managers.KIND_DEVICE:
        return managers.verify_device(path, blob, devices, machine, out)
    kubelet_path = go_join(os.path.dirname(path) or ".", os.path.basename(path))
    try:
        loaded = read_checkpoint(blob)
        check_loadable(loaded, policy_name, kubelet_path)
    except (CheckpointError, gojson.GoJSONError) as err:
        print(f"FAIL: {restore_error(kubelet_path, err)}", file=out)
        return 1
    except StateError as err:
        print(f"FAIL: {err}", file=out)
        return 1
    containers = sum(len(c or {}) for c in (loaded.entries or {}).values())
    policy = f'policy "{loaded.policy_name}"' + ("" if policy_name is not None else " (not compared: no --policy)")
    print(
        f"OK: kubelet would load {path}: format {loaded.format}, {policy}, "
        f"{len(loaded.machine_state or {})} NUMA node(s), {containers} container assignment(s)",
        file=out,
    )
    return 0
