"""The KubeletConfiguration fields that drive the memory, CPU and topology managers, with kubelet's defaults,
its validation texts, and the node-allocatable reservation it hands to the memory and CPU managers.

Two input forms: the scenario's inline `kubelet` map (KubeletConfiguration field names; an unknown key is
an InputError with a suggestion) or a real `kubelet.config.k8s.io/v1beta1` `KubeletConfiguration`
document (other fields ignored, as kubelet's lenient decoding does). A wrong *shape* (a list where a map
belongs, an unparsable reservedMemory quantity) is an InputError; a wrong *value* (an unknown policy,
zero reserved memory) is reported by `validate_kubelet_configuration` or, for the values kubelet only
checks while starting, by `node_allocatable_reservation` raising KubeletConfigError.

`reservedSystemCPUs` replaces the `cpu` of systemReserved and kubeReserved, as kubelet's server.go does
before it parses them: systemReserved `cpu` becomes the number of CPUs listed and kubeReserved `cpu` is
dropped (`node_allocatable_terms`). Checking the list against the machine's CPUs needs the CPU topology:
`cpumanager.reserved_cpus.get_reserved_cpus`.

Upstream read: pkg/kubelet/apis/config/validation/validation.go and validation_reserved_memory.go,
pkg/kubelet/apis/config/v1beta1/defaults.go, cmd/kubelet/app/server.go (parseResourceList),
pkg/kubelet/eviction/helpers.go (parseThresholdStatement), pkg/kubelet/cm/node_container_manager_linux.go
(GetNodeAllocatableReservation, hardEvictionReservation), cmd/kubelet/app/server.go (getReservedCPUs and
the reservedSystemCPUs override), pkg/kubelet/apis/config/v1beta1/defaults.go (cpuManagerPolicy "none").
"""
from __future__ import annotations

import copy
import re
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Union

from kubeinputs.cpuset import CPUSet, CPUSetError
from kubeinputs.features import FeatureGateError, FeatureGates

from kubeinputs.errors import (InputError, check_keys, expect_bool, expect_int, expect_list, expect_map, expect_str,
                               index_path, join_path)
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.reader import parse_file
from kubeinputs.goformat import go_quote
from kubeinputs.machine import MachineInfo, machine_hugepage_capacity
from kubeinputs.quantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError, parse_quantity, unmarshal_quantity, zero_quantity

if TYPE_CHECKING:  # only in annotations: pathlib is slow to import
    from pathlib import Path

KUBELET_CONFIG_API_VERSION = "kubelet.config.k8s.io/v1beta1"
KUBELET_CONFIG_KIND = "KubeletConfiguration"

DEFAULT_EVICTION_HARD: dict[str, str] = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}

TOPOLOGY_MANAGER_POLICIES = ["none", "best-effort", "restricted", "single-numa-node"]
TOPOLOGY_MANAGER_SCOPES = ["container", "pod"]
RESERVABLE_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pid")
EVICTION_SIGNALS = frozenset({
    "memory.available", "allocatableMemory.available", "nodefs.available", "nodefs.inodesFree",
    "imagefs.available", "imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree",
    "pid.available",
})

# camelCase field name -> dataclass attribute, for the fields modelled here.
FIELDS = {
    "memoryManagerPolicy": "memory_manager_policy",
    "memoryManagerPolicyOptions": "memory_manager_policy_options",
    "reservedMemory": "reserved_memory",
    "systemReserved": "system_reserved",
    "kubeReserved": "kube_reserved",
    "evictionHard": "eviction_hard",
    "mergeDefaultEvictionSettings": "merge_default_eviction_settings",
    "topologyManagerPolicy": "topology_manager_policy",
    "topologyManagerScope": "topology_manager_scope",
    "topologyManagerPolicyOptions": "topology_manager_policy_options",
    "featureGates": "feature_gates",
    "cpuManagerPolicy": "cpu_manager_policy",
    "cpuManagerPolicyOptions": "cpu_manager_policy_options",
    "reservedSystemCPUs": "reserved_system_cpus",
}

# Real KubeletConfiguration fields this simulator does not model: named as such in the inline map.
UNMODELLED_FIELDS = frozenset({
    "address", "port", "readOnlyPort", "authentication", "authorization", "clusterDNS", "clusterDomain",
    "staticPodPath", "containerRuntimeEndpoint", "cgroupDriver", "cgroupsPerQOS", "cgroupRoot", "maxPods",
    "podPidsLimit", "failSwapOn", "memorySwap",
    "cpuManagerReconcilePeriod", "enforceNodeAllocatable", "systemReservedCgroup",
    "kubeReservedCgroup", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim",
    "evictionPressureTransitionPeriod", "evictionMaxPodGracePeriod", "memoryReservationPolicy",
    "memoryThrottlingFactor", "rotateCertificates", "serverTLSBootstrap", "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent", "containerLogMaxSize", "containerLogMaxFiles", "resolvConf", "runtimeRequestTimeout",
})

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_GO_FLOAT_RE = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


class KubeletConfigError(ValueError):
    """A configuration value kubelet refuses while starting; str() is kubelet's message."""


@dataclass
class MemoryReservation:
    """One `reservedMemory` entry: memory reserved for the system on `numa_node`, per resource."""

    numa_node: int
    limits: dict[str, Quantity] = field(default_factory=dict)


@dataclass
class KubeletConfig:
    """The modelled KubeletConfiguration fields after kubelet's defaulting (Python names of the JSON fields)."""

    memory_manager_policy: str = "None"
    memory_manager_policy_options: dict[str, str] = field(default_factory=dict)
    reserved_memory: list[MemoryReservation] = field(default_factory=list)
    system_reserved: dict[str, Quantity] = field(default_factory=dict)
    kube_reserved: dict[str, Quantity] = field(default_factory=dict)
    eviction_hard: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_EVICTION_HARD))
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: dict[str, str] = field(default_factory=dict)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    merge_default_eviction_settings: bool = False
    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: dict[str, str] = field(default_factory=dict)
    reserved_system_cpus: str = ""
    # evictionHard as the user wrote it (None: not set), so that overrides can recompute eviction_hard
    eviction_hard_set: Optional[dict[str, str]] = field(default=None, repr=False, compare=False)


# -- parsing ---------------------------------------------------------------------------------------------------
def _string_map(value: Any, where: str, what: str) -> dict[str, str]:
    """A map[string]string field: every value must be a string."""
    raw = expect_map(value, where)
    for key, item in raw.items():
        expect_str(item, join_path(where, key), hint=f"{what} values are strings; quote it")
    return raw


def _reserved_resource_map(value: Any, where: str, limits: Limits) -> dict[str, Quantity]:
    """systemReserved / kubeReserved: map[string]string parsed as quantities (kubelet's parseResourceList)."""
    result: dict[str, Quantity] = {}
    for key, text in _string_map(value, where, "reservation").items():
        try:
            result[key] = parse_quantity(text, limits.max_number_digits)
        except QuantityError as err:
            raise InputError(join_path(where, key), f"failed to parse quantity {go_quote(text)} for "
                                                    f"{go_quote(key)} resource: {err}") from None
    return result


def _parse_reserved_memory(value: Any, where: str, max_digits: int) -> list[MemoryReservation]:
    """The reservedMemory list: [{numaNode, limits: ResourceList}]."""
    result = []
    for i, item in enumerate(expect_list(value, where)):
        path = index_path(where, i)
        raw = expect_map(item, path, "a map ({numaNode, limits})")
        check_keys(raw, path, ("numaNode", "limits"))
        numa = expect_int(raw.get("numaNode", 0), join_path(path, "numaNode"), minimum=_INT32_MIN, maximum=_INT32_MAX)
        limits_path = join_path(path, "limits")
        limits: dict[str, Quantity] = {}
        for name, amount in expect_map(raw.get("limits"), limits_path).items():
            try:
                limits[name] = unmarshal_quantity(amount, max_digits)
            except QuantityError as err:
                raise InputError(join_path(limits_path, name), str(err)) from None
        result.append(MemoryReservation(numa_node=numa, limits=limits))
    return result


def _parse_gates(value: Any, where: str) -> dict[str, bool]:
    """The featureGates map: every value must be a boolean."""
    raw = expect_map(value, where)
    for key, item in raw.items():
        expect_bool(item, join_path(where, key))
    return raw


def _apply_fields(cfg: KubeletConfig, doc: dict, where: str, limits: Limits) -> KubeletConfig:
    """Override `cfg` with every modelled field present in `doc` (kubelet's defaulting for empty values)."""
    def path(key: str) -> str:
        """The path of field `key`."""
        return join_path(where, key)

    for key in ("memoryManagerPolicy", "topologyManagerPolicy", "topologyManagerScope", "cpuManagerPolicy",
                "reservedSystemCPUs"):
        if key in doc and doc[key] is not None:
            expect_str(doc[key], path(key))
    if doc.get("cpuManagerPolicy") is not None:
        cfg.cpu_manager_policy = doc["cpuManagerPolicy"] or "none"
    if doc.get("reservedSystemCPUs") is not None:
        cfg.reserved_system_cpus = doc["reservedSystemCPUs"]
    if "cpuManagerPolicyOptions" in doc:
        cfg.cpu_manager_policy_options = _string_map(doc["cpuManagerPolicyOptions"],
                                                     path("cpuManagerPolicyOptions"), "policy option")
    if doc.get("memoryManagerPolicy") is not None:
        cfg.memory_manager_policy = doc["memoryManagerPolicy"] or "None"
    if doc.get("topologyManagerPolicy") is not None:
        cfg.topology_manager_policy = doc["topologyManagerPolicy"] or "none"
    if doc.get("topologyManagerScope") is not None:
        cfg.topology_manager_scope = doc["topologyManagerScope"] or "container"
    if "memoryManagerPolicyOptions" in doc:
        cfg.memory_manager_policy_options = _string_map(doc["memoryManagerPolicyOptions"],
                                                        path("memoryManagerPolicyOptions"), "policy option")
    if "topologyManagerPolicyOptions" in doc:
        cfg.topology_manager_policy_options = _string_map(doc["topologyManagerPolicyOptions"],
                                                          path("topologyManagerPolicyOptions"), "policy option")
    if "reservedMemory" in doc:
        cfg.reserved_memory = _parse_reserved_memory(doc["reservedMemory"], path("reservedMemory"),
                                                     limits.max_number_digits)
    if "systemReserved" in doc:
        cfg.system_reserved = _reserved_resource_map(doc["systemReserved"], path("systemReserved"), limits)
    if "kubeReserved" in doc:
        cfg.kube_reserved = _reserved_resource_map(doc["kubeReserved"], path("kubeReserved"), limits)
    if "featureGates" in doc:
        cfg.feature_gates = _parse_gates(doc["featureGates"], path("featureGates"))
    if doc.get("mergeDefaultEvictionSettings") is not None:
        cfg.merge_default_eviction_settings = expect_bool(doc["mergeDefaultEvictionSettings"],
                                                          path("mergeDefaultEvictionSettings"))
    if doc.get("evictionHard") is None and doc.get("mergeDefaultEvictionSettings") is None:
        return cfg
    if doc.get("evictionHard") is not None:
        cfg.eviction_hard_set = _string_map(doc["evictionHard"], path("evictionHard"), "eviction threshold")
    elif cfg.eviction_hard_set is None and cfg.eviction_hard != DEFAULT_EVICTION_HARD:
        cfg.eviction_hard_set = dict(cfg.eviction_hard)  # a base built directly rather than parsed
    # A map set by the user replaces the default one (signals it leaves out get no threshold), unless
    # mergeDefaultEvictionSettings asks for the defaults to fill in.
    if cfg.eviction_hard_set is None:
        cfg.eviction_hard = dict(DEFAULT_EVICTION_HARD)
    elif cfg.merge_default_eviction_settings:
        cfg.eviction_hard = {**DEFAULT_EVICTION_HARD, **cfg.eviction_hard_set}
    else:
        cfg.eviction_hard = dict(cfg.eviction_hard_set)
    return cfg


def _is_document(doc: dict) -> bool:
    """Whether an inline map is a whole KubeletConfiguration document."""
    return "apiVersion" in doc or "kind" in doc


def _check_document_header(doc: dict, where: str) -> None:
    """apiVersion and kind must name a v1beta1 KubeletConfiguration."""
    if doc.get("apiVersion") != KUBELET_CONFIG_API_VERSION:
        raise InputError(join_path(where, "apiVersion"),
                         f'expected "{KUBELET_CONFIG_API_VERSION}", got {doc.get("apiVersion")!r}')
    if doc.get("kind") != KUBELET_CONFIG_KIND:
        raise InputError(join_path(where, "kind"), f'expected "{KUBELET_CONFIG_KIND}", got {doc.get("kind")!r}')


def parse_kubelet_config(doc: Any, where: str = "", base: Optional[KubeletConfig] = None,
                         limits: Limits = DEFAULT_LIMITS) -> KubeletConfig:
    """The scenario's `kubelet` map as a KubeletConfig, overriding `base` (kubelet defaults when None).

    A map carrying `apiVersion`/`kind` is read as a whole KubeletConfiguration document (other fields
    ignored); otherwise only the modelled field names are accepted. `limits` bound the quantities."""
    raw = expect_map(doc, where, "a map of KubeletConfiguration fields")
    if _is_document(raw):
        _check_document_header(raw, where)
    else:
        for key in raw:
            if key in UNMODELLED_FIELDS:
                raise InputError(join_path(where, key), "a KubeletConfiguration field this simulator does not model; "
                                 "give a whole document (apiVersion and kind) to have such fields ignored")
        check_keys(raw, where, FIELDS)
    cfg = copy.deepcopy(base) if base is not None else KubeletConfig()
    return _apply_fields(cfg, raw, where, limits)


def load_kubelet_config_file(path: Union[str, Path], base: Optional[KubeletConfig] = None,
                             limits: Limits = DEFAULT_LIMITS) -> KubeletConfig:
    """A `kubelet.config.k8s.io/v1beta1` KubeletConfiguration file; fields not modelled here are ignored."""
    def parse(doc: Any) -> KubeletConfig:
        raw = expect_map(doc, "", "a KubeletConfiguration document")
        _check_document_header(raw, "")
        cfg = copy.deepcopy(base) if base is not None else KubeletConfig()
        return _apply_fields(cfg, raw, "", limits)

    return parse_file(path, parse, limits)


# -- validation (ValidateKubeletConfiguration) ----------------------------------------------------------------
def _go_quote_list(items: list[str]) -> str:
    """A []string as Go's %q prints it."""
    return "[" + " ".join(go_quote(i) for i in items) + "]"


def validate_reserved_memory(cfg: KubeletConfig) -> list[str]:
    """validateReservedMemoryConfiguration: unsupported limit types, zero values, duplicates (spec order)."""
    errors: list[str] = []
    seen: dict[int, set[str]] = {}
    for reservation in cfg.reserved_memory:
        numa = reservation.numa_node
        types = seen.setdefault(numa, set())
        for name, quantity in reservation.limits.items():
            if not (name == "memory" or name.startswith("hugepages-")):
                errors.append(f"invalid configuration: the limit type {go_quote(name)} for NUMA node {numa} is not "
                              f"supported, only [memory hugepages-<HugePageSize>] is accepted")
            if quantity.is_zero():
                errors.append(f"invalid configuration: reserved memory may not be zero for NUMA node {numa} and "
                              f"resource {go_quote(name)}")
            if name in types:
                errors.append(f"invalid configuration: the reserved memory has a duplicate value for NUMA node "
                              f"{numa} and resource {go_quote(name)}")
            types.add(name)
    return errors


def validate_kubelet_configuration(cfg: KubeletConfig) -> list[str]:
    """ValidateKubeletConfiguration's messages for the modelled fields (empty list: valid).

    A bad feature gate stops validation with that one message, as kubelet does; then the topology
    manager policy and scope, then reservedSystemCPUs, then reservedMemory. (The memory and CPU manager
    policy names and the CPU manager's options are not checked here: kubelet rejects them when the
    managers are created.)"""
    try:
        FeatureGates.from_config(cfg.feature_gates)
    except FeatureGateError as err:
        return [str(err)]
    errors: list[str] = []
    if cfg.topology_manager_policy not in TOPOLOGY_MANAGER_POLICIES:
        errors.append(f"invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
                      f"{go_quote(cfg.topology_manager_policy)} must be one of: "
                      f"{_go_quote_list(TOPOLOGY_MANAGER_POLICIES)}")
    if cfg.topology_manager_scope not in TOPOLOGY_MANAGER_SCOPES:
        errors.append(f"invalid configuration: topologyManagerScope (--topology-manager-scope) "
                      f"{go_quote(cfg.topology_manager_scope)} must be one of: "
                      f"{go_quote(TOPOLOGY_MANAGER_SCOPES[0])}, or {go_quote(TOPOLOGY_MANAGER_SCOPES[1])}")
    if cfg.reserved_system_cpus != "":
        try:
            CPUSet.parse(cfg.reserved_system_cpus)
        except CPUSetError as err:
            errors.append(f"invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
                          f"{cfg.reserved_system_cpus}, error: {err}")
    errors.extend(validate_reserved_memory(cfg))
    return errors


# -- node allocatable reservation -----------------------------------------------------------------------------
def _check_reserved(resources: dict[str, Quantity], flag: str) -> None:
    """kubelet's parseResourceList checks on systemReserved / kubeReserved (reported at start)."""
    for name, quantity in resources.items():
        if name not in RESERVABLE_RESOURCES:
            raise KubeletConfigError(f"{flag} value failed to parse: cannot reserve {go_quote(name)} resource")
        if quantity.sign() < 0:
            raise KubeletConfigError(f"{flag} value failed to parse: resource quantity for {go_quote(name)} "
                                     f"cannot be negative: {quantity}")


def _f32(value: float) -> float:
    """`value` rounded to the nearest float32."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _parse_percentage(text: str) -> float:
    """Go's parsePercentage: ParseFloat(trimmed, 32) as float32, divided by 100 in float32."""
    number = text.rstrip("%")
    if not _GO_FLOAT_RE.match(number):
        raise KubeletConfigError(f"strconv.ParseFloat: parsing {go_quote(number)}: invalid syntax")
    try:
        value = _f32(float(number))
    except OverflowError:
        raise KubeletConfigError(f"strconv.ParseFloat: parsing {go_quote(number)}: value out of range") from None
    return _f32(value / 100)


def hard_eviction_thresholds(eviction_hard: dict[str, str]) -> dict[str, Union[Quantity, float]]:
    """kubelet's parse of `evictionHard`: signal -> quantity or fraction (0%/100% ignored); KubeletConfigError
    with kubelet's text for an unknown signal or a bad value."""
    result: dict[str, Union[Quantity, float]] = {}
    for signal, text in eviction_hard.items():
        if signal not in EVICTION_SIGNALS:
            raise KubeletConfigError(f"unsupported eviction signal {signal}")
        if text.endswith("%"):
            if text in ("0%", "100%"):
                continue
            fraction = _parse_percentage(text)
            if fraction < 0:
                raise KubeletConfigError(f"eviction percentage threshold {signal} must be >= 0%: {text}")
            if fraction > 1:
                raise KubeletConfigError(f"eviction percentage threshold {signal} must be <= 100%: {text}")
            result[signal] = fraction
            continue
        try:
            quantity = parse_quantity(text)
        except QuantityError as err:
            raise KubeletConfigError(str(err)) from None
        if quantity.sign() <= 0:
            raise KubeletConfigError(f"eviction threshold {signal} must be positive: {quantity}")
        result[signal] = quantity
    return result


def node_capacity(machine: MachineInfo) -> dict[str, Quantity]:
    """The node capacity kubelet derives from cadvisor: cpu, memory, hugepages-*, plus pods and
    ephemeral-storage (whose sizes are not modelled and count as 0)."""
    capacity = {
        "cpu": Quantity.from_int(machine.num_cores, DECIMAL_SI),
        "memory": Quantity.from_int(machine.memory_capacity, BINARY_SI),
        "ephemeral-storage": zero_quantity(BINARY_SI),
        "pods": zero_quantity(DECIMAL_SI),
    }
    for name, size in machine_hugepage_capacity(machine).items():
        capacity[name] = Quantity.from_int(size, BINARY_SI)
    return capacity


def _threshold_quantity(threshold: Union[Quantity, float], capacity: Quantity) -> Quantity:
    """GetThresholdQuantity: a quantity as is, a fraction taken of the capacity (BinarySI)."""
    if isinstance(threshold, Quantity):
        return threshold
    return Quantity.from_int(int(float(capacity.value_bytes()) * threshold), BINARY_SI)


# The terms of the Node Allocatable reservation, in the order kubelet adds them.
SYSTEM_RESERVED, KUBE_RESERVED, EVICTION_HARD = "systemReserved", "kubeReserved", "evictionHard"


def node_allocatable_terms(cfg: KubeletConfig, machine: MachineInfo) -> dict[str, dict[str, Quantity]]:
    """What GetNodeAllocatableReservation adds up, per term: systemReserved, kubeReserved and the hard-eviction
    thresholds as quantities (`memory.available` for memory, a percentage taken of memory capacity;
    `nodefs.available` for ephemeral-storage). With `reservedSystemCPUs` set, systemReserved `cpu` is the number
    of CPUs it lists and kubeReserved has no `cpu` (kubelet's override). Raises KubeletConfigError as
    `node_allocatable_reservation`."""
    system_reserved, kube_reserved = reserved_with_system_cpus(cfg)
    _check_reserved(kube_reserved, "--kube-reserved")
    _check_reserved(system_reserved, "--system-reserved")
    thresholds = hard_eviction_thresholds(cfg.eviction_hard)
    capacity = node_capacity(machine)
    eviction: dict[str, Quantity] = {}
    if "memory.available" in thresholds:
        eviction["memory"] = _threshold_quantity(thresholds["memory.available"], capacity["memory"])
    if "nodefs.available" in thresholds:
        eviction["ephemeral-storage"] = _threshold_quantity(thresholds["nodefs.available"],
                                                            capacity["ephemeral-storage"])
    return {SYSTEM_RESERVED: system_reserved, KUBE_RESERVED: kube_reserved, EVICTION_HARD: eviction}


def reserved_with_system_cpus(cfg: KubeletConfig) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """systemReserved and kubeReserved after kubelet's reservedSystemCPUs override (copies): with a list
    of n CPUs, systemReserved `cpu` is n and kubeReserved loses `cpu`. Raises KubeletConfigError with
    server.go's text for a list cpuset.Parse refuses."""
    system_reserved, kube_reserved = dict(cfg.system_reserved), dict(cfg.kube_reserved)
    if cfg.reserved_system_cpus == "":
        return system_reserved, kube_reserved
    try:
        reserved = CPUSet.parse(cfg.reserved_system_cpus)
    except CPUSetError as err:
        raise KubeletConfigError(f"unable to parse reserved-cpus list: {err}") from None
    if reserved.size() > 0:
        kube_reserved.pop("cpu", None)
        system_reserved["cpu"] = parse_quantity(str(reserved.size()))
    return system_reserved, kube_reserved


def node_allocatable_reservation(cfg: KubeletConfig, machine: MachineInfo) -> dict[str, Quantity]:
    """GetNodeAllocatableReservation: per capacity resource, systemReserved + kubeReserved + the hard-eviction
    `memory.available` threshold (a percentage taken of memory capacity), only non-zero results kept.

    Sums follow Quantity.Add, so the result prints as kubelet's would ("100Mi", 1Gi+100Mi = "1124Mi").
    Raises KubeletConfigError for what kubelet refuses at start (reserving an unsupported resource, a
    negative reservation, a bad eviction threshold)."""
    terms = node_allocatable_terms(cfg, machine)
    result: dict[str, Quantity] = {}
    for name in node_capacity(machine):
        total = zero_quantity(DECIMAL_SI)
        for source in terms.values():
            if name in source:
                total = total.add(source[name])
        if not total.is_zero():
            result[name] = total
    return result
