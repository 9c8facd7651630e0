"""Init-container memory that later containers of the same pod may re-use (kept in memory only).

Regular init containers run to completion before the next container starts, so
the static policy lets later containers take over their memory on the same NUMA
mask instead of reserving more. kubelet tracks one pod at a time:
pod UID -> mask string -> resource -> bytes (policy_static.go initContainersReusableMemory).
Sidecars (restartable init containers) never give memory back.
"""
from __future__ import annotations

from typing import Callable, Iterable

from kubeinputs.pod import Container, Pod
from state.types import Block
from topologymanager import bitmask

from memorymanager.requests import is_regular_init_container

# (mask, resource) -> bytes of this pod's init-container memory that may be re-used on exactly that mask.
ReusableLookup = Callable[[int, str], int]


def no_reuse(mask: int, resource: str) -> int:
    """No re-usable memory anywhere (calculate_hints recognises it and skips the look-ups)."""
    return 0


# pod UID -> bitmask string (kubelet's BitMask.String()) -> resource -> bytes
ReusableMap = dict[str, dict[str, dict[str, int]]]


def _mask_key(numa_affinity) -> str:
    """kubelet keys the map by the mask's String(); a bad affinity maps to the empty mask."""
    try:
        mask = bitmask.new_bitmask(*(numa_affinity or []))
    except bitmask.BitMaskError:
        mask = 0
    return bitmask.bitmask_string(mask)


class PodReuse:
    """One pod's (mask, resource) -> bytes look-up; `masks()` lists the masks it may be non-zero on
    (what `memorymanager.hint_family` needs to keep such masks as explicit members)."""

    __slots__ = ("memory", "pod_uid")

    def __init__(self, memory: "ReusableMemory", pod_uid: str):
        self.memory = memory
        self.pod_uid = pod_uid

    def __call__(self, mask: int, resource: str) -> int:
        return self.memory.get(self.pod_uid, mask, resource)

    def masks(self) -> list[int]:
        """Every mask with a re-usable entry for this pod (keys are kubelet's binary mask strings)."""
        return [int(key, 2) for key in self.memory.by_pod.get(self.pod_uid, {}) if key]


class ReusableMemory:
    """The static policy's re-usable init-container memory bookkeeping."""

    def __init__(self, initial: ReusableMap | None = None):
        self.by_pod: ReusableMap = initial if initial is not None else {}

    def get(self, pod_uid: str, mask: int, resource: str) -> int:
        """Re-usable bytes of `resource` for this pod on exactly this mask (0 if none)."""
        return self.by_pod.get(pod_uid, {}).get(bitmask.bitmask_string(mask), {}).get(resource, 0)

    def lookup(self, pod_uid: str) -> ReusableLookup:
        """A (mask, resource) -> bytes function for one pod, for hint calculation.

        `no_reuse` itself when the pod has nothing re-usable right now (the usual case),
        which lets calculate_hints skip the look-ups; so the function reflects the bookkeeping
        as it is at this call, and is meant for the hint calculations of one policy call.
        Cost: O(1).
        """
        if not self.by_pod.get(pod_uid):
            return no_reuse
        return PodReuse(self, pod_uid)

    def update(self, pod: Pod, container: Container, blocks: Iterable[Block]) -> None:
        """Record a container's blocks: forget other pods; a regular init container raises the
        re-usable amount to its block size; any other container consumes it."""
        pod_uid = pod.uid
        for uid in list(self.by_pod):
            if uid != pod_uid:
                del self.by_pod[uid]

        if is_regular_init_container(pod, container):
            pod_map = self.by_pod.setdefault(pod_uid, {})
            for block in blocks:
                by_type = pod_map.setdefault(_mask_key(block.numa_affinity), {})
                if block.size > by_type.get(block.type, 0):
                    by_type[block.type] = block.size
            return

        for block in blocks:
            key = _mask_key(block.numa_affinity)
            reusable = self.by_pod.get(pod_uid, {}).get(key, {}).get(block.type, 0)
            if reusable != 0:
                if block.size >= reusable:
                    self.by_pod[pod_uid][key][block.type] = 0
                else:
                    self.by_pod[pod_uid][key][block.type] -= block.size
