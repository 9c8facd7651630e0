"""Kubelet's PodResources API (`v1.PodResourcesLister`, `v1alpha1.PodResourcesLister`) for a
simulated node, with kubelet v1.37's semantics:

- `List` reports the active pods; per pod, restartable init containers (sidecars) first, then
  app containers, regular init containers left out; per container:
  - `memory`: one `ContainerMemory` per memory-manager block (type, the block's whole size, its
    NUMA nodes ascending); under the None policy there are no blocks, so memory lists are empty;
  - `cpu_ids`: the CPU manager's exclusive CPUs (kubelet's GetCPUs reads GetExclusiveCPUs), so a
    container in the shared pool, and every container under the `none` policy, reports none;
  - `devices`: the device manager's devices as kubelet lists them: one entry per device and NUMA
    node, with that node as its topology, and one entry without `topology` for a device whose
    plugin gave none.
  Per pod, `cpu_ids` and `memory` hold the pod-level exclusive CPUs and blocks, which exist only
  with pod-level resource managers (`PodLevelResourceManagers`); otherwise they are empty.
- `GetAllocatableResources` answers what was computed at start: the memory manager's allocatable
  memory (one block per NUMA node and memory type with something allocatable), the CPU
  manager's allocatable CPUs (all CPUs minus the reserved ones under `static`, none under
  `none`), and the healthy devices of every registered plugin (entries as in `List`).
- `Get` is behind the `KubeletPodResourcesGet` gate (beta, on by default since 1.34); kubelet
  answers a plain Go error, which gRPC sends with code UNKNOWN: `PodResources API Get method
  disabled`, or `pod NAME in namespace NS not found`. It reads the pod manager (GetPodByName),
  not the active pods: a pod refused at admission is still there (as a Failed pod, until it is
  deleted), so `Get` answers it, with whatever memory the manager holds for it (none), while
  `List` leaves it out.
- A kubelet that failed to start (a `Restart` with a bad configuration) serves nothing: every
  method answers UNAVAILABLE `kubelet is not running: <the start error>`.
- A token bucket (100 calls/s, burst 10, kubelet's defaults) guards the PodResources methods;
  a call over the limit gets RESOURCE_EXHAUSTED `rejected by rate limit`.
- Each call the limit lets through is reported to the servicer's observer (kubelet's
  PodResources metrics, `metrics.KubeletMetrics`): on entry, and again when it answers an error.
- The answers come from the snapshot the node published after its last change
  (`snapshot.SnapshotReader`: a `NodeHost`, or the server's side of a node in its own process),
  which carries the refused pods and the start error too; no call waits for a control request.

`ProviderData` (the `--providers` file of `serve`) adds hand-written CPU ids and devices after
the managers' own. Lists are given in a stable order (CPU ids ascending, resources by name, device
IDs ascending in `List`, in the plugin's order in `GetAllocatableResources`) where kubelet's come
from Go maps in no fixed order.
"""
from __future__ import annotations

import threading
import time
from kubeinputs.features import KUBELET_POD_RESOURCES_GET_GATE
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Protocol

import grpc

from kubeinputs.errors import InputError, expect_map, index_path, join_path
from memorymanager.node.simulated_node import KubeletStartError
from memorymanager.server import DEFAULT_SOCKET  # noqa: F401 (re-exported)
from memorymanager.server.host import PodView, not_running_message
from memorymanager.server.snapshot import Allocatable, DeviceEntry, SnapshotReader
from memorymanager.server.status import status_message
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc
from memorymanager.server.protos.v1alpha1 import api_pb2 as v1alpha1
from memorymanager.server.protos.v1alpha1 import api_pb2_grpc as v1alpha1_grpc
from state.types import Block

DEFAULT_QPS = 100.0
DEFAULT_BURST = 10
RATE_LIMIT_MESSAGE = "rejected by rate limit"
GET_DISABLED_MESSAGE = "PodResources API Get method disabled"


class TokenBucket:
    """golang.org/x/time/rate's Allow(): `qps` tokens per second, at most `burst` stored;
    the bucket starts full."""

    def __init__(self, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def allow(self) -> bool:
        """Take a token if there is one."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False


# ----- other providers' data (CPU ids, devices) ---------------------------------------------------


Device = DeviceEntry
"""One device entry: resource name, device IDs, NUMA nodes (None: no topology); the snapshot's `DeviceEntry`."""


@dataclass
class ProviderData:
    """CPU ids and devices given by the user (`serve --providers`), reported beside what the node's CPU
    and device managers hold (after them).

    Containers are keyed `namespace/pod/container`.
    """

    allocatable_cpus: list[int] = field(default_factory=list)
    container_cpus: dict[str, list[int]] = field(default_factory=dict)
    allocatable_devices: list[Device] = field(default_factory=list)
    container_devices: dict[str, list[Device]] = field(default_factory=dict)

    def cpus(self, namespace: str, pod: str, container: str) -> list[int]:
        return list(self.container_cpus.get(f"{namespace}/{pod}/{container}", []))

    def devices(self, namespace: str, pod: str, container: str) -> list[Device]:
        return list(self.container_devices.get(f"{namespace}/{pod}/{container}", []))


def _int_list(value: Any, where: str) -> list[int]:
    if not isinstance(value, list):
        raise InputError(where, "expected a list of integers")
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or item < 0:
            raise InputError(index_path(where, i), "expected a non-negative integer")
    return list(value)


def _device(value: Any, where: str) -> Device:
    value = expect_map(value, where, "a device {resourceName, deviceIds, numaNodes}")
    unknown = set(value) - {"resourceName", "deviceIds", "numaNodes"}
    if unknown:
        raise InputError(join_path(where, sorted(unknown)[0]), "unknown key")
    name = value.get("resourceName")
    if not isinstance(name, str) or not name:
        raise InputError(join_path(where, "resourceName"), "expected a resource name")
    ids = value.get("deviceIds", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InputError(join_path(where, "deviceIds"), "expected a list of strings")
    return Device(name, tuple(ids), tuple(_int_list(value.get("numaNodes", []), join_path(where, "numaNodes"))))


def _container_map(value: Any, where: str, item: Callable[[Any, str], Any]) -> dict[str, Any]:
    value = expect_map(value, where, "a map of namespace/pod/container to entries")
    out = {}
    for key, entry in value.items():
        if not isinstance(key, str) or key.count("/") != 2:
            raise InputError(join_path(where, str(key)), "expected a key namespace/pod/container")
        out[key] = item(entry, join_path(where, key))
    return out


def parse_provider_data(doc: Any, where: str = "providers") -> ProviderData:
    """`{cpus: {allocatable: [ids], containers: {ns/pod/ctr: [ids]}},
    devices: {allocatable: [device], containers: {ns/pod/ctr: [device]}}}`."""
    doc = expect_map(doc or {}, where, "a map with cpus and devices")
    unknown = set(doc) - {"cpus", "devices"}
    if unknown:
        raise InputError(join_path(where, sorted(unknown)[0]), "unknown key; expected cpus or devices")
    data = ProviderData()
    cpus = expect_map(doc.get("cpus") or {}, join_path(where, "cpus"), "a map {allocatable, containers}")
    data.allocatable_cpus = _int_list(cpus.get("allocatable", []), join_path(where, "cpus.allocatable"))
    data.container_cpus = _container_map(cpus.get("containers") or {}, join_path(where, "cpus.containers"), _int_list)
    devices = expect_map(doc.get("devices") or {}, join_path(where, "devices"), "a map {allocatable, containers}")
    allocatable = devices.get("allocatable", [])
    if not isinstance(allocatable, list):
        raise InputError(join_path(where, "devices.allocatable"), "expected a list of devices")
    data.allocatable_devices = [_device(d, index_path(join_path(where, "devices.allocatable"), i))
                                for i, d in enumerate(allocatable)]

    def device_list(value: Any, w: str) -> list[Device]:
        if not isinstance(value, list):
            raise InputError(w, "expected a list of devices")
        return [_device(d, index_path(w, i)) for i, d in enumerate(value)]

    data.container_devices = _container_map(devices.get("containers") or {}, join_path(where, "devices.containers"),
                                            device_list)
    return data


# ----- messages ---------------------------------------------------------------------------------


def container_memory(blocks: Iterable[Block]) -> list[v1.ContainerMemory]:
    """One ContainerMemory per block: type, whole size, NUMA nodes ascending (topology always set)."""
    return [
        v1.ContainerMemory(
            memory_type=b.type, size=b.size,
            topology=v1.TopologyInfo(nodes=[v1.NUMANode(ID=n) for n in sorted(b.numa_affinity or [])]),
        )
        for b in blocks
    ]


def devices_message(devices: Iterable[Device]) -> list[v1.ContainerDevices]:
    """ContainerDevices entries; an entry without topology (None) leaves `topology` unset, as kubelet does."""
    return [
        v1.ContainerDevices(resource_name=d.resource_name, device_ids=list(d.device_ids))
        if d.numa_nodes is None else
        v1.ContainerDevices(resource_name=d.resource_name, device_ids=list(d.device_ids),
                            topology=v1.TopologyInfo(nodes=[v1.NUMANode(ID=n) for n in d.numa_nodes]))
        for d in devices
    ]


def pod_resources(view: PodView, providers: ProviderData) -> v1.PodResources:
    """One pod as v1 PodResources: per container the device manager's devices, the CPU manager's exclusive
    CPUs and the memory manager's blocks (then what `providers` adds); the pod-level CPUs and blocks."""
    containers = [
        v1.ContainerResources(
            name=c.name,
            devices=devices_message(c.devices + tuple(providers.devices(view.namespace, view.name, c.name))),
            cpu_ids=list(c.cpus) + providers.cpus(view.namespace, view.name, c.name),
            memory=container_memory(c.memory),
        )
        for c in view.containers
    ]
    return v1.PodResources(name=view.name, namespace=view.namespace, containers=containers,
                           cpu_ids=list(view.cpus), memory=container_memory(view.memory))


def allocatable_message(allocatable: Allocatable, providers: ProviderData) -> v1.AllocatableResourcesResponse:
    """GetAllocatableResources' answer: the managers' allocatable devices, CPUs and memory (then what
    `providers` adds)."""
    return v1.AllocatableResourcesResponse(
        devices=devices_message(allocatable.devices + tuple(providers.allocatable_devices)),
        cpu_ids=list(allocatable.cpus) + list(providers.allocatable_cpus),
        memory=container_memory(allocatable.memory),
    )


class Status(Exception):
    """A gRPC status a method answers with (code and message)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class PodResourcesObserver(Protocol):
    """Told of every PodResources call that passed the rate limit (kubelet's metrics)."""

    def pod_resources_request(self, version: str, method: str) -> None:
        """A call of `method` on the `version` server begins."""

    def pod_resources_error(self, version: str, method: str) -> None:
        """That call answers an error."""


def _rate_limited(method: Callable[..., Any]) -> Callable[..., Any]:
    """Kubelet's rate-limit interceptor, applied to one servicer method; a `Status` the
    method raises becomes its answer, any other failure an INTERNAL status naming it. Calls
    the limit lets through are reported to the servicer's observer."""

    def guarded(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
        if self.limiter is not None and not self.limiter.allow():
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, RATE_LIMIT_MESSAGE)
        observer: Optional[PodResourcesObserver] = self.observer
        if observer is not None:
            observer.pod_resources_request(self.API_VERSION, method.__name__)
        try:
            return method(self, request, context)
        except Status as status:
            failure = (status.code, status.message)
        except KubeletStartError as exc:  # a kubelet that failed to start serves nothing
            failure = (grpc.StatusCode.UNAVAILABLE, not_running_message(exc))
        except Exception as exc:  # never a dead server
            failure = (grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}")
        if observer is not None:
            observer.pod_resources_error(self.API_VERSION, method.__name__)
        context.abort(failure[0], status_message(failure[1]))

    guarded.__name__ = method.__name__
    guarded.__doc__ = method.__doc__
    return guarded


class PodResourcesV1(v1_grpc.PodResourcesListerServicer):
    """`v1.PodResourcesLister`."""

    API_VERSION = "v1"

    def __init__(self, host: SnapshotReader, providers: Optional[ProviderData] = None,
                 limiter: Optional[TokenBucket] = None, observer: Optional[PodResourcesObserver] = None) -> None:
        self.host = host
        self.providers = providers or ProviderData()
        self.limiter = limiter
        self.observer = observer

    @_rate_limited
    def List(self, request: v1.ListPodResourcesRequest, context: grpc.ServicerContext) -> v1.ListPodResourcesResponse:
        """The active pods' resources."""
        return self.host.cached("v1.List", lambda: v1.ListPodResourcesResponse(
            pod_resources=[pod_resources(view, self.providers) for view in self.host.pod_views()]
        ))

    @_rate_limited
    def GetAllocatableResources(self, request: v1.AllocatableResourcesRequest,
                                context: grpc.ServicerContext) -> v1.AllocatableResourcesResponse:
        """Devices, CPUs and memory the node can hand out (as computed at start)."""
        return allocatable_message(self.host.allocatable(), self.providers)

    @_rate_limited
    def Get(self, request: v1.GetPodResourcesRequest, context: grpc.ServicerContext) -> v1.GetPodResourcesResponse:
        """One active pod's resources, by name and namespace."""
        if not self.host.feature_enabled(KUBELET_POD_RESOURCES_GET_GATE):
            raise Status(grpc.StatusCode.UNKNOWN, GET_DISABLED_MESSAGE)
        view = self.host.find_view(request.pod_name, request.pod_namespace)
        if view is None:
            raise Status(grpc.StatusCode.UNKNOWN, f"pod {request.pod_name} in namespace {request.pod_namespace} not found")
        return v1.GetPodResourcesResponse(pod_resources=pod_resources(view, self.providers))


class PodResourcesV1Alpha1(v1alpha1_grpc.PodResourcesListerServicer):
    """`v1alpha1.PodResourcesLister`: names and devices only."""

    API_VERSION = "v1alpha1"

    def __init__(self, host: SnapshotReader, providers: Optional[ProviderData] = None,
                 limiter: Optional[TokenBucket] = None, observer: Optional[PodResourcesObserver] = None) -> None:
        self.host = host
        self.providers = providers or ProviderData()
        self.limiter = limiter
        self.observer = observer

    @_rate_limited
    def List(self, request: v1alpha1.ListPodResourcesRequest,
             context: grpc.ServicerContext) -> v1alpha1.ListPodResourcesResponse:
        """The active pods with their app containers' devices (kubelet's v1alpha1 server walks
        `spec.containers` only: no sidecars, unlike v1)."""
        pods = []
        for view in self.host.pod_views(app_only=True):
            containers = [
                v1alpha1.ContainerResources(
                    name=c.name,
                    devices=[v1alpha1.ContainerDevices(resource_name=d.resource_name, device_ids=list(d.device_ids))
                             for d in c.devices + tuple(self.providers.devices(view.namespace, view.name, c.name))],
                )
                for c in view.containers
            ]
            pods.append(v1alpha1.PodResources(name=view.name, namespace=view.namespace, containers=containers))
        return v1alpha1.ListPodResourcesResponse(pod_resources=pods)
