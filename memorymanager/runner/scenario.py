"""Scenario files parsed into dataclasses (the contract: shared/scenario-format.md).

`load_scenario(path)` checks the whole document's shape before anything runs, so a
scenario either runs completely or is reported invalid with `file: path: reason`.
Paths given for `machine`, `kubelet` and pods are resolved relative to the scenario file.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import KubeletConfig, load_kubelet_config_file, parse_kubelet_config
from kubeinputs.machine import MachineInfo, load_machine_info, parse_machine_info
from kubeinputs.pod import Pod, load_pod_file, parse_pod
from memorymanager.runner import schema
from memorymanager.runner.expect import validate_expect
from kubeinputs.reader import load_file

TOP_LEVEL_KEYS = ("name", "description", "machine", "kubelet", "checkpoint", "steps")
OPERATIONS = ("start", "admit", "hints", "remove", "restart", "check")
STEP_KEYS = OPERATIONS + ("providers", "expect")
MAX_NUMA_BIT = 63


class ScenarioError(InputError):
    """A scenario file that is not valid: str() is `file: path: reason`."""

    def __init__(self, file: str, error: InputError):
        super().__init__(error.where, error.reason)
        self.file = file

    def __str__(self) -> str:
        return f"{self.file}: {self.where}: {self.reason}"


@dataclass(frozen=True)
class HintSpec:
    """An injected hint: NUMA ids (None = any node) and the preferred flag."""

    nodes: Optional[tuple[int, ...]]
    preferred: bool


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


def load_scenario(path: str) -> Scenario:
    """Read and check a scenario file; raises ScenarioError naming file, path and reason."""
    try:
        doc = load_file(path)
        return parse_scenario(doc, base_dir=os.path.dirname(os.path.abspath(path)), path=path)
    except InputError as exc:
        raise ScenarioError(path, exc) from None


def parse_scenario(doc: Any, base_dir: str, path: str = "<scenario>") -> Scenario:
    """Check a loaded scenario document; raises InputError with the path of the bad value."""
    doc = schema.expect_map(doc, "(document)", "a map with name, machine, kubelet and steps")
    schema.check_keys(doc, "", TOP_LEVEL_KEYS, required=("machine", "steps"))
    name = schema.expect_str(doc.get("name", os.path.splitext(os.path.basename(path))[0]), "name")
    description = schema.expect_str(doc.get("description", ""), "description")
    machine = _parse_machine(doc["machine"], base_dir)
    kubelet = _parse_kubelet(doc.get("kubelet"), base_dir)
    checkpoint = _parse_checkpoint(doc.get("checkpoint"))
    raw_steps = schema.expect_list(doc["steps"], "steps")
    if not raw_steps:
        raise InputError("steps", "expected at least one step")
    steps = []
    config = kubelet
    for i, raw in enumerate(raw_steps):
        step = _parse_step(raw, i, base_dir, config)
        if step.kubelet is not None:
            config = step.kubelet
        steps.append(step)
    return Scenario(path, name, description, machine, kubelet, checkpoint, steps, doc)


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


def _parse_machine(value: Any, base_dir: str) -> MachineInfo:
    """`machine`: inline cadvisor MachineInfo or a path to one."""
    if isinstance(value, str):
        return _load_referenced("machine", load_machine_info, _resolve(base_dir, value))
    schema.expect_map(value, "machine", "a cadvisor MachineInfo map or a path string")
    return parse_machine_info(value, "machine")


def _parse_kubelet(value: Any, base_dir: str) -> KubeletConfig:
    """`kubelet`: inline fields, a path to a KubeletConfiguration file, or kubelet's defaults."""
    if value is None:
        return parse_kubelet_config({}, "kubelet")
    if isinstance(value, str):
        return _load_referenced("kubelet", load_kubelet_config_file, _resolve(base_dir, value))
    schema.expect_map(value, "kubelet", "a map of KubeletConfiguration fields or a path string")
    return parse_kubelet_config(value, "kubelet")


def _parse_checkpoint(value: Any) -> Optional[str]:
    """The checkpoint file's bytes as text: a map becomes compact JSON, a string is kept as is."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InputError("checkpoint", f"cannot be written as JSON: {exc}") from None
    raise InputError("checkpoint", f"expected a map or a string, got {schema.type_name(value)}")


def _parse_pod(value: Any, where: str, base_dir: str) -> Pod:
    """A POD: inline v1 Pod manifest or a path to one."""
    if isinstance(value, str):
        return _load_referenced(where, load_pod_file, _resolve(base_dir, value))
    schema.expect_map(value, where, "a v1 Pod manifest or a path string")
    return parse_pod(value, where)


def _parse_step(raw: Any, i: int, base_dir: str, config: KubeletConfig) -> Step:
    """One step: exactly one operation, its body, `providers` (admit only) and `expect`."""
    where = schema.index("steps", i)
    raw = schema.expect_map(raw, where, "a map with one operation")
    schema.check_keys(raw, where, STEP_KEYS)
    ops = [k for k in raw if k in OPERATIONS]
    if not ops:
        raise InputError(where, "no operation; expected exactly one of " + ", ".join(OPERATIONS))
    if len(ops) > 1:
        raise InputError(where, f"more than one operation ({', '.join(ops)}); a step has exactly one")
    op = ops[0]
    if "providers" in raw and op != "admit":
        raise InputError(schema.join(where, "providers"), 'only allowed beside "admit"')
    expect = validate_expect(raw.get("expect"), op, schema.join(where, "expect"))
    step = Step(index=i, op=op, where=where, expect=expect)
    body = raw[op]
    body_where = schema.join(where, op)
    if op in ("admit", "hints"):
        step.pod = _parse_pod(body, body_where, base_dir)
    elif op == "remove":
        body = schema.expect_map(body, body_where, "a map {pod, container}")
        schema.check_keys(body, body_where, ("pod", "container"), required=("pod",))
        step.pod_ref = schema.expect_str(body["pod"], schema.join(body_where, "pod"))
        if body.get("container") is not None:
            step.container = schema.expect_str(body["container"], schema.join(body_where, "container"))
    elif op == "restart":
        body = {} if body is None else schema.expect_map(body, body_where)
        schema.check_keys(body, body_where, ("kubelet",))
        if body.get("kubelet") is not None:
            kwhere = schema.join(body_where, "kubelet")
            override = schema.expect_map(body["kubelet"], kwhere, "a map of KubeletConfiguration fields")
            step.kubelet = parse_kubelet_config(override, kwhere, base=config)
    else:  # start, check
        body = {} if body is None else schema.expect_map(body, body_where)
        schema.check_keys(body, body_where, ())
    if "providers" in raw:
        step.providers = _parse_providers(raw["providers"], schema.join(where, "providers"), step.pod)
    return step


def _parse_providers(value: Any, where: str, pod: Pod) -> InjectedHints:
    """`providers: {containers: {NAME: HINTS}, pod: HINTS}`; container names must be the pod's."""
    value = schema.expect_map(value, where)
    schema.check_keys(value, where, ("containers", "pod"))
    injected = InjectedHints()
    if value.get("containers") is not None:
        cwhere = schema.join(where, "containers")
        containers = schema.expect_map(value["containers"], cwhere)
        names = [c.name for c in pod.all_containers()]
        for name, hints in containers.items():
            if name not in names:
                guess = schema.suggest(name, names)
                hint = f'; did you mean "{guess}"?' if guess else ""
                raise InputError(schema.join(cwhere, name), f"the pod has no container of this name{hint}")
            injected.containers[name] = _parse_hint_map(hints, schema.join(cwhere, name))
    if "pod" in value:
        injected.pod = _parse_hint_map(value["pod"], schema.join(where, "pod"))
    return injected


def _parse_hint_map(value: Any, where: str) -> ProviderHintsSpec:
    """`{RESOURCE: [HINT, ...] | null}` or null (a nil map)."""
    if value is None:
        return None
    value = schema.expect_map(value, where, "a map of resource name to hints")
    result: dict[str, Optional[list[HintSpec]]] = {}
    for resource, hints in value.items():
        rwhere = schema.join(where, resource)
        if hints is None:
            result[resource] = None
            continue
        items = schema.expect_list(hints, rwhere)
        result[resource] = [parse_hint(h, schema.index(rwhere, j)) for j, h in enumerate(items)]
    return result


def parse_hint(value: Any, where: str) -> HintSpec:
    """`{numaAffinity: [ids] | null, preferred: bool}`; ids must be NUMA bit numbers 0-63."""
    value = schema.expect_map(value, where, "a hint {numaAffinity, preferred}")
    schema.check_keys(value, where, ("numaAffinity", "preferred"), required=("numaAffinity", "preferred"))
    preferred = schema.expect_bool(value["preferred"], schema.join(where, "preferred"))
    nodes = value["numaAffinity"]
    if nodes is None:
        return HintSpec(None, preferred)
    awhere = schema.join(where, "numaAffinity")
    ids = schema.expect_int_list(nodes, awhere)
    for j, bit in enumerate(ids):
        if not 0 <= bit <= MAX_NUMA_BIT:
            raise InputError(schema.index(awhere, j), "bit number must be in range 0-63")
    return HintSpec(tuple(ids), preferred)
