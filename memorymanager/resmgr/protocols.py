"""The seed's interfaces as Python protocols: `Owner` (the resource manager a policy runs
in), `Backend` (a placement policy) and the options a backend is set up with."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Mapping, Optional, Protocol, Sequence, runtime_checkable

from kubeinputs.machine import MachineInfo

from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.types import (
    ContainerEdits,
    Device,
    DeviceRequestAllocationResult,
    ExtendedResources,
    ResourceClaim,
    TopologyZone,
)

#: A backend's configuration: KubeletConfiguration fields by field name plus backend keys.
BackendConfig = Mapping[str, object]


@runtime_checkable
class Owner(Protocol):
    """What a policy may ask of the resource manager running it.

    `with owner:` is its lock (Go's sync.Locker: a plain mutex, not reentrant). The resource
    manager holds it while it calls the policy for NRI requests other than Synchronize, for DRA
    claims and for reconfiguration, so the policy must not take it again then; a policy takes it
    itself only for work it starts on its own (a timer).
    """

    def __enter__(self) -> object: ...

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> Optional[bool]: ...

    def update_containers(self) -> None:
        """Push the pending container changes (`ContainerCache.take_pending_updates`) to the runtime
        (call with the lock held)."""

    def publish_dra_devices(self, devices: Sequence[Device]) -> None:
        """Publish these DRA devices, replacing the earlier ones (the owner copies them)."""

    def dra_list_attributes_supported(self) -> bool:
        """Whether devices may have list-valued attributes (DRAListTypeAttributes gate)."""


@dataclass
class BackendOptions:
    """What a backend is set up with: the system (machine info), the container cache, the
    owner, and the policy-specific configuration."""

    system: Optional[MachineInfo]
    cache: ContainerCache
    owner: Optional[Owner] = None
    config: BackendConfig = field(default_factory=dict)


@dataclass
class Options:
    """Policy options: the owner running the policy."""

    owner: Optional[Owner] = None


@runtime_checkable
class Backend(Protocol):
    """A placement policy, every method of the seed's Backend (Python spelling)."""

    def name(self) -> str:
        """The policy's well-known name."""

    def description(self) -> str:
        """A verbose description of the implementation."""

    def setup(self, options: BackendOptions) -> None:
        """Initialise the backend with these options."""

    def reconfigure(self, config: BackendConfig) -> None:
        """Apply a new configuration."""

    def start(self) -> None:
        """Start up: restore persisted state and publish devices."""

    def sync(self, add: Sequence[Container], delete: Sequence[Container]) -> None:
        """Release `delete`, allocate (or re-adopt) `add`."""

    def allocate_resources(self, container: Container) -> None:
        """Allocate resources to a container (raise PolicyError to refuse)."""

    def release_resources(self, container: Container) -> None:
        """Release a container's resources (idempotent)."""

    def update_resources(self, container: Container) -> None:
        """Update a container's allocation (in-place resize)."""

    def container_started(self, container: Container) -> None:
        """The container has started."""

    def export_resource_data(self, container: Container) -> dict[str, str]:
        """Variables to export to the container's `resources.sh`."""

    def get_topology_zones(self) -> list[TopologyZone]:
        """Zones for node resource topology CRs."""

    def get_extended_resources(self) -> ExtendedResources:
        """Node extended resources to publish (value) or own without publishing (None)."""

    def allocate_claim(self, claim: ResourceClaim,
                       results: Sequence[DeviceRequestAllocationResult]) -> list[ContainerEdits]:
        """Allocate for a claim being prepared; edits[i] belongs to results[i]."""

    def release_claim(self, uid: str) -> None:
        """Release a claim (an unknown UID is not an error)."""


@runtime_checkable
class NUMAReaders(Protocol):
    """What a backend may offer the system collector (`resmgr.metrics`): per NUMA node the machine state,
    and every cached container's memory set. The kubelet backend offers both."""

    def machine_state(self) -> Mapping[int, object]:
        """The memory manager's machine state, per NUMA node."""

    def memsets(self) -> list[list[int]]:
        """The memory set of every cached container."""


@runtime_checkable
class CPUReaders(Protocol):
    """What a backend may offer the system collector for its CPU side (`resmgr.metrics`): the machine's CPUs, and
    every cached container's cpuset.cpus with its CPU request in milli-CPU. The kubelet backend offers both."""

    def cpu_ids(self) -> list[int]:
        """Every CPU of the machine."""

    def cpu_allocations(self) -> list[tuple[list[int], int]]:
        """Per cached container: its cpuset.cpus (CPU ids) and its CPU request in milli-CPU."""
