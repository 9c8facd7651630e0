"""`kubelet-static`: kubelet's exact memory placement behind the nri-plugins Backend interface.

Every placement decision is the existing memory manager's and topology manager's, driven
through `memorymanager.Node` with the backend's KubeletConfiguration fields:

- `allocate_resources` admits the container's pod exactly as kubelet does (the whole pod, at
  its first container; a refusal is a PolicyError with kubelet's reason and message);
- `release_resources` is kubelet's RemoveContainer (idempotent); the pod stops being active
  when its last cached container goes;
- `sync(add, delete)` releases `delete`, then re-adopts the containers of `add` the restored
  state already places and allocates the others;
- `update_resources` follows kubelet's allocation manager: an in-place resize of a Guaranteed
  pod under the Static memory policy is infeasible, and no resize may change the QoS class;
- DRA memory claims are reserved by kubelet's Allocate on the claimed NUMA node (a synthetic
  Guaranteed pod per claim, `Node.admit_on`), in the same machine state as the containers.

With `memoryManagerPolicy: None` the backend is `kubelet-none`: kubelet assigns no memory,
and claims are refused with `ErrNoDRAClaims`.

Configuration (a mapping): KubeletConfiguration fields by field name, plus
`stateDir` (folder of `memory_manager_state` and `claims.json`; default: `<cache folder>/kubelet`,
or memory only for a cache without folder), `driver` (the DRA driver name, default
`memory.resmgr.memorymanager.io`) and `containerZones` (bool: per-container NRT sub-zones).
"""
from __future__ import annotations

import os
import re
import threading
from kubeinputs.features import IN_PLACE_POD_VERTICAL_SCALING_GATE
from typing import Mapping, Optional, Sequence

from kubeinputs.cpuset import cpuset_string
from kubeinputs.errors import InputError, brief, describe, type_name
from kubeinputs.features import FeatureGates
from kubeinputs.kubelet_config import parse_kubelet_config
from kubeinputs.machine import MachineInfo
from kubeinputs.pod import Pod
from kubeinputs.quantity import BINARY_SI, Quantity, QuantityError, parse_quantity
from kubeinputs.qos import GUARANTEED

from memorymanager.node.api import Node, read_pod
from state.types import Block, NUMANodeState
from memorymanager.node.simulated_node import KubeletStartError
from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.claims import ClaimAllocation, ClaimRecord, ClaimStore
from memorymanager.resmgr.protocols import BackendConfig, BackendOptions, Owner
from memorymanager.resmgr.types import (
    CLAIMED_MEMS,
    MEMS,
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
from memorymanager.resmgr.zones import numa_zones

STATIC_NAME = "kubelet-static"
NONE_NAME = "kubelet-none"
DEFAULT_DRIVER = "memory.resmgr.memorymanager.io"
NUMA_NODE_ATTRIBUTE = "resource.kubernetes.io/numaNode"
MEMORY_TYPE_ATTRIBUTE = "memoryType"
DISTANCES_ATTRIBUTE = "distances"
CLAIM_RESOURCE = "memory"
CLAIM_POD_PREFIX = "dra-claim-"
BACKEND_KEYS = ("stateDir", "driver", "containerZones")
CONFIG_PARAMETERS = ("size",)
RESIZE_INFEASIBLE = "Resize is infeasible for Guaranteed Pods alongside Memory Manager static policy"
RESIZE_QOS = "Pod QOS Class may not change as a result of resizing"
_DEVICE = re.compile(r"^memory-numa(0|[1-9][0-9]{0,9})$")  # the names device_name gives


def device_name(numa_node: int) -> str:
    """The DRA device of the regular memory of one NUMA node."""
    return f"memory-numa{numa_node}"


def claim_pod_uid(claim_uid: str) -> str:
    """The UID of the synthetic pod holding a claim's memory in the memory manager's state."""
    return CLAIM_POD_PREFIX + claim_uid


def _gib(size: int) -> str:
    return str(Quantity.from_int(size, BINARY_SI))


def is_claim_pod_uid(pod_uid: str) -> bool:
    """Whether a pod UID is in the claims' key space (no container's pod may have one)."""
    return pod_uid.startswith(CLAIM_POD_PREFIX)


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
    """The kubelet-backed policy backend (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._node: Optional[Node] = None
        self._cache: Optional[ContainerCache] = None
        self._owner: Optional[Owner] = None
        self._system: Optional[MachineInfo] = None
        self._config: dict[str, object] = {}
        self._state_dir: Optional[str] = None
        self._driver = DEFAULT_DRIVER
        self._container_zones = False
        self._claims = ClaimStore(None)
        self._static = True

    # ----- identity -----

    def name(self) -> str:
        """`kubelet-static`, or `kubelet-none` under kubelet's None memory policy."""
        return STATIC_NAME if self._static else NONE_NAME

    def description(self) -> str:
        """What this backend is."""
        return ("kubelet v1.37 memory manager (Static policy) and topology manager placement, "
                "with NUMA memory DRA claims" if self._static
                else "kubelet v1.37 memory manager with the None policy: no memory is assigned")

    # ----- setup and configuration -----

    def _read_config(self, config: BackendConfig) -> tuple[dict[str, object], Optional[str], str, bool]:
        if not isinstance(config, Mapping):
            raise PolicyError(f"{STATIC_NAME} config: expected a map of KubeletConfiguration fields, got {type(config).__name__}")
        kubelet = {k: v for k, v in config.items() if k not in BACKEND_KEYS}
        state_dir = config.get("stateDir")
        if state_dir is None and self._cache is not None and self._cache.directory is not None:
            state_dir = os.path.join(self._cache.directory, "kubelet")
        if state_dir is not None and not isinstance(state_dir, str):
            raise PolicyError(f"{STATIC_NAME} config: stateDir: expected a folder path, got {state_dir!r}")
        driver = config.get("driver", DEFAULT_DRIVER)
        if not isinstance(driver, str) or not driver:
            raise PolicyError(f"{STATIC_NAME} config: driver: expected a DRA driver name, got {driver!r}")
        zones = config.get("containerZones", False)
        if not isinstance(zones, bool):
            raise PolicyError(f"{STATIC_NAME} config: containerZones: expected true or false, got {zones!r}")
        try:
            parse_kubelet_config(dict(kubelet), "config")
        except InputError as err:
            raise PolicyError(f"{STATIC_NAME} {err}") from err
        return kubelet, state_dir, driver, zones

    def setup(self, options: BackendOptions) -> None:
        """Take the cache, owner, machine and configuration; nothing runs until `start`."""
        with self._lock:
            if options.system is None:
                raise PolicyError(f"{STATIC_NAME}: no system (machine info) given")
            self._cache, self._owner, self._system = options.cache, options.owner, options.system
            kubelet, self._state_dir, self._driver, self._container_zones = self._read_config(options.config)
            self._config = kubelet
            self._node = self._new_node(kubelet)
            self._static = self._node.kubelet.memory_manager_policy == "Static"
            self._claims = ClaimStore(self._state_dir)

    def _new_node(self, kubelet: Mapping[str, object]) -> Node:
        try:
            return Node(self._system, dict(kubelet), state_dir=self._state_dir)
        except InputError as err:
            raise PolicyError(f"{STATIC_NAME} {err}") from err

    def _require(self) -> tuple[Node, ContainerCache]:
        if self._node is None or self._cache is None:
            raise PolicyError(f"{self.name()}: not set up")
        return self._node, self._cache

    def start(self) -> None:
        """Start kubelet's managers from the checkpoint, read the claim records back, re-adopt
        every claim and cached container (all active before anything is placed, so none of
        the restored memory is dropped as stale), reserve again any claim the checkpoint lost
        (the checkpoint written once for all of them: 2,000 lost claims were 2,000 whole writes),
        and publish the DRA devices."""
        with self._lock:
            node, cache = self._require()
            try:
                node.start()
            except KubeletStartError as err:
                raise PolicyError(f"kubelet refused to start: {err}") from err
            self._claims.load()
            for c in cache:
                if is_claim_pod_uid(c.pod_uid):
                    raise PolicyError(f"container cache {cache.path}: container {c.id!r}: pod UID {c.pod_uid!r} "
                                      f"is in the DRA claims' key space (UIDs starting with {CLAIM_POD_PREFIX!r})")
            records = self._claims.records() if self._static else []
            pods = [self._claim_pod(r) for r in records]
            pods += self._cached_pods(cache)
            node.adopt(pods)
            with node.simulated_node.memory_manager.deferred_writes():
                for record in records:
                    if not self._claim_held(record):
                        self._reserve(record)
            self._refresh_memsets()
            self._publish_devices()

    def reconfigure(self, config: BackendConfig) -> None:
        """Restart kubelet with the new configuration (as kubelet does: it reads its
        configuration only at start) and re-adopt everything; if kubelet refuses to start with
        it, the old configuration is kept and the refusal raised."""
        with self._lock:
            self._require()
            kubelet, state_dir, driver, zones = self._read_config(config)
            if state_dir != self._state_dir:
                raise PolicyError(f"{self.name()}: stateDir cannot change on reconfiguration")
            if state_dir is None:
                raise PolicyError(f"{self.name()}: reconfiguration needs a stateDir (kubelet restarts from its "
                                  "checkpoint; without one every placement would be lost)")
            old = (self._config, self._driver, self._container_zones)
            try:
                self._use(self._new_node(kubelet), kubelet, driver, zones)
                self.start()
            except PolicyError:
                # back to the old configuration, restarted from the same checkpoint
                self._use(self._new_node(old[0]), *old)
                self.start()
                raise

    def _use(self, node: Node, kubelet: dict[str, object], driver: str, zones: bool) -> None:
        self._node, self._config, self._driver, self._container_zones = node, kubelet, driver, zones
        self._static = node.kubelet.memory_manager_policy == "Static"

    # ----- containers -----

    def _cached_pods(self, cache: ContainerCache) -> list[Pod]:
        pods: dict[str, Pod] = {}
        for c in cache:
            pods.setdefault(c.pod_uid, c.parsed_pod())
        return list(pods.values())

    def _blocks(self, pod_uid: str, name: str) -> Optional[list[Block]]:
        node, _ = self._require()
        return node.simulated_node.memory_manager.get_memory(pod_uid, name)

    def _memset(self, pod_uid: str, name: str) -> list[int]:
        nodes: set[int] = set()
        for block in self._blocks(pod_uid, name) or []:
            nodes.update(block.numa_affinity or [])
        return sorted(nodes)

    def _container_memset(self, container: Container) -> list[int]:
        """A container's memory set: its (pod UID, name)'s blocks, never a claim's."""
        if is_claim_pod_uid(container.pod_uid):
            return []
        return self._memset(container.pod_uid, container.name)

    def _refresh_memsets(self) -> None:
        _, cache = self._require()
        for c in cache:
            mems = cpuset_string(self._container_memset(c))
            if mems != c.memset:
                c.memset = mems
                cache.insert(c)

    @staticmethod
    def _holder_id(cache: ContainerCache, pod_uid: str, name: str) -> Optional[str]:
        """The ID of the container that owns the memory of (pod UID, container name): the latest one
        cached (a restarted container comes back under a new ID and takes the assignment over;
        kubelet keys the memory by pod UID and container name, never by container ID)."""
        owner = None
        for c in cache:
            if c.name == name and c.pod_uid == pod_uid:
                owner = c.id
        return owner

    def _active(self, pod_uid: str) -> bool:
        node, _ = self._require()
        return node.simulated_node.is_active(pod_uid)

    @staticmethod
    def _refuse_claim_key(container: Container) -> None:
        """Containers and claims do not share a key space: a pod UID of the claims' is refused."""
        if is_claim_pod_uid(container.pod_uid):
            raise PolicyError(f"{container.pretty_name()}: pod UID {container.pod_uid!r} is reserved for DRA claims "
                              f"(UIDs starting with {CLAIM_POD_PREFIX!r})")

    def _admit(self, container: Container) -> None:
        """Admit the container's pod as kubelet does (unless the container is already placed)."""
        node, _ = self._require()
        pod = container.parsed_pod()
        self._refuse_claim_key(container)
        if self._active(pod.uid):
            if self._blocks(pod.uid, container.name) is not None or not self._static:
                return
            trial = node.would_admit(pod)  # a running pod: a refusal must not make it inactive
            if not trial.admitted:
                raise PolicyError(f"{container.pretty_name()}: {trial.reason}: {trial.message}")
        answer = node.admit(pod)
        if not answer.admitted:
            raise PolicyError(f"{container.pretty_name()}: {answer.reason}: {answer.message}")

    def allocate_resources(self, container: Container) -> None:
        """Admit the container (its pod as a whole, as kubelet admits pods) and cache it with
        its memory set; kubelet's refusal is raised as PolicyError."""
        container = _container(container, "allocate_resources")
        with self._lock:
            _, cache = self._require()
            self._admit(container)
            container.memset = cpuset_string(self._container_memset(container))
            cache.insert(container)  # a new ID goes last: the owner of its (pod UID, name) from now on

    def release_resources(self, container: Container) -> None:
        """kubelet's RemoveContainer for this container (idempotent); the pod is removed when
        none of its containers is cached any more.

        The memory belongs to (pod UID, container name), held by the latest container cached
        under them: releasing an older container ID (one a restart replaced) releases nothing,
        and releasing the owner also forgets the IDs it replaced. A container whose pod UID is
        in the claims' key space never held memory: releasing it releases no claim."""
        container = _container(container, "release_resources")
        with self._lock:
            node, cache = self._require()
            pod = container.parsed_pod()
            holder = self._holder_id(cache, pod.uid, container.name)
            cache.delete(container.id)
            if is_claim_pod_uid(pod.uid) or not self._active(pod.uid):
                return
            if holder is not None and holder != container.id:
                return  # a replaced ID: the memory is its successor's
            for c in cache:
                if c.pod_uid == pod.uid and c.name == container.name:
                    cache.delete(c.id)
            node.simulated_node.remove_container_ids([f"{pod.uid}/{container.name}"])
            if not any(c.pod_uid == pod.uid for c in cache):
                node.simulated_node.remove(node.simulated_node.active_pod(pod.uid))

    def sync(self, add: Sequence[Container], delete: Sequence[Container]) -> None:
        """Release `delete`; re-adopt the containers of `add` already placed; allocate the rest."""
        add, delete = _containers(add, "sync: add"), _containers(delete, "sync: delete")
        with self._lock:
            node, cache = self._require()
            for c in delete:
                self.release_resources(c)
            errors = []
            placed = []
            for c in add:
                if is_claim_pod_uid(c.pod_uid):
                    try:
                        self._refuse_claim_key(c)
                    except PolicyError as err:
                        errors.append(str(err))
                elif self._blocks(c.pod_uid, c.name) is not None:
                    placed.append(c)
            node.adopt([c.parsed_pod() for c in placed if not self._active(c.pod_uid)])
            for c in placed:
                c.memset = cpuset_string(self._memset(c.pod_uid, c.name))
                cache.insert(c)
            for c in add:
                if c in placed or is_claim_pod_uid(c.pod_uid):
                    continue
                try:
                    self.allocate_resources(c)
                except PolicyError as err:
                    errors.append(str(err))
            if errors:
                raise PolicyError("; ".join(errors))

    def update_resources(self, container: Container) -> None:
        """An in-place resize, as kubelet's allocation manager decides it: unchanged resources
        are accepted; without the InPlacePodVerticalScaling gate nothing is resized; a resize
        that changes the QoS class is refused; a Guaranteed pod under the Static policy is
        refused as infeasible (upstream skips that check only with InPlacePodVerticalScalingExclusiveCPUs,
        a gate this project does not know, so it always applies); other pods (which hold no
        exclusive memory) are accepted and cached with their new resources."""
        container = _container(container, "update_resources")
        with self._lock:
            _, cache = self._require()
            old = cache.lookup(container.id)
            if old is None:
                raise PolicyError(f"{container.pretty_name()}: unknown container {container.id!r}")
            if old.resources == container.resources:
                return
            gates = FeatureGates.from_config(self._require()[0].kubelet.feature_gates)
            if not gates.enabled(IN_PLACE_POD_VERTICAL_SCALING_GATE):
                raise PolicyError(f"{container.pretty_name()}: in-place resize is disabled "
                                  "(feature gate InPlacePodVerticalScaling is off)")
            if old.qos_class != container.qos_class:
                raise PolicyError(f"{container.pretty_name()}: {RESIZE_QOS}")
            if self._static and container.qos_class == GUARANTEED:
                raise PolicyError(f"{container.pretty_name()}: Infeasible: {RESIZE_INFEASIBLE}")
            container.memset, container.started = old.memset, old.started
            cache.insert(container)

    def container_started(self, container: Container) -> None:
        """Mark the cached container as started."""
        container = _container(container, "container_started")
        with self._lock:
            _, cache = self._require()
            cached = cache.lookup(container.id)
            if cached is None:
                raise PolicyError(f"{container.pretty_name()}: unknown container {container.id!r}")
            cached.started = True
            container.started = True
            cache.insert(cached)

    def export_resource_data(self, container: Container) -> dict[str, str]:
        """`MEMS`: the container's cpuset.mems (when kubelet sets one); `CLAIMED_MEMS`: the NUMA
        nodes of the memory claims it uses (when any). Both are extensions of the seed's list."""
        container = _container(container, "export_resource_data")
        with self._lock:
            data: dict[str, str] = {}
            mems = self._container_memset(container)
            if mems:
                data[MEMS] = cpuset_string(mems)
            claimed: set[int] = set()
            for uid in container.claims:
                record = self._claims.get(uid)
                if record is not None:
                    claimed.update(record.numa_nodes())
            if claimed:
                data[CLAIMED_MEMS] = cpuset_string(claimed)
            return data

    # ----- node-level exports -----

    def machine_state(self) -> dict[int, NUMANodeState]:
        """A copy of the memory manager's machine state (per NUMA node)."""
        with self._lock:
            node, _ = self._require()
            return node.machine_state()

    def memsets(self) -> list[list[int]]:
        """The memory set of every cached container."""
        with self._lock:
            _, cache = self._require()
            return [self._container_memset(c) for c in cache]

    def get_topology_zones(self) -> list[TopologyZone]:
        """One zone per NUMA node (`memory set` attribute); per-container sub-zones when
        `containerZones` is on."""
        with self._lock:
            _, cache = self._require()
            subzones = []
            if self._container_zones:
                for c in cache:
                    memory: dict[str, int] = {}
                    for block in self._blocks(c.pod_uid, c.name) or []:
                        memory[block.type] = memory.get(block.type, 0) + block.size
                    subzones.append((c.pretty_name(), self._container_memset(c), memory))
            return numa_zones(self.machine_state(), subzones)

    def get_extended_resources(self) -> ExtendedResources:
        """Nothing: kubelet publishes memory and hugepages itself; this backend owns no
        extended resource."""
        return {}

    # ----- DRA claims -----

    def devices(self) -> list[Device]:
        """One device per NUMA node with allocatable regular memory (hugepages are not claimable:
        the Static policy reserves only for Guaranteed pods, which need regular memory)."""
        node, _ = self._require()
        lists = self._owner.dra_list_attributes_supported() if self._owner is not None else False
        distances = {n.node_id: n.distances for n in node.machine.topology}
        devices = []
        for numa, resources in sorted(node.allocatable().items()):
            size = resources.get(CLAIM_RESOURCE, 0)
            if size <= 0:
                continue
            attributes: dict[str, object] = {NUMA_NODE_ATTRIBUTE: numa, MEMORY_TYPE_ATTRIBUTE: CLAIM_RESOURCE}
            if lists and distances.get(numa):
                attributes[DISTANCES_ATTRIBUTE] = tuple(distances[numa] or ())
            devices.append(Device(device_name(numa), attributes, {"size": Quantity.from_int(size, BINARY_SI)}))
        return devices

    def _publish_devices(self) -> None:
        if self._owner is not None and self._static:
            self._owner.publish_dra_devices(self.devices())

    def _claim_pod(self, record: ClaimRecord) -> Pod:
        """The synthetic Guaranteed pod holding a claim: one container per result, requesting
        the result's memory (and 1m CPU, which only makes the pod Guaranteed)."""
        containers = [{"name": f"result-{i}", "resources": {"limits": {"cpu": "1m", "memory": str(a.size)}}}
                      for i, a in enumerate(record.allocations)]
        return read_pod({"metadata": {"name": f"claim-{record.uid}", "uid": claim_pod_uid(record.uid),
                                      "namespace": record.namespace}, "spec": {"containers": containers}})

    def _claim_held(self, record: ClaimRecord) -> bool:
        uid = claim_pod_uid(record.uid)
        return all(self._memset(uid, f"result-{i}") == [a.numa_node] for i, a in enumerate(record.allocations))

    def _holders(self, numa: int, resource: str) -> list[str]:
        """Who holds `resource` on NUMA node `numa` (claims and containers, with their sizes), for messages."""
        node, _ = self._require()
        out = []
        for pod_uid, containers in sorted(node.simulated_node.state().get_memory_assignments().items()):
            for name, blocks in sorted((containers or {}).items()):
                mine = [b for b in blocks or [] if b.type == resource and numa in (b.numa_affinity or [])]
                size = sum(b.size for b in mine)
                if size == 0:
                    continue
                spans = sorted({n for b in mine for n in (b.numa_affinity or [])})
                where = "" if spans == [numa] else f" on NUMA nodes {cpuset_string(spans)}"
                if pod_uid.startswith(CLAIM_POD_PREFIX):
                    claim_uid = pod_uid[len(CLAIM_POD_PREFIX):]
                    record = self._claims.get(claim_uid)
                    label = record.pretty_name if record else f"claim {claim_uid}"
                else:
                    pod = node.simulated_node.find_pod(pod_uid)
                    label = f"container {pod.namespace}/{pod.name}/{name}" if pod else f"container {pod_uid}/{name}"
                out.append(f"{label} ({_gib(size)}{where})")
        return out

    def _reserve(self, record: ClaimRecord) -> None:
        """Reserve a claim's memory on its NUMA nodes through kubelet's Allocate, or refuse
        naming what holds the memory."""
        node, _ = self._require()
        state = node.machine_state()
        need: dict[int, int] = {}
        for a in record.allocations:
            need[a.numa_node] = need.get(a.numa_node, 0) + a.size
        for numa, size in sorted(need.items()):
            if numa not in state:
                raise PolicyError(f"{record.pretty_name}: NUMA node {numa} does not exist on this node")
            table = (state[numa].memory_map or {}).get(CLAIM_RESOURCE)
            free = table.free if table is not None else 0
            cells = sorted(state[numa].cells or [numa])
            if size > free or cells != [numa]:
                why = (f"needs {_gib(size)} of {CLAIM_RESOURCE} on NUMA node {numa}, which has {_gib(free)} free"
                       if size > free else
                       f"needs {CLAIM_RESOURCE} on NUMA node {numa} alone, but the node is in the NUMA group {cpuset_string(cells)}")
                holders = self._holders(numa, CLAIM_RESOURCE)
                held = f"; held by {', '.join(holders)}" if holders else ""
                raise PolicyError(f"{record.pretty_name} {why}{held}")
        pod = self._claim_pod(record)
        answer = node.admit_on(pod, {f"result-{i}": [a.numa_node] for i, a in enumerate(record.allocations)})
        if not answer.admitted:
            raise PolicyError(f"{record.pretty_name}: {answer.reason}: {answer.message}")
        if not self._claim_held(record):  # kubelet widened a mask: never hand out other nodes
            node.simulated_node.remove(node.simulated_node.active_pod(pod.uid))
            raise PolicyError(f"{record.pretty_name}: kubelet would not place the memory on the claimed NUMA nodes")

    def _size(self, claim: ResourceClaim, result: DeviceRequestAllocationResult, where: str) -> int:
        """The bytes a result asks for: its claim config's `size`, else its consumed `size` capacity."""
        value: object = None
        for config in claim.configs:
            if config.driver == self._driver and (not config.requests or result.request in config.requests):
                if "size" in config.parameters:
                    value = config.parameters["size"]
        if value is None:
            value = result.consumed_capacity.get("size")
        if value is None:
            raise PolicyError(f"{where}: no size: set a config parameter \"size\" or consume the device's \"size\" capacity")
        try:
            q = value if isinstance(value, Quantity) else parse_quantity(value)  # type: ignore[arg-type]
            size = q.as_int64()
        except (QuantityError, ValueError, TypeError) as err:
            raise PolicyError(f"{where}: size {value!r} is not a whole number of bytes ({err})") from err
        if size <= 0:
            raise PolicyError(f"{where}: size must be positive, got {value!r}")
        return size

    def allocate_claim(self, claim: ResourceClaim,
                       results: Sequence[DeviceRequestAllocationResult]) -> list[ContainerEdits]:
        """Reserve the claim's memory (idempotent by claim UID), persist its record, and return
        one `CLAIMED_MEMS=<the claim's NUMA nodes>` edit per result."""
        with self._lock:
            if not self._static:
                raise ErrNoDRAClaims
            self._require()
            if not isinstance(claim, ResourceClaim) or not isinstance(claim.uid, str) or not claim.uid:
                raise PolicyArgumentError("allocate_claim: claim", f"expected a ResourceClaim with a UID, got "
                                          f"{describe(claim)}")
            if not isinstance(results, (list, tuple)):
                raise PolicyArgumentError("allocate_claim: results", "expected a list of DeviceRequestAllocationResult, "
                                          f"got {describe(results)}")
            for i, item in enumerate(results):
                if not isinstance(item, DeviceRequestAllocationResult):
                    raise PolicyArgumentError(f"claim {claim.uid}: results[{i}]", "expected a DeviceRequestAllocationResult, "
                                              f"got {describe(item)}")
            known = self._claims.get(claim.uid)
            if known is not None:
                return list(known.edits)
            label = f"claim {claim.namespace}/{claim.name} ({claim.uid})" if claim.name else f"claim {claim.uid}"
            for config in claim.configs:
                if config.driver == self._driver:
                    unknown = sorted(set(config.parameters) - set(CONFIG_PARAMETERS))
                    if unknown:
                        raise PolicyError(f"{label}: config parameters the {STATIC_NAME} policy does not take: "
                                          f"{', '.join(unknown)} (it takes: {', '.join(CONFIG_PARAMETERS)})")
            allocations = []
            for i, result in enumerate(results):
                where = f"{label}: results[{i}] (request {brief(result.request)}, device {brief(result.device)})"
                if result.driver != self._driver:
                    raise PolicyError(f"{where}: driver {result.driver!r} is not this policy's ({self._driver!r})")
                m = _DEVICE.fullmatch(result.device)
                if m is None:
                    raise PolicyError(f"{where}: no such device (devices are memory-numa<N>)")
                allocations.append(ClaimAllocation(result.request, result.device, int(m.group(1)), CLAIM_RESOURCE,
                                                   self._size(claim, result, where)))
            nodes = cpuset_string({a.numa_node for a in allocations})
            edits = tuple(ContainerEdits((f"{CLAIMED_MEMS}={nodes}",)) for _ in allocations)
            record = ClaimRecord(claim.uid, claim.name, claim.namespace, tuple(allocations), edits)
            if allocations:
                self._reserve(record)
            try:
                self._claims.put(record)
            except PolicyError:
                self.release_claim(claim.uid)
                raise
            return list(edits)

    def release_claim(self, uid: str) -> None:
        """Free a claim's reservation and forget its record (unknown or released twice: fine)."""
        check_str(uid, "release_claim: uid")
        with self._lock:
            if not self._static:
                raise ErrNoDRAClaims
            node, _ = self._require()
            pod = node.simulated_node.active_pod(claim_pod_uid(uid))
            if pod is not None:
                node.simulated_node.remove(pod)
            self._claims.remove(uid)

    def claim_records(self) -> list[ClaimRecord]:
        """Every claim the backend holds."""
        with self._lock:
            return self._claims.records()


def new_kubelet_backend() -> KubeletBackend:
    """The seed's CreateFn for this backend."""
    return KubeletBackend()
