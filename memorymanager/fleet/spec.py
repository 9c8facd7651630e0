"""The fleet file: node groups, the pod trace, the placement rule and the sweep.

    name: demo                      # optional, shown in the report
    nodes:
    - name: small                   # node names are small-0, small-1, ...
      count: 3
      machine: ../machines/two-nodes.json     # a cadvisor MachineInfo file, relative to this file, or
      # machine: {numaNodes: 2, memoryPerNode: 16Gi, hugepages2Mi: 0, hugepages1Gi: 0, coresPerNode: 8}
      kubelet: {memoryManagerPolicy: Static, cpuManagerPolicy: static, ...}   # KubeletConfiguration fields, or a file
      devices: {nvidia.com/gpu: [{id: gpu0, numaNodes: [0]}]}   # device plugins' devices (optional), or a file
    trace: trace.jsonl              # JSON Lines, see memorymanager.fleet.trace
    templates: {db: {...v1 Pod...}} # optional, for trace events that name a template
    placement: first-fit            # first-fit | least-allocated | numa-aware
    onRefusal: retry                # retry on the next candidate node | fail (counted as refused)
    sweep:                          # optional: the same trace under kubelet variants
    - name: restricted
      kubelet: {topologyManagerPolicy: restricted}   # fields changed on every group

Every problem is an InputError naming the file and the path inside it. The spec is a plain
dataclass tree of dicts and strings, so it pickles to worker processes and Dask workers.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Mapping

from kubeinputs.devices import devices_to_obj, load_devices_file, parse_devices
from kubeinputs.errors import InputError, check_keys, expect_int, expect_list, expect_map, expect_str, index_path, join_path
from kubeinputs.machine import machine_info_to_obj
from kubeinputs.quantity import QuantityError, parse_quantity
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.reader import load_file
from kubeinputs.synthetic_machine import synthetic_machine

PLACEMENTS = ("first-fit", "least-allocated", "numa-aware")
ON_REFUSAL = ("retry", "fail")
FLEET_KEYS = ("name", "nodes", "trace", "templates", "placement", "onRefusal", "sweep")
GROUP_KEYS = ("name", "count", "machine", "kubelet", "devices")
SYNTHETIC_KEYS = ("numaNodes", "memoryPerNode", "hugepages2Mi", "hugepages1Gi", "coresPerNode", "threadsPerCore")
VARIANT_KEYS = ("name", "kubelet")
MAX_NODES = 100_000


@dataclass(frozen=True)
class NodeGroup:
    """`count` identical nodes: a cadvisor MachineInfo (as a dict), KubeletConfiguration fields and the
    devices their device plugins report (the `devices` declaration, checked against the machine)."""

    name: str
    count: int
    machine: Mapping[str, object]
    kubelet: Mapping[str, object]
    devices: Mapping[str, object] = field(default_factory=dict)

    def node_names(self) -> list[str]:
        return [f"{self.name}-{i}" for i in range(self.count)]


@dataclass(frozen=True)
class Variant:
    """One sweep entry: KubeletConfiguration fields laid over every group's configuration."""

    name: str
    kubelet: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class FleetSpec:
    """A parsed fleet file; `trace` is the trace file's absolute path."""

    name: str
    groups: tuple[NodeGroup, ...]
    trace: str
    templates: Mapping[str, Mapping[str, object]]
    placement: str
    on_refusal: str
    variants: tuple[Variant, ...]
    path: str = ""
    limits: Limits = DEFAULT_LIMITS  # the readers' work limits (the trace's, the workers' too)

    def node_names(self) -> list[str]:
        """Every node, in fleet order (groups in file order, then index)."""
        return [name for group in self.groups for name in group.node_names()]

    def group_of(self) -> dict[str, NodeGroup]:
        """Node name -> its group."""
        return {name: group for group in self.groups for name in group.node_names()}


def _relative(base: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(os.path.dirname(base), path))


def read_document(path: str, limits: Limits = DEFAULT_LIMITS) -> object:
    """A YAML/JSON file's document; a read or syntax error names the file."""
    try:
        return load_file(path, limits)
    except InputError as exc:
        raise InputError(path, exc.reason) from None


def _check_file(path: str, where: str) -> None:
    """A regular file is at `path` (a folder, FIFO or device is not read)."""
    if not os.path.isfile(path):
        what = "not a regular file, not read" if os.path.lexists(path) else "no such file"
        raise InputError(where, f"{what}: {path}")


def _load_map_file(path: str, where: str, limits: Limits) -> dict:
    _check_file(path, where)
    doc = read_document(path, limits)
    if not isinstance(doc, dict):
        raise InputError(path, "expected a map")
    return doc


def _bytes(value: object, where: str, limits: Limits) -> int:
    if isinstance(value, bool):
        raise InputError(where, "expected a byte quantity such as 16Gi")
    try:
        return parse_quantity(value, limits.max_number_digits).value_bytes()  # type: ignore[arg-type]
    except (QuantityError, TypeError, ValueError) as exc:
        raise InputError(where, f"expected a byte quantity such as 16Gi: {exc}") from None


def _machine(value: object, base: str, where: str, limits: Limits) -> dict:
    """A machine file path, or a synthetic machine's fields; the result is a MachineInfo dict."""
    if isinstance(value, str):
        return _load_map_file(_relative(base, value), where, limits)
    doc = expect_map(value, where, "a machine file path or {numaNodes, memoryPerNode, ...}")
    check_keys(doc, where, SYNTHETIC_KEYS)
    if "numaNodes" not in doc or "memoryPerNode" not in doc:
        raise InputError(where, "a synthetic machine needs numaNodes and memoryPerNode")
    machine = synthetic_machine(
        expect_int(doc["numaNodes"], join_path(where, "numaNodes"), minimum=1, maximum=64),
        _bytes(doc["memoryPerNode"], join_path(where, "memoryPerNode"), limits),
        hugepages_2mi=expect_int(doc.get("hugepages2Mi", 0), join_path(where, "hugepages2Mi"), minimum=0),
        hugepages_1gi=expect_int(doc.get("hugepages1Gi", 0), join_path(where, "hugepages1Gi"), minimum=0),
        cores_per_node=expect_int(doc.get("coresPerNode", 8), join_path(where, "coresPerNode"), minimum=1),
        threads_per_core=expect_int(doc.get("threadsPerCore", 0), join_path(where, "threadsPerCore"), minimum=0,
                                    maximum=8),
    )
    return machine_info_to_obj(machine)


def _kubelet(value: object, base: str, where: str, limits: Limits) -> dict:
    if value is None:
        return {}
    if isinstance(value, str):
        return _load_map_file(_relative(base, value), where, limits)
    return dict(expect_map(value, where, "KubeletConfiguration fields or a file path"))


def _devices(value: object, base: str, group_where: str, group: str, machine: Mapping[str, object],
             limits: Limits) -> dict:
    """A group's `devices`: the declaration map, or a file holding it (relative to the fleet file), checked
    against the group's machine (ids once per resource, NUMA nodes it has); the declaration's shape back.
    An error names the group and the path of the bad value."""
    from memorymanager.node.api import read_machine

    if value is None:
        return {}
    where = join_path(group_where, "devices")
    try:
        numa_nodes = [n.node_id for n in read_machine(dict(machine), limits).topology]
    except InputError as exc:
        raise InputError(join_path(group_where, "machine"), str(exc)) from None
    try:
        if isinstance(value, str):
            file = _relative(base, value)
            _check_file(file, where)
            devices = load_devices_file(file, numa_nodes=numa_nodes, limits=limits)
        else:
            devices = parse_devices(value, where, numa_nodes=numa_nodes)
    except InputError as exc:
        raise InputError(exc.where, f"group {group!r}: {exc.reason}", exc.file) from None
    return devices_to_obj(devices)


def _check_group(group: NodeGroup, where: str, limits: Limits) -> None:
    """Fail early, naming the group, when kubelet cannot read its machine or configuration or
    refuses to start with them."""
    from memorymanager.node.api import Node, read_kubelet, read_machine
    from memorymanager.node.simulated_node import KubeletStartError

    try:
        machine = read_machine(dict(group.machine), limits)
    except InputError as exc:
        raise InputError(join_path(where, "machine"), str(exc)) from None
    try:
        kubelet = read_kubelet(dict(group.kubelet), limits)
    except InputError as exc:
        raise InputError(join_path(where, "kubelet"), str(exc)) from None
    try:
        Node(machine, kubelet, limits=limits, devices=dict(group.devices)).start()
    except KubeletStartError as exc:
        raise InputError(where, f"kubelet does not start on group {group.name!r}: {exc}") from None


def parse_fleet(doc: object, path: str, limits: Limits = DEFAULT_LIMITS) -> FleetSpec:
    """A fleet document read from `path` (paths inside are relative to it; every reader keeps `limits`)."""
    raw = expect_map(doc, path, "a fleet map (nodes, trace, placement, ...)")
    check_keys(raw, path, FLEET_KEYS)
    name = expect_str(raw.get("name", os.path.splitext(os.path.basename(path))[0]), join_path(path, "name"))
    groups: list[NodeGroup] = []
    seen: set[str] = set()
    nodes_where = join_path(path, "nodes")
    if raw.get("nodes") is None:
        raise InputError(nodes_where, "Required value: a list of node groups")
    for i, item in enumerate(expect_list(raw["nodes"], nodes_where)):
        where = index_path(nodes_where, i)
        entry = expect_map(item, where)
        check_keys(entry, where, GROUP_KEYS)
        for key in ("name", "count", "machine"):
            if key not in entry:
                raise InputError(join_path(where, key), "Required value")
        gname = expect_str(entry["name"], join_path(where, "name"))
        if not gname or "/" in gname:
            raise InputError(join_path(where, "name"), "expected a non-empty name without '/'")
        if gname in seen:
            raise InputError(join_path(where, "name"), f"duplicate group name {gname!r}")
        seen.add(gname)
        count = expect_int(entry["count"], join_path(where, "count"), minimum=1, maximum=MAX_NODES)
        machine = _machine(entry["machine"], path, join_path(where, "machine"), limits)
        group = NodeGroup(gname, count, machine, _kubelet(entry.get("kubelet"), path, join_path(where, "kubelet"), limits),
                          _devices(entry.get("devices"), path, where, gname, machine, limits))
        _check_group(group, where, limits)
        groups.append(group)
    if not groups:
        raise InputError(nodes_where, "expected at least one node group")
    if sum(g.count for g in groups) > MAX_NODES:
        raise InputError(nodes_where, f"more than {MAX_NODES} nodes")
    if "trace" not in raw:
        raise InputError(join_path(path, "trace"), "Required value: a JSON Lines file")
    trace = _relative(path, expect_str(raw["trace"], join_path(path, "trace")))
    _check_file(trace, join_path(path, "trace"))
    templates_where = join_path(path, "templates")
    templates = {str(k): dict(expect_map(v, join_path(templates_where, str(k)), "a v1 Pod manifest"))
                 for k, v in expect_map(raw.get("templates"), templates_where).items()}
    placement = raw.get("placement", "first-fit")
    if placement not in PLACEMENTS:
        raise InputError(join_path(path, "placement"), f"unknown rule {placement!r}; expected one of: {', '.join(PLACEMENTS)}")
    on_refusal = raw.get("onRefusal", "retry")
    if on_refusal not in ON_REFUSAL:
        raise InputError(join_path(path, "onRefusal"), f"unknown value {on_refusal!r}; expected one of: {', '.join(ON_REFUSAL)}")
    variants = _variants(raw.get("sweep"), groups, join_path(path, "sweep"), limits)
    return FleetSpec(name, tuple(groups), trace, templates, str(placement), str(on_refusal), variants, path, limits)


def _variants(value: object, groups: list[NodeGroup], where: str, limits: Limits) -> tuple[Variant, ...]:
    """The sweep; without one, a single variant `base` (the groups as written)."""
    if value is None:
        return (Variant("base"),)
    items = expect_list(value, where)
    if not items:
        raise InputError(where, "expected at least one variant")
    variants: list[Variant] = []
    for i, item in enumerate(items):
        vwhere = index_path(where, i)
        entry = expect_map(item, vwhere)
        check_keys(entry, vwhere, VARIANT_KEYS)
        if "name" not in entry:
            raise InputError(join_path(vwhere, "name"), "Required value")
        vname = expect_str(entry["name"], join_path(vwhere, "name"))
        if any(v.name == vname for v in variants):
            raise InputError(join_path(vwhere, "name"), f"duplicate variant name {vname!r}")
        overrides = dict(expect_map(entry.get("kubelet"), join_path(vwhere, "kubelet")))
        variant = Variant(vname, overrides)
        for group in groups:
            _check_group(NodeGroup(group.name, 1, group.machine, variant_kubelet(group, variant), group.devices),
                         vwhere, limits)
        variants.append(variant)
    return tuple(variants)


def variant_kubelet(group: NodeGroup, variant: Variant) -> dict:
    """The group's configuration fields with the variant's laid over them."""
    fields = copy.deepcopy(dict(group.kubelet))
    fields.update(copy.deepcopy(dict(variant.kubelet)))
    return fields


def load_fleet(path: str, limits: Limits = DEFAULT_LIMITS) -> FleetSpec:
    """Read and check a fleet file within `limits` (kept in the spec for the trace and the workers)."""
    if not os.path.isfile(path):
        raise InputError(path, "no such file")
    return parse_fleet(read_document(path, limits), os.path.abspath(path), limits)
