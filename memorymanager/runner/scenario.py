"""Scenario files parsed into dataclasses (the contract: docs/scenario-format.md).

`load_scenario(path)` checks the whole document's shape before anything runs, so a
scenario either runs completely or is reported invalid with `file: path: reason`.
Paths given for `machine`, `kubelet` and pods are resolved relative to the scenario file.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from kubeinputs.errors import (InputError, check_keys, expect_bool, expect_int_list, expect_list, expect_map,
                               expect_str, index_path, join_path, suggest, type_name)
from kubeinputs.devices import DeclaredDevices, parse_devices
from kubeinputs.kubelet_config import KubeletConfig, load_kubelet_config_file, parse_kubelet_config
from kubeinputs.machine import MachineInfo, load_machine_info, parse_machine_info
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.pod import Pod, load_pod_file, parse_pod
from kubeinputs.reader import load_file
from memorymanager.runner.expect import validate_expect
from memorymanager.runner.schema import (HINT_KEYS, MAX_NUMA_BIT, OPERATIONS, PROVIDERS_KEYS, REMOVE_KEYS,
                                         REQUIRED_TOP_LEVEL_KEYS, RESTART_KEYS, STEP_KEYS, TOP_LEVEL_KEYS)


class ScenarioError(InputError):
    """The InputError of a scenario file that is not valid: str() is `file: path: reason`."""


@dataclass(frozen=True)
class HintSpec:
    """An injected hint: NUMA ids (None = any node) and the preferred flag."""

    nodes: Optional[tuple[int, ...]]
    preferred: bool


# The shape of `providers` in each scope (docs/scenario-format.md).
PROVIDER_SHAPES = {"containers": "{CONTAINER: {RESOURCE: [HINT, ...]}}", "pod": "{RESOURCE: [HINT, ...]}"}

# resource -> hints (None = "no preference" nil list); the whole map None = nil map.
ProviderHintsSpec = Optional[dict[str, Optional[list[HintSpec]]]]


@dataclass
class InjectedHints:
    """A step's `providers`: hints of one extra provider, per container and for the pod."""

    containers: dict[str, ProviderHintsSpec] = field(default_factory=dict)
    pod: ProviderHintsSpec = None


@dataclass
class Step:
    """One operation with its expectations. `where` is its path (`steps[3]`)."""

    index: int
    op: str
    where: str
    expect: dict[str, Any]
    pod: Optional[Pod] = None  # admit, hints
    pod_ref: Optional[str] = None  # remove: UID or name
    namespace: Optional[str] = None  # remove: the pod's namespace (None: by UID, else the one pod of that name)
    container: Optional[str] = None  # remove: one container
    kubelet: Optional[KubeletConfig] = None  # restart: the configuration after the override
    providers: Optional[InjectedHints] = None  # admit


@dataclass
class Scenario:
    """A parsed scenario file; `document` is the loaded YAML, kept for `--record`."""

    path: str
    name: str
    description: str
    machine: MachineInfo
    kubelet: KubeletConfig
    checkpoint: Optional[str]
    steps: list[Step]
    document: dict
    cpu_checkpoint: Optional[str] = None  # cpu_manager_state (1.2)
    device_checkpoint: Optional[str] = None  # device-plugins/kubelet_internal_checkpoint (1.2)
    devices: DeclaredDevices = field(default_factory=dict)  # the device plugins (1.2)


def load_scenario(path: str, limits: Limits = DEFAULT_LIMITS) -> Scenario:
    """Read and check a scenario file (and the files it names) within `limits`; raises ScenarioError
    naming file, path and reason."""
    try:
        doc = load_file(path, limits)
        return parse_scenario(doc, base_dir=os.path.dirname(os.path.abspath(path)), path=path, limits=limits)
    except InputError as exc:
        raise ScenarioError(exc.where or "(document)", exc.reason, exc.file or path) from None


def parse_scenario(doc: Any, base_dir: str, path: str = "<scenario>", limits: Limits = DEFAULT_LIMITS) -> Scenario:
    """Check a loaded scenario document; raises InputError with the path of the bad value."""
    doc = expect_map(doc, "(document)", "a map with name, machine, kubelet and steps", null_is_empty=False)
    check_keys(doc, "", TOP_LEVEL_KEYS, required=REQUIRED_TOP_LEVEL_KEYS)
    name = expect_str(doc.get("name", os.path.splitext(os.path.basename(path))[0]), "name")
    description = expect_str(doc.get("description", ""), "description")
    machine = _parse_machine(doc["machine"], base_dir, limits)
    kubelet = _parse_kubelet(doc.get("kubelet"), base_dir, limits)
    checkpoint = _parse_checkpoint(doc.get("checkpoint"))
    cpu_checkpoint = _parse_checkpoint(doc.get("cpuCheckpoint"), "cpuCheckpoint")
    device_checkpoint = _parse_checkpoint(doc.get("deviceCheckpoint"), "deviceCheckpoint")
    devices = parse_devices(doc.get("devices"), "devices", numa_nodes=[n.node_id for n in machine.topology])
    raw_steps = expect_list(doc["steps"], "steps", null_is_empty=False)
    if not raw_steps:
        raise InputError("steps", "expected at least one step")
    steps = []
    config = kubelet
    for i, raw in enumerate(raw_steps):
        step = _parse_step(raw, i, base_dir, config, limits)
        if step.kubelet is not None:
            config = step.kubelet
        steps.append(step)
    return Scenario(path, name, description, machine, kubelet, checkpoint, steps, doc, cpu_checkpoint,
                    device_checkpoint, devices)


def _resolve(base_dir: str, value: str) -> str:
    """`value` relative to the scenario's folder (absolute paths stay as they are)."""
    return value if os.path.isabs(value) else os.path.join(base_dir, value)


def _load_referenced(where: str, loader, file: str):
    """Run `loader(file)`, reporting any problem of the referenced file at `where`."""
    if not os.path.isfile(file):
        raise InputError(where, f"no such file: {file}")
    try:
        return loader(file)
    except (OSError, ValueError) as exc:  # InputError is a ValueError
        text = str(exc)
        raise InputError(where, text if file in text else f"{file}: {text}") from None


def _parse_machine(value: Any, base_dir: str, limits: Limits) -> MachineInfo:
    """`machine`: inline cadvisor MachineInfo or a path to one."""
    if isinstance(value, str):
        return _load_referenced("machine", lambda file: load_machine_info(file, limits), _resolve(base_dir, value))
    expect_map(value, "machine", "a cadvisor MachineInfo map or a path string", null_is_empty=False)
    return parse_machine_info(value, "machine")


def _parse_kubelet(value: Any, base_dir: str, limits: Limits) -> KubeletConfig:
    """`kubelet`: inline fields, a path to a KubeletConfiguration file, or kubelet's defaults."""
    if value is None:
        return parse_kubelet_config({}, "kubelet")
    if isinstance(value, str):
        return _load_referenced("kubelet", lambda file: load_kubelet_config_file(file, limits=limits),
                                _resolve(base_dir, value))
    expect_map(value, "kubelet", "a map of KubeletConfiguration fields or a path string", null_is_empty=False)
    return parse_kubelet_config(value, "kubelet", limits=limits)


def _parse_checkpoint(value: Any, where: str = "checkpoint") -> Optional[str]:
    """A checkpoint file's bytes as text (`checkpoint`, `cpuCheckpoint`, `deviceCheckpoint`): a map becomes
    compact JSON, a string is kept as is."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InputError(where, f"cannot be written as JSON: {exc}") from None
    raise InputError(where, f"expected a map or a string, got {type_name(value)}")


def _parse_pod(value: Any, where: str, base_dir: str, limits: Limits) -> Pod:
    """A POD: inline v1 Pod manifest or a path to one."""
    if isinstance(value, str):
        return _load_referenced(where, lambda file: load_pod_file(file, limits=limits), _resolve(base_dir, value))
    expect_map(value, where, "a v1 Pod manifest or a path string", null_is_empty=False)
    return parse_pod(value, where, limits=limits)


def _parse_step(raw: Any, i: int, base_dir: str, config: KubeletConfig, limits: Limits) -> Step:
    """One step: exactly one operation, its body, `providers` (admit only) and `expect`."""
    where = index_path("steps", i)
    raw = expect_map(raw, where, "a map with one operation", null_is_empty=False)
    check_keys(raw, where, STEP_KEYS)
    ops = [k for k in raw if k in OPERATIONS]
    if not ops:
        raise InputError(where, "no operation; expected exactly one of " + ", ".join(OPERATIONS))
    if len(ops) > 1:
        raise InputError(where, f"more than one operation ({', '.join(ops)}); a step has exactly one")
    op = ops[0]
    if "providers" in raw and op != "admit":
        raise InputError(join_path(where, "providers"), 'only allowed beside "admit"')
    expect = validate_expect(raw.get("expect"), op, join_path(where, "expect"))
    step = Step(index=i, op=op, where=where, expect=expect)
    body = raw[op]
    body_where = join_path(where, op)
    if op in ("admit", "hints"):
        step.pod = _parse_pod(body, body_where, base_dir, limits)
    elif op == "remove":
        body = expect_map(body, body_where, "a map {pod, namespace, container}", null_is_empty=False)
        check_keys(body, body_where, REMOVE_KEYS, required=("pod",))
        step.pod_ref = expect_str(body["pod"], join_path(body_where, "pod"))
        if body.get("namespace") is not None:
            step.namespace = expect_str(body["namespace"], join_path(body_where, "namespace"))
        if body.get("container") is not None:
            step.container = expect_str(body["container"], join_path(body_where, "container"))
    elif op == "restart":
        body = {} if body is None else expect_map(body, body_where, null_is_empty=False)
        check_keys(body, body_where, RESTART_KEYS)
        if body.get("kubelet") is not None:
            kwhere = join_path(body_where, "kubelet")
            override = expect_map(body["kubelet"], kwhere, "a map of KubeletConfiguration fields", null_is_empty=False)
            step.kubelet = parse_kubelet_config(override, kwhere, base=config, limits=limits)
    else:  # start, check
        body = {} if body is None else expect_map(body, body_where, null_is_empty=False)
        check_keys(body, body_where, ())
    if "providers" in raw:
        step.providers = _parse_providers(raw["providers"], join_path(where, "providers"), step.pod,
                                          config.topology_manager_scope)
    return step


def _parse_providers(value: Any, where: str, pod: Pod, scope: str) -> InjectedHints:
    """`providers: {containers: {NAME: HINTS}, pod: HINTS}`; container names must be the pod's, and
    only the shape of the node's topologyManagerScope (as of this step) is taken."""
    value = expect_map(value, where, null_is_empty=False)
    check_keys(value, where, PROVIDERS_KEYS)
    other = {"container": "pod", "pod": "containers"}.get(scope)
    if other is not None and other in value:
        own = "pod" if scope == "pod" else "containers"
        raise InputError(join_path(where, other), f"the node's topologyManagerScope is {scope!r}: its hints are "
                                                  f"written under {own!r} ({PROVIDER_SHAPES[own]}), not {other!r}")
    injected = InjectedHints()
    if value.get("containers") is not None:
        cwhere = join_path(where, "containers")
        containers = expect_map(value["containers"], cwhere, null_is_empty=False)
        names = [c.name for c in pod.all_containers()]
        for name, hints in containers.items():
            if name not in names:
                guess = suggest(name, names)
                hint = f'; did you mean "{guess}"?' if guess else ""
                raise InputError(join_path(cwhere, name), f"the pod has no container of this name{hint}")
            injected.containers[name] = _parse_hint_map(hints, join_path(cwhere, name))
    if "pod" in value:
        injected.pod = _parse_hint_map(value["pod"], join_path(where, "pod"))
    return injected


def _parse_hint_map(value: Any, where: str) -> ProviderHintsSpec:
    """`{RESOURCE: [HINT, ...] | null}` or null (a nil map)."""
    if value is None:
        return None
    value = expect_map(value, where, "a map of resource name to hints", null_is_empty=False)
    result: dict[str, Optional[list[HintSpec]]] = {}
    for resource, hints in value.items():
        rwhere = join_path(where, resource)
        if hints is None:
            result[resource] = None
            continue
        items = expect_list(hints, rwhere, null_is_empty=False)
        result[resource] = [parse_hint(h, index_path(rwhere, j)) for j, h in enumerate(items)]
    return result


def parse_hint(value: Any, where: str) -> HintSpec:
    """`{numaAffinity: [ids] | null, preferred: bool}`; ids must be NUMA bit numbers 0-63."""
    value = expect_map(value, where, "a hint {numaAffinity, preferred}", null_is_empty=False)
    check_keys(value, where, HINT_KEYS, required=HINT_KEYS)
    preferred = expect_bool(value["preferred"], join_path(where, "preferred"))
    nodes = value["numaAffinity"]
    if nodes is None:
        return HintSpec(None, preferred)
    awhere = join_path(where, "numaAffinity")
    ids = expect_int_list(nodes, awhere, null_is_empty=False)
    for j, bit in enumerate(ids):
        if not 0 <= bit <= MAX_NUMA_BIT:
            raise InputError(index_path(awhere, j), "bit number must be in range 0-63")
    return HintSpec(tuple(ids), preferred)
