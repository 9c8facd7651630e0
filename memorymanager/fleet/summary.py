"""summary.json: the task results of a run folded into one document (schema in docs/fleet.md).

Everything in it is a sum or a minimum over nodes and pods, folded in fleet order, so it is
the same whichever engine ran the tasks, on however many workers, in whatever chunks.
"""
from __future__ import annotations

import json
from typing import Mapping, Sequence

from memorymanager.fleet.simulate import CPU_FIELDS, DEVICE_FIELDS, NodeResult, TaskResult
from memorymanager.fleet.spec import FleetSpec

SCHEMA = "memorymanager.fleet/v1"
JSONValue = object


def _add_refusals(into: dict[str, dict[str, int]], more: Mapping[str, Mapping[str, int]]) -> None:
    for reason, messages in more.items():
        target = into.setdefault(reason, {})
        for message, count in messages.items():
            target[message] = target.get(message, 0) + count


def _sorted_refusals(refusals: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    return {reason: dict(sorted(messages.items())) for reason, messages in sorted(refusals.items())}


def _stranded(free: int, smallest_need: int) -> int:
    """A NUMA node's free amount when it is below the smallest need of a pod that did not run, else 0."""
    return free if smallest_need and free < smallest_need else 0


def _numa_table(nodes: Sequence[NodeResult], smallest_need: int, smallest_cpu_need: int = 0) -> list[dict[str, object]]:
    """Per NUMA node id, per resource: allocatable, used and free amounts summed over the nodes;
    for memory and cpu also `stranded`: free bytes (CPUs) on NUMA nodes too few for the smallest
    memory (exclusive CPU) need of a pod that did not run."""
    table: dict[int, dict[str, dict[str, int]]] = {}
    for node in nodes:
        for numa, resources in node.numa.items():
            row = table.setdefault(numa, {})
            for resource, (allocatable, free) in resources.items():
                cell = row.setdefault(resource, {"allocatable": 0, "used": 0, "free": 0})
                cell["allocatable"] += allocatable
                cell["used"] += allocatable - free
                cell["free"] += free
                if resource == "memory":
                    cell["stranded"] = cell.get("stranded", 0) + _stranded(free, smallest_need)
                elif resource == "cpu":
                    cell["stranded"] = cell.get("stranded", 0) + _stranded(free, smallest_cpu_need)
    out = []
    for numa in sorted(table):
        entry: dict[str, object] = {"numaNode": numa}
        for resource in sorted(table[numa]):
            cell = table[numa][resource]
            if resource in ("memory", "cpu"):
                cell.setdefault("stranded", 0)
            entry[resource] = cell
        out.append(entry)
    return out


def _cpu_totals(nodes: Sequence[NodeResult]) -> dict[str, int]:
    """The nodes' CPU counts summed, by `CPU_FIELDS`."""
    return {name: sum(n.cpus.get(name, 0) for n in nodes) for name in CPU_FIELDS}


def _device_totals(nodes: Sequence[NodeResult]) -> dict[str, dict[str, int]]:
    """Per device resource, the nodes' device counts summed, by `DEVICE_FIELDS`."""
    table: dict[str, dict[str, int]] = {}
    for node in nodes:
        for resource, counts in node.devices.items():
            cell = table.setdefault(resource, {name: 0 for name in DEVICE_FIELDS})
            for name in DEVICE_FIELDS:
                cell[name] += counts.get(name, 0)
    return {resource: table[resource] for resource in sorted(table)}


def build_summary(spec: FleetSpec, results: Sequence[TaskResult], *, events: int, bound: bool) -> dict[str, JSONValue]:
    """The summary document; `results` in any order (they are regrouped by variant and node)."""
    order = {name: i for i, name in enumerate(spec.node_names())}
    variants = []
    for variant in spec.variants:
        mine = [r for r in results if r.variant == variant.name]
        nodes = sorted((n for r in mine for n in r.nodes), key=lambda n: order[n.name])
        needs = [need for r in mine for need in r.refused_needs if need > 0]
        smallest = min(needs) if needs else 0
        cpu_needs = [need for r in mine for need in r.refused_cpu_needs if need > 0]
        smallest_cpus = min(cpu_needs) if cpu_needs else 0
        refusals: dict[str, dict[str, int]] = {}
        groups = []
        for group in spec.groups:
            members = [n for n in nodes if n.group == group.name]
            group_refusals: dict[str, dict[str, int]] = {}
            for n in members:
                _add_refusals(group_refusals, n.refusals)
            _add_refusals(refusals, group_refusals)
            entry: dict[str, object] = {
                "name": group.name,
                "nodes": len(members),
                "admitted": sum(n.admitted for n in members),
                "deleted": sum(n.deleted for n in members),
                "refusals": _sorted_refusals(group_refusals),
                "disagreements": sum(n.disagreements for n in members),
            }
            if spec.placement == "numa-aware":
                entry["filterFitKubeletRefused"] = sum(n.filter_fit_kubelet_refused for n in members)
                entry["filterRefusedKubeletAdmitted"] = sum(n.filter_refused_kubelet_admitted for n in members)
            entry["cpus"] = _cpu_totals(members)
            entry["devices"] = _device_totals(members)
            entry["numa"] = _numa_table(members, smallest, smallest_cpus)
            groups.append(entry)
        pods = {
            "added": sum(r.pods_added for r in mine),
            "admitted": sum(g["admitted"] for g in groups),  # type: ignore[misc]
            "failed": sum(r.pods_failed for r in mine),
            "unschedulable": sum(r.unschedulable for r in mine),
            "deleted": sum(g["deleted"] for g in groups),  # type: ignore[misc]
        }
        totals: dict[str, object] = {
            "name": variant.name,
            "kubelet": dict(variant.kubelet),
            "pods": pods,
            "refusals": _sorted_refusals(refusals),
            "disagreements": sum(g["disagreements"] for g in groups),  # type: ignore[misc]
        }
        if spec.placement == "numa-aware":
            totals["filterFitKubeletRefused"] = sum(g["filterFitKubeletRefused"] for g in groups)  # type: ignore[misc]
            totals["filterRefusedKubeletAdmitted"] = sum(g["filterRefusedKubeletAdmitted"] for g in groups)  # type: ignore[misc]
        totals["smallestUnplacedMemoryNeed"] = smallest
        totals["smallestUnplacedCPUNeed"] = smallest_cpus
        totals["groups"] = groups
        variants.append(totals)
    return {
        "schema": SCHEMA,
        "fleet": spec.name,
        "placement": spec.placement,
        "onRefusal": spec.on_refusal,
        "trace": {"events": events, "bound": bound},
        "groups": [{"name": g.name, "count": g.count,
                    "numaNodes": len(g.machine.get("topology") or [])}  # type: ignore[arg-type]
                   for g in spec.groups],
        "variants": variants,
    }


def dumps(summary: Mapping[str, JSONValue]) -> str:
    """summary.json's text (stable: two-space indent, keys in schema order, a final newline)."""
    return json.dumps(summary, indent=2) + "\n"
