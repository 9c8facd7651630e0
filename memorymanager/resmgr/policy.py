"""The Policy the resource manager calls, around one Backend (the seed's `policy` type).

The calling convention is nri-plugins' (`pkg/resmgr/nri.go`, the DRA prepare/unprepare): the
resource manager, the Owner, holds its lock (a plain, non-reentrant mutex) while it calls the policy
for NRI requests other than Synchronize (allocate, release, update, container started, export), for
DRA claims and for reconfiguration; `start`, `sync` and the node-level readers are called without
it. The Policy therefore never takes the Owner's lock for these calls: taking it again would
deadlock. A policy takes the lock itself only for work it starts on its own (this one starts none).

The Policy writes `export_resource_data` as `resources.sh` into the container's folder, and
refreshes the system metrics after every change. The cpusets the backend sets are left pending in
the cache for the resource manager to carry in its NRI response (`ContainerCache.take_pending`,
`take_pending_updates`); reconfiguration and claims push theirs with `Owner.update_containers()`.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence, TypeVar

from kubeinputs.errors import InputError, describe
from kubeinputs.machine import MachineInfo
from kubeinputs.quantity import Quantity
from kubeinputs.sysfs import read_machine_info
from prometheus_client.registry import CollectorRegistry

from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.export import write_exports
from memorymanager.resmgr.extended import ExtendedResourcesPatch, extended_resources_patch, reconcile_extended_resources
from memorymanager.resmgr.metrics import SystemCollector
from memorymanager.resmgr.protocols import (Backend, BackendConfig, BackendOptions, CPUReaders, NUMAReaders, Options,
                                            Owner)
from memorymanager.resmgr.types import (
    ContainerEdits,
    DeviceRequestAllocationResult,
    ExtendedResources,
    PolicyArgumentError,
    PolicyError,
    ResourceClaim,
    TopologyZone,
    check_instance,
)

T = TypeVar("T")


class Policy:
    """What the resource manager calls; build it with `new_policy`."""

    def __init__(self, backend: Backend, cache: ContainerCache, options: Options,
                 system: Optional[MachineInfo] = None) -> None:
        self.backend = backend
        self.cache = cache
        self.options = options
        self.system = system
        self.registry = CollectorRegistry()
        self.collector: Optional[SystemCollector] = None

    def _call(self, fn: Callable[[], T]) -> T:
        """Run a backend call, then refresh the metrics (the caller holds whatever lock the call needs)."""
        try:
            return fn()
        finally:
            self._update_metrics()

    def _update_metrics(self) -> None:
        if self.collector is not None:
            self.collector.update()

    def active_policy(self) -> str:
        """The backend's name."""
        return self.backend.name()

    def start(self, config: BackendConfig) -> None:
        """Set the backend up with the cache, system, owner and `config`, then start it."""
        try:
            system = self.system if self.system is not None else read_machine_info("/sys")
        except InputError as err:
            raise PolicyError(f"failed to discover system topology: {err}") from err
        self.backend.setup(BackendOptions(system=system, cache=self.cache, owner=self.options.owner, config=config))
        self.backend.start()
        self._new_collector()

    def _new_collector(self) -> None:
        if not isinstance(self.backend, NUMAReaders):  # a backend without them gets no system collector
            return
        if self.collector is not None:
            self.registry.unregister(self.collector)
        cpus = self.backend if isinstance(self.backend, CPUReaders) else None
        self.collector = SystemCollector(self.backend.machine_state, self.backend.memsets,
                                         cpus.cpu_ids if cpus is not None else None,
                                         cpus.cpu_allocations if cpus is not None else None)
        self.collector.register(self.registry)
        self.collector.update()

    def reconfigure(self, config: BackendConfig) -> None:
        """Reconfigure the backend (the caller holds the owner's lock)."""
        def run() -> None:
            self.backend.reconfigure(config)
            self._new_collector()
        self._call(run)

    def sync(self, add: Sequence[Container], delete: Sequence[Container]) -> None:
        """Synchronize: every created or running container in both lists, as nri-plugins passes them; placed
        ones keep their placement, one that cannot be placed is logged and skipped (called without the lock)."""
        self._call(lambda: self.backend.sync(add, delete))

    def allocate_resources(self, container: Container) -> None:
        """Allocate for a container (the caller holds the owner's lock)."""
        self._call(lambda: self.backend.allocate_resources(container))

    def release_resources(self, container: Container) -> None:
        """Release a container (the caller holds the owner's lock)."""
        self._call(lambda: self.backend.release_resources(container))

    def update_resources(self, container: Container) -> None:
        """Update a container's allocation (the caller holds the owner's lock)."""
        self._call(lambda: self.backend.update_resources(container))

    def container_started(self, container: Container) -> None:
        """Tell the backend a container started (the caller holds the owner's lock)."""
        self._call(lambda: self.backend.container_started(container))

    def export_resource_data(self, container: Container) -> str:
        """Write the backend's data for the container as `resources.sh` (mode 0644) in its folder (mode
        0755); returns the file's path (the caller holds the owner's lock)."""
        data = self.backend.export_resource_data(container)
        return write_exports(self.cache.container_directory(container.id), data)

    def get_topology_zones(self) -> list[TopologyZone]:
        """The backend's zones."""
        return self.backend.get_topology_zones()

    def get_extended_resources(self) -> ExtendedResources:
        """The backend's extended resources map."""
        return self.backend.get_extended_resources()

    def extended_resources_patch(self, current: Mapping[str, Quantity]) -> ExtendedResourcesPatch:
        """The change the nri-plugins agent makes to a Node's extended resources for the backend's map
        (see `extended`)."""
        return extended_resources_patch(current, self.get_extended_resources())

    def reconcile_extended_resources(self, current: Mapping[str, Quantity]) -> dict[str, Quantity]:
        """A Node's extended resources after the agent applied the backend's map (see `extended`)."""
        return reconcile_extended_resources(current, self.get_extended_resources())

    def allocate_claim(self, claim: ResourceClaim,
                       results: Sequence[DeviceRequestAllocationResult]) -> list[ContainerEdits]:
        """Allocate for a claim being prepared (the caller holds the owner's lock)."""
        return self._call(lambda: self.backend.allocate_claim(claim, results))

    def release_claim(self, uid: str) -> None:
        """Release a claim (the caller holds the owner's lock)."""
        self._call(lambda: self.backend.release_claim(uid))


def new_policy(backend: Backend, cache: ContainerCache, options: Optional[Options] = None,
               system: Optional[MachineInfo] = None) -> Policy:
    """A Policy around `backend`. `system` is the machine info (an extension: the seed
    discovers the host's; None here reads this host's sysfs at `start`). An argument of the
    wrong type is a PolicyArgumentError naming it."""
    if not isinstance(backend, Backend):
        raise PolicyArgumentError("new_policy: backend", f"expected a Backend (such as KubeletBackend()), got {describe(backend)}")
    check_instance(cache, ContainerCache, "new_policy: cache")
    if options is not None:
        check_instance(options, Options, "new_policy: options")
        if options.owner is not None and not isinstance(options.owner, Owner):
            raise PolicyArgumentError("new_policy: options.owner", "expected an Owner (a lock with update_containers, "
                                      f"publish_dra_devices, dra_list_attributes_supported), got {describe(options.owner)}")
    if system is not None:
        check_instance(system, MachineInfo, "new_policy: system")
    return Policy(backend, cache, options or Options(), system)
