"""The names and data types of the nri-plugins `policy` package (v0.15.0), in Python spelling.

The constants keep the seed's values byte for byte (they are what other tools read: the
`resources.sh` variable names, the NRT zone attribute names). The data types are frozen or
plain dataclasses; Kubernetes quantities are `kubeinputs.quantity.Quantity`. The DRA types
(`ResourceClaim`, `DeviceRequestAllocationResult`, `Device`, `ContainerEdits`) are the small
subset of `resource.k8s.io` and CDI that a policy sees.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Mapping, Optional, Union

from kubeinputs.errors import Error, InputError, describe, type_name
from kubeinputs.quantity import Quantity

# ----- the export file and its variables ---------------------------------------------------------

#: Basename of the file a container's resources are exported to (in the container's directory).
ExportedResources = "resources.sh"
#: Shell variable with the container's shared CPUs.
SHARED_CPUS = "SHARED_CPUS"
#: Shell variable with the container's isolated CPUs.
ISOLATED_CPUS = "ISOLATED_CPUS"
#: Shell variable with the container's exclusive CPUs.
EXCLUSIVE_CPUS = "EXCLUSIVE_CPUS"
#: Shell variable with the CPUs of the container's DRA claims.
CLAIMED_CPUS = "CLAIMED_CPUS"
#: Extension (not in the seed): the container's `cpuset.mems`, as kubelet would set it.
MEMS = "MEMS"
#: Extension (not in the seed): the NUMA nodes of the memory claims the container uses.
CLAIMED_MEMS = "CLAIMED_MEMS"

# ----- node resource topology names --------------------------------------------------------------

MEMORY_RESOURCE = "memory"
CPU_RESOURCE = "cpu"
MEMSET_ATTRIBUTE = "memory set"
CPUS_ATTRIBUTE = "cpuset"
SHARED_CPUS_ATTRIBUTE = "shared cpuset"
RESERVED_CPUS_ATTRIBUTE = "reserved cpuset"
ISOLATED_CPUS_ATTRIBUTE = "isolated cpuset"
EXCESS_CPUS_ATTRIBUTE = "excess cpus"
COMPONENT_CPUS_ATTRIBUTE = "component cpusets"
CONTAINER_ALLOCATION_ZONE_TYPE = "allocation for container"


class Domain(str, enum.Enum):
    """A hardware resource domain a backend can police."""

    CPU = "CPU"
    MEMORY = "Memory"
    HUGEPAGES = "HugePages"
    CACHE = "Cache"
    MEMORY_BW = "MBW"


class PolicyError(Error):
    """A request the policy refuses; str() says what and why (kubelet's text where kubelet refuses).
    A `memorymanager.Error`, like every error this project raises to a caller."""


class PolicyArgumentError(InputError, PolicyError):
    """A call or a value built with an argument of the wrong type or value: an InputError naming
    the argument (`ResourceClaim.uid: expected a non-empty string, got null`) that callers of the
    policy also catch as a PolicyError."""


def check_str(value: object, where: str, *, empty: bool = True) -> str:
    """`value` if it is a string (non-empty unless `empty`), else a PolicyArgumentError."""
    if not isinstance(value, str) or (not empty and not value):
        wanted = "a string" if empty else "a non-empty string"
        raise PolicyArgumentError(where, f"expected {wanted}, got {describe(value)}")
    return value


def check_strings(value: object, where: str) -> tuple[str, ...]:
    """A list or tuple of strings as a tuple (a string alone is not one), else a PolicyArgumentError."""
    if not isinstance(value, (list, tuple)):
        raise PolicyArgumentError(where, f"expected a list of strings, got {describe(value)}")
    return tuple(check_str(v, f"{where}[{i}]") for i, v in enumerate(value))


def check_instance(value: object, kind: type, where: str) -> None:
    """A PolicyArgumentError unless `value` is a `kind`."""
    if not isinstance(value, kind):
        raise PolicyArgumentError(where, f"expected a {kind.__name__}, got {describe(value)}")


def check_string_map(value: object, where: str) -> dict[str, object]:
    """A mapping with string keys, as a dict, else a PolicyArgumentError."""
    if not isinstance(value, Mapping):
        raise PolicyArgumentError(where, f"expected a map, got {describe(value)}")
    for key in value:
        check_str(key, f"{where} key")
    return dict(value)


class NoDRAClaimsError(PolicyError):
    """The error type of `ErrNoDRAClaims`."""


#: What `allocate_claim`/`release_claim` raise in a policy without DRA claim support.
ErrNoDRAClaims = NoDRAClaimsError("policy does not support DRA claims")

# ----- topology zones and metrics ----------------------------------------------------------------


@dataclass(frozen=True)
class ZoneResource:
    """A resource of a topology zone (capacity >= allocatable >= available)."""

    name: str
    capacity: Quantity
    allocatable: Quantity
    available: Quantity


@dataclass(frozen=True)
class ZoneAttribute:
    """A policy-specific string attribute of a zone (`memory set` = "0,1")."""

    name: str
    value: str


@dataclass(frozen=True)
class TopologyZone:
    """One zone of a node resource topology (NRT) export; `parent` "" for a top-level zone."""

    name: str
    type: str
    parent: str = ""
    resources: tuple[ZoneResource, ...] = ()
    attributes: tuple[ZoneAttribute, ...] = ()


@dataclass
class NodeMetric:
    """Per NUMA node: capacity and usage in bytes and the number of containers using it."""

    id: int
    id_label: dict[str, str] = field(default_factory=dict)
    capacity: int = 0
    usage: int = 0
    container_count: int = 0


@dataclass
class CpuMetric:
    """Per CPU: allocation in milli-CPU and the number of containers using it (the system collector's CPU side)."""

    id: int
    id_label: dict[str, str] = field(default_factory=dict)
    allocation: int = 0
    container_count: int = 0


# ----- container changes ------------------------------------------------------------------------


@dataclass(frozen=True)
class ContainerUpdate:
    """A pending change of a container's cgroup cpuset, as a policy records it for the runtime: NRI's
    ContainerAdjustment (the container being created) or ContainerUpdate (one that exists), reduced to
    `linux.resources.cpu.cpus` / `.mems`. None leaves a value as it is."""

    container_id: str
    cpuset_cpus: Optional[str] = None
    cpuset_mems: Optional[str] = None

    def merged(self, newer: "ContainerUpdate") -> "ContainerUpdate":
        """This change with `newer`'s values over it (what the runtime gets when both are pending)."""
        return ContainerUpdate(self.container_id,
                               self.cpuset_cpus if newer.cpuset_cpus is None else newer.cpuset_cpus,
                               self.cpuset_mems if newer.cpuset_mems is None else newer.cpuset_mems)


# ----- DRA ---------------------------------------------------------------------------------------

#: A device attribute value: int, bool, string, or (only when the owner supports it) a list.
AttributeValue = Union[int, bool, str, tuple[int, ...], tuple[str, ...]]


@dataclass(frozen=True)
class Device:
    """A DRA device as published in a ResourceSlice: a name, attributes and capacities."""

    name: str
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    capacity: Mapping[str, Quantity] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_str(self.name, "Device.name", empty=False)
        object.__setattr__(self, "attributes", check_string_map(self.attributes, "Device.attributes"))
        object.__setattr__(self, "capacity", check_string_map(self.capacity, "Device.capacity"))


@dataclass(frozen=True)
class DeviceRequestAllocationResult:
    """One allocated device of a claim: which request, driver, pool and device, and the
    capacity consumed from it (consumable capacity; `size` for memory)."""

    request: str
    driver: str
    pool: str
    device: str
    consumed_capacity: Mapping[str, Quantity] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("request", "driver", "pool", "device"):
            check_str(getattr(self, name), f"DeviceRequestAllocationResult.{name}")
        object.__setattr__(self, "consumed_capacity",
                           check_string_map(self.consumed_capacity, "DeviceRequestAllocationResult.consumed_capacity"))


@dataclass(frozen=True)
class ClaimConfig:
    """An opaque device configuration of a claim for one driver, applying to the named
    requests (all of them when empty)."""

    driver: str
    parameters: Mapping[str, object] = field(default_factory=dict)
    requests: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_str(self.driver, "ClaimConfig.driver")
        object.__setattr__(self, "parameters", check_string_map(self.parameters, "ClaimConfig.parameters"))
        object.__setattr__(self, "requests", check_strings(self.requests, "ClaimConfig.requests"))


@dataclass(frozen=True)
class ResourceClaim:
    """The part of a ResourceClaim a policy reads: identity and its device configs."""

    uid: str
    name: str = ""
    namespace: str = "default"
    configs: tuple[ClaimConfig, ...] = ()

    def __post_init__(self) -> None:
        check_str(self.uid, "ResourceClaim.uid", empty=False)
        check_str(self.name, "ResourceClaim.name")
        check_str(self.namespace, "ResourceClaim.namespace")
        if not isinstance(self.configs, (list, tuple)):
            raise PolicyArgumentError("ResourceClaim.configs", f"expected a list of ClaimConfig, got {type_name(self.configs)}")
        for i, config in enumerate(self.configs):
            check_instance(config, ClaimConfig, f"ResourceClaim.configs[{i}]")
        object.__setattr__(self, "configs", tuple(self.configs))


@dataclass(frozen=True)
class ContainerEdits:
    """CDI container edits (only environment variables, `NAME=value`, are used here)."""

    env: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", check_strings(self.env, "ContainerEdits.env"))


#: A resource quantity as `get_extended_resources` returns it (None: owned, not published).
ExtendedResources = dict[str, Optional[Quantity]]
