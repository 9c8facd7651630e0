"""Shared builders for the resmgr tests: a fake Owner, a two-node machine, pods, claims."""
from __future__ import annotations

import threading
from typing import Callable, Optional, Sequence, TypeVar

import memorymanager
from kubeinputs.quantity import Quantity
from memorymanager import resmgr as r

T = TypeVar("T")
GI = 1 << 30
MI = 1 << 20
STATIC = {
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "single-numa-node",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
}
MACHINE = memorymanager.synthetic_machine(2, 8 * GI)


class RetakeError(AssertionError):
    """The thread holding the lock asked for it again: a plain mutex would deadlock there."""


class NonReentrantLock:
    """A plain mutex (threading.Lock) that reports a deadlock instead of hanging: a re-take by the
    holding thread fails at once (acquire(blocking=False)); another thread waits with a timeout."""

    def __init__(self, timeout: float = 10.0) -> None:
        self._lock = threading.Lock()
        self._holder: Optional[int] = None
        self.timeout = timeout
        self.retakes = 0

    def acquire(self) -> None:
        if self._lock.acquire(blocking=False):
            self._holder = threading.get_ident()
            return
        if self._holder == threading.get_ident():
            self.retakes += 1
            raise RetakeError("the Owner's lock was taken again by the thread holding it")
        if not self._lock.acquire(timeout=self.timeout):
            raise RetakeError(f"the Owner's lock was not released within {self.timeout}s: deadlock")
        self._holder = threading.get_ident()

    def release(self) -> None:
        assert self._holder == threading.get_ident(), "the Owner's lock released by a thread not holding it"
        self._holder = None
        self._lock.release()

    @property
    def held(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._holder == threading.get_ident()


class FakeOwner:
    """The resource manager running a policy, as nri-plugins' (pkg/resmgr/nri.go, the DRA glue) calls it:
    a non-reentrant lock held around every NRI request but Synchronize, around claims and reconfiguration;
    the pending container changes taken into each response (the created container's adjustment, the
    others' updates) and pushed by `update_containers` (recorded in `pushed`); published DRA devices."""

    def __init__(self, lists: bool = False) -> None:
        self.lock = NonReentrantLock()
        self.devices: list[r.Device] = []
        self.publishes = 0
        self.lists = lists
        self.policy: Optional[r.Policy] = None
        self.adjustments: dict[str, Optional[r.ContainerUpdate]] = {}  # per created container
        self.updates: list[r.ContainerUpdate] = []  # carried in NRI responses
        self.pushed: list[r.ContainerUpdate] = []  # sent with update_containers
        self.push_calls = 0

    def __enter__(self) -> "FakeOwner":
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    @property
    def held(self) -> bool:
        return self.lock.held

    @property
    def cache(self) -> r.ContainerCache:
        assert self.policy is not None, "the owner runs no policy"
        return self.policy.cache

    def update_containers(self) -> None:
        assert self.held, "update_containers needs the lock"
        self.push_calls += 1
        self.pushed.extend(self.cache.take_pending_updates())

    def publish_dra_devices(self, devices: Sequence[r.Device]) -> None:
        self.devices = list(devices)
        self.publishes += 1

    def dra_list_attributes_supported(self) -> bool:
        return self.lists

    # ----- the NRI requests, as nri.go makes them -----

    def _respond(self, skip: Optional[str] = None) -> list[r.ContainerUpdate]:
        updates = self.cache.take_pending_updates(skip)
        for u in updates:
            c = self.cache.lookup(u.container_id)
            if c is not None and self.cache.directory is not None:
                self.policy.export_resource_data(c)  # type: ignore[union-attr]
        self.updates.extend(updates)
        return updates

    def create_container(self, c: r.Container) -> tuple[Optional[r.ContainerUpdate], list[r.ContainerUpdate]]:
        """CreateContainer: allocate under the lock; the container's adjustment and the others' updates."""
        with self:
            self.policy.allocate_resources(c)  # type: ignore[union-attr]
            if self.cache.directory is not None:
                self.policy.export_resource_data(c)  # type: ignore[union-attr]
            adjust = self.cache.take_pending(c.id)
            self.adjustments[c.id] = adjust
            return adjust, self._respond(skip=c.id)

    def start_container(self, c: r.Container) -> None:
        with self:
            self.policy.container_started(c)  # type: ignore[union-attr]

    def update_container(self, c: r.Container) -> list[r.ContainerUpdate]:
        with self:
            self.policy.update_resources(c)  # type: ignore[union-attr]
            return self._respond()

    def stop_container(self, c: r.Container) -> list[r.ContainerUpdate]:
        with self:
            self.policy.release_resources(c)  # type: ignore[union-attr]
            return self._respond(skip=c.id)

    def synchronize(self, containers: Sequence[r.Container], stale: Sequence[r.Container] = ()) -> list[r.ContainerUpdate]:
        """Synchronize: no lock; every created/running container in both lists, stale ones only released."""
        assert not self.held
        self.policy.sync(list(containers), list(containers) + list(stale))  # type: ignore[union-attr]
        return self._respond()

    def prepare(self, claim: r.ResourceClaim, results: Sequence[r.DeviceRequestAllocationResult]) -> list[r.ContainerEdits]:
        with self:
            return self.policy.allocate_claim(claim, results)  # type: ignore[union-attr]

    def unprepare(self, uid: str) -> None:
        with self:
            self.policy.release_claim(uid)  # type: ignore[union-attr]

    def reconfigure(self, config: dict) -> None:
        with self:
            self.policy.reconfigure(config)  # type: ignore[union-attr]

    def with_lock(self, fn: Callable[[], T]) -> T:
        """Any other request made under the lock (an export, a claim call made directly)."""
        with self:
            return fn()


def pod(name: str, memory: str = "1Gi", containers: Sequence[str] = ("app",), cpu: str = "1",
        requests: Optional[dict] = None) -> dict:
    """A pod manifest; Guaranteed unless `requests` makes it Burstable."""
    spec = []
    for c in containers:
        res: dict = {"limits": {"cpu": cpu, "memory": memory}}
        if requests is not None:
            res["requests"] = dict(requests)
        spec.append({"name": c, "resources": res})
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": {"containers": spec}}


def container(name: str, memory: str = "1Gi", claims: Sequence[str] = (), **kw: object) -> r.Container:
    """The single container `app` of pod `name`, with ID `<name>-app`."""
    return r.Container(f"{name}-app", pod(name, memory, **kw), "app", claims=tuple(claims))  # type: ignore[arg-type]


def result(numa: int, size: int, request: str = "mem") -> r.DeviceRequestAllocationResult:
    """One allocation result of our driver on NUMA node `numa`, consuming `size` bytes."""
    return r.DeviceRequestAllocationResult(request, r.DEFAULT_DRIVER, "pool0", r.device_name(numa),
                                           {"size": Quantity.from_int(size)})


def claim(uid: str, *configs: r.ClaimConfig) -> r.ResourceClaim:
    return r.ResourceClaim(uid, f"claim-{uid}", "default", tuple(configs))


def make_policy(directory: Optional[str], config: Optional[dict] = None, owner: Optional[FakeOwner] = None,
                machine: object = MACHINE) -> tuple[r.Policy, FakeOwner]:
    """A started Policy over the kubelet backend, its cache (and state) in `directory`."""
    owner = owner or FakeOwner()
    policy = r.new_policy(r.KubeletBackend(), r.ContainerCache(directory), r.Options(owner), machine)  # type: ignore[arg-type]
    owner.policy = policy
    policy.start(dict(STATIC if config is None else config))
    return policy, owner


def free(policy: r.Policy) -> dict[int, int]:
    """Free regular memory per NUMA node."""
    return {n: s.memory_map["memory"].free for n, s in policy.backend.machine_state().items()}  # type: ignore[attr-defined]
