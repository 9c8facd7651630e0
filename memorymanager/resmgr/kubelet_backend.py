"""`kubelet-static`: kubelet's exact memory placement behind the nri-plugins Backend interface.

Every placement decision is the existing memory manager's and topology manager's, driven
through `memorymanager.Node` with the backend's KubeletConfiguration fields:

- `allocate_resources` admits the container's pod exactly as kubelet does (the whole pod, at
  its first container; a refusal is a PolicyError with kubelet's reason and message);
- `release_resources` is kubelet's RemoveContainer (idempotent); the pod stops being active
  when its last cached container goes;
- `sync(add, delete)` is Synchronize as nri-plugins calls it (every created or running container in
  both lists): containers already placed keep their placement (re-adopted), the rest of `delete`
  is released, the rest of `add` allocated; one that cannot be placed is logged and skipped;
- `update_resources` follows kubelet's allocation manager: an in-place resize of a Guaranteed
  pod under the Static memory policy is infeasible, and no resize may change the QoS class;
- DRA memory claims are reserved by kubelet's Allocate on the claimed NUMA node (a synthetic
  Guaranteed pod per claim, `Node.admit_on`), in the same machine state as the containers.

Every call leaves the cpusets kubelet would write pending in the cache (`kubelet_updates`): the
resource manager carries them in its NRI response; after reconfiguration and DRA claims, which have
none, the backend pushes them with `Owner.update_containers()`. The backend never takes the Owner's
lock: its callers hold it (see `policy.Policy`); it has a lock of its own for Synchronize and the
readers, which run without the Owner's.

With `memoryManagerPolicy: None` the backend is `kubelet-none`: kubelet assigns no memory,
and claims are refused with `ErrNoDRAClaims`.

Configuration (a mapping): KubeletConfiguration fields by field name, plus
`stateDir` (folder of `memory_manager_state` and `claims.json`; default: `<cache folder>/kubelet`,
or memory only for a cache without folder), `driver` (the DRA driver name, default
`memory.resmgr.memorymanager.io`) and `containerZones` (bool: per-container NRT sub-zones).
"""
from __future__ import annotations

import threading
from typing import Optional, Sequence

from kubeinputs.errors import InputError, type_name
from kubeinputs.machine import MachineInfo
from memorymanager.node.api import Node
from memorymanager.resmgr import kubelet_claims, kubelet_containers, kubelet_exports, kubelet_updates
from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.claims import ClaimRecord, ClaimStore
from memorymanager.resmgr.kubelet_claims import STATIC_NAME
from memorymanager.resmgr.kubelet_placement import KubeletPlacement
from memorymanager.resmgr.kubelet_restore import BackendSettings, read_config, restore
from memorymanager.resmgr.protocols import BackendConfig, BackendOptions, Owner
from memorymanager.resmgr.types import (
    ContainerEdits,
    Device,
    DeviceRequestAllocationResult,
    ErrNoDRAClaims,
    ExtendedResources,
    PolicyArgumentError,
    PolicyError,
    ResourceClaim,
    TopologyZone,
    check_instance,
    check_str,
)
from state.types import NUMANodeState

NONE_NAME = "kubelet-none"


def _container(value: object, call: str) -> Container:
    """`value` if it is a cached-container object, else a PolicyArgumentError naming the call."""
    check_instance(value, Container, f"{call}: container")
    return value  # type: ignore[return-value]


def _containers(value: object, call: str) -> list[Container]:
    """A list of containers, else a PolicyArgumentError naming the call and the position."""
    if not isinstance(value, (list, tuple)):
        raise PolicyArgumentError(call, f"expected a list of Container, got {type_name(value)}")
    return [_container(c, f"{call}[{i}]") for i, c in enumerate(value)]


class KubeletBackend:
    """The kubelet-backed policy backend (see the module docstring): the nri-plugins Backend calls, each
    under one lock, handed to its concern (`kubelet_containers`, `kubelet_claims`, `kubelet_exports`,
    `kubelet_restore`) over the one `KubeletPlacement` of the current configuration."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._placement: Optional[KubeletPlacement] = None
        self._cache: Optional[ContainerCache] = None
        self._owner: Optional[Owner] = None
        self._system: Optional[MachineInfo] = None
        self._settings: Optional[BackendSettings] = None
        self._static = True

    # ----- identity -----

    def name(self) -> str:
        """`kubelet-static`, or `kubelet-none` under kubelet's None memory policy."""
        return STATIC_NAME if self._static else NONE_NAME

    def description(self) -> str:
        """What this backend is."""
        return ("kubelet v1.37 memory manager (Static policy), CPU manager and topology manager placement, "
                "with NUMA memory DRA claims" if self._static
                else "kubelet v1.37 memory manager with the None policy: no memory is assigned")

    # ----- setup, start and configuration (kubelet_restore) -----

    def setup(self, options: BackendOptions) -> None:
        """Take the cache, owner, machine and configuration; nothing runs until `start`."""
        with self._lock:
            if options.system is None:
                raise PolicyError(f"{STATIC_NAME}: no system (machine info) given")
            self._cache, self._owner, self._system = options.cache, options.owner, options.system
            self._use(read_config(options.config, self._cache))

    def _use(self, settings: BackendSettings) -> None:
        """Kubelet with these settings (not started), the claim records of its state folder."""
        try:
            node = Node(self._system, dict(settings.kubelet), state_dir=settings.state_dir)
        except InputError as err:
            raise PolicyError(f"{STATIC_NAME} {err}") from err
        self._settings = settings
        self._placement = KubeletPlacement(node, self._cache, self._owner, self._system,
                                           ClaimStore(settings.state_dir), settings.driver, settings.container_zones)
        self._static = self._placement.static

    @property
    def kubelet(self) -> Node:
        """Kubelet (a `memorymanager.Node`) as the backend runs it now, for reading; every change goes
        through the Backend calls."""
        return self._require().node

    def _require(self) -> KubeletPlacement:
        if self._placement is None or self._cache is None:
            raise PolicyError(f"{self.name()}: not set up")
        return self._placement

    def start(self) -> None:
        """Start kubelet from the checkpoint and re-adopt every claim and cached container (`kubelet_restore.restore`)."""
        with self._lock:
            restore(self._require())

    def reconfigure(self, config: BackendConfig) -> None:
        """Restart kubelet with the new configuration (as kubelet does: it reads its
        configuration only at start) and re-adopt everything; if kubelet refuses to start with
        it, the old configuration is kept and the refusal raised."""
        with self._lock:
            self._require()
            settings = read_config(config, self._cache)
            old = self._settings
            if settings.state_dir != old.state_dir:
                raise PolicyError(f"{self.name()}: stateDir cannot change on reconfiguration")
            if settings.state_dir is None:
                raise PolicyError(f"{self.name()}: reconfiguration needs a stateDir (kubelet restarts from its "
                                  "checkpoint; without one every placement would be lost)")
            try:
                self._use(settings)
                self.start()
            except PolicyError:
                # back to the old configuration, restarted from the same checkpoint
                self._use(old)
                self.start()
                raise
            finally:
                kubelet_updates.push(self._require())

    # ----- containers (kubelet_containers) -----

    def allocate_resources(self, container: Container) -> None:
        """Admit the container (its pod as a whole, as kubelet admits pods) and cache it with
        its memory set; kubelet's refusal is raised as PolicyError."""
        container = _container(container, "allocate_resources")
        with self._lock:
            kubelet_containers.allocate(self._require(), container)

    def release_resources(self, container: Container) -> None:
        """kubelet's RemoveContainer for this container (idempotent); the pod is removed when
        none of its containers is cached any more.

        The memory belongs to (pod UID, container name), held by the latest container cached
        under them: releasing an older container ID (one a restart replaced) releases nothing,
        and releasing the owner also forgets the IDs it replaced. A container whose pod UID is
        in the claims' key space never held memory: releasing it releases no claim."""
        container = _container(container, "release_resources")
        with self._lock:
            kubelet_containers.release(self._require(), container)

    def sync(self, add: Sequence[Container], delete: Sequence[Container]) -> None:
        """Synchronize (`kubelet_containers.sync`): containers already placed keep their placement, the rest
        of `delete` is released, the rest of `add` allocated; one that cannot be placed is logged and
        skipped, and Sync succeeds. Only arguments of the wrong type raise."""
        add, delete = _containers(add, "sync: add"), _containers(delete, "sync: delete")
        with self._lock:
            kubelet_containers.sync(self._require(), add, delete)

    def update_resources(self, container: Container) -> None:
        """An in-place resize, as kubelet's allocation manager decides it: unchanged resources
        are accepted; without the InPlacePodVerticalScaling gate nothing is resized; a resize
        that changes the QoS class is refused; a Guaranteed pod under the Static policy is
        refused as infeasible (upstream skips that check only with InPlacePodVerticalScalingExclusiveCPUs,
        a gate this project does not know, so it always applies); other pods (which hold no
        exclusive memory) are accepted and cached with their new resources."""
        container = _container(container, "update_resources")
        with self._lock:
            kubelet_containers.update(self._require(), container)

    def container_started(self, container: Container) -> None:
        """Mark the cached container as started."""
        container = _container(container, "container_started")
        with self._lock:
            kubelet_containers.started(self._require(), container)

    # ----- exports and zones (kubelet_exports) -----

    def export_resource_data(self, container: Container) -> dict[str, str]:
        """`EXCLUSIVE_CPUS` (the container's exclusive CPUs) or `SHARED_CPUS` (the shared pool, for a container
        requesting CPU), as topology-aware exports them; `MEMS`: the container's cpuset.mems (when kubelet sets
        one); `CLAIMED_MEMS`: the NUMA nodes of the memory claims it uses (when any). The last two are
        extensions of the seed's list."""
        container = _container(container, "export_resource_data")
        with self._lock:
            return kubelet_exports.export_resource_data(self._require(), container)

    def machine_state(self) -> dict[int, NUMANodeState]:
        """A copy of the memory manager's machine state (per NUMA node)."""
        with self._lock:
            return self._require().node.machine_state()

    def memsets(self) -> list[list[int]]:
        """The memory set of every cached container."""
        with self._lock:
            return kubelet_exports.memsets(self._require())

    def cpu_ids(self) -> list[int]:
        """Every CPU of the machine (the CPU manager's topology)."""
        with self._lock:
            return self._require().all_cpus().list()

    def cpu_allocations(self) -> list[tuple[list[int], int]]:
        """Every cached container's cpuset.cpus and CPU request in milli-CPU."""
        with self._lock:
            return kubelet_exports.cpu_allocations(self._require())

    def get_topology_zones(self) -> list[TopologyZone]:
        """One zone per NUMA node (`memory set`, and the CPU attributes under the static CPU policy);
        per-container sub-zones when `containerZones` is on."""
        with self._lock:
            return kubelet_exports.topology_zones(self._require())

    def get_extended_resources(self) -> ExtendedResources:
        """Nothing: kubelet publishes memory and hugepages itself; this backend owns no
        extended resource."""
        return {}

    # ----- DRA claims (kubelet_claims) -----

    def devices(self) -> list[Device]:
        """One device per NUMA node with allocatable regular memory (hugepages are not claimable:
        the Static policy reserves only for Guaranteed pods, which need regular memory)."""
        return kubelet_claims.devices(self._require())

    def allocate_claim(self, claim: ResourceClaim,
                       results: Sequence[DeviceRequestAllocationResult]) -> list[ContainerEdits]:
        """Reserve the claim's memory (idempotent by claim UID), persist its record, and return
        one `CLAIMED_MEMS=<the claim's NUMA nodes>` edit per result; a claim without results is refused.
        Any container change it causes is pushed with `Owner.update_containers()` (the caller holds the lock)."""
        with self._lock:
            if not self._static:
                raise ErrNoDRAClaims
            placement = self._require()
            kubelet_claims.check_claim_arguments(claim, results)
            try:
                return kubelet_claims.allocate_claim(placement, claim, results)
            finally:
                kubelet_updates.follow(placement)
                kubelet_updates.push(placement)

    def release_claim(self, uid: str) -> None:
        """Free a claim's reservation and forget its record (unknown or released twice: fine)."""
        check_str(uid, "release_claim: uid")
        with self._lock:
            if not self._static:
                raise ErrNoDRAClaims
            placement = self._require()
            kubelet_claims.release_claim(placement, uid)
            kubelet_updates.follow(placement)
            kubelet_updates.push(placement)

    def claim_records(self) -> list[ClaimRecord]:
        """Every claim the backend holds."""
        with self._lock:
            return self._placement.claims.records() if self._placement is not None else []


def new_kubelet_backend() -> KubeletBackend:
    """The seed's CreateFn for this backend."""
    return KubeletBackend()
