"""Shared builders for the resmgr tests: a fake Owner, a two-node machine, pods, claims."""
from __future__ import annotations

import threading
from typing import Optional, Sequence

import memorymanager
from kubeinputs.quantity import Quantity
from memorymanager import resmgr as r

GI = 1 << 30
MI = 1 << 20
STATIC = {
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "single-numa-node",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
}
MACHINE = memorymanager.synthetic_machine(2, 8 * GI)


class FakeOwner:
    """An Owner recording lock use, published devices and update calls."""

    def __init__(self, lists: bool = False) -> None:
        self._lock = threading.RLock()
        self.depth = 0
        self.devices: list[r.Device] = []
        self.publishes = 0
        self.updates = 0
        self.lists = lists

    def __enter__(self) -> "FakeOwner":
        self._lock.acquire()
        self.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        self._lock.release()

    @property
    def held(self) -> bool:
        return self.depth > 0

    def update_containers(self) -> None:
        assert self.held, "update_containers needs the lock"
        self.updates += 1

    def publish_dra_devices(self, devices: Sequence[r.Device]) -> None:
        self.devices = list(devices)
        self.publishes += 1

    def dra_list_attributes_supported(self) -> bool:
        return self.lists


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
    policy.start(dict(STATIC if config is None else config))
    return policy, owner


def free(policy: r.Policy) -> dict[int, int]:
    """Free regular memory per NUMA node."""
    return {n: s.memory_map["memory"].free for n, s in policy.backend.machine_state().items()}  # type: ignore[attr-defined]
