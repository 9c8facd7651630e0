"""The placement applied: what kubelet writes into a container's cgroup cpuset, recorded as pending
changes for the runtime, as nri-plugins policies record theirs (`container.SetCpusetMems`/`Cpus`).

kubelet sets `cpuset.mems` to the NUMA nodes of the memory manager's blocks for the container, and
nothing when the memory manager assigns none (a pod that is not Guaranteed); `cpuset.cpus` to the CPU
manager's exclusive CPUs of the container, else to the shared pool (its default cpuset), and nothing
under the CPU manager's none policy (`cgroup_cpuset`). The shared pool shrinks and grows as exclusive
CPUs are taken and given back: every container in it then gets the new pool, which kubelet's CPU
manager writes on its reconcile loop and nri-plugins' topology-aware in the same request
(`updateSharedAllocations`); here it is pending after the call that changed the pool.

When changes are recorded (the container's `memset` remembers what it was given):
- the container a call is about (allocate, update, sync) gets its cpuset as a pending change every
  time, as topology-aware re-applies a grant; an empty value is never set (kubelet sets nothing);
- every other cached container gets one only when its cpuset changed.

Who carries them to the runtime: for an NRI request, the resource manager's response (the adjustment
of the created container and the updates of the others, `ContainerCache.take_pending` /
`take_pending_updates`); for reconfiguration and DRA claims, which have no NRI response, the policy
calls `Owner.update_containers()` itself, with the lock its caller holds (`push`).
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.cpuset import cpuset_string
from memorymanager.resmgr.cache import Container
from memorymanager.resmgr.kubelet_placement import KubeletPlacement


def cgroup_cpuset(p: KubeletPlacement, container: Container) -> tuple[str, str]:
    """(cpuset.cpus, cpuset.mems) kubelet would give the container now ("" for a value it leaves alone)."""
    return p.cpuset_cpus(container), cpuset_string(p.container_memset(container))


def assign(p: KubeletPlacement, container: Container) -> tuple[Optional[str], Optional[str]]:
    """Give the container object its cpuset as kubelet holds it now; (cpus, mems) that changed (None: unchanged)."""
    cpus, mems = cgroup_cpuset(p, container)
    changed = (cpus if cpus != container.cpus else None, mems if mems != container.memset else None)
    container.cpus, container.memset = cpus, mems
    return changed


def pend(p: KubeletPlacement, container: Container, cpus: Optional[str] = None, mems: Optional[str] = None) -> None:
    """Record a pending change of the cached container: the given values, or by default its whole cpuset as
    it was last given (empty values are never set: kubelet sets nothing then)."""
    if cpus is None and mems is None:
        cpus, mems = container.cpus, container.memset
    p.cache.set_cpuset(container.id, cpus=cpus or None, mems=mems or None)


def apply(p: KubeletPlacement, container: Container) -> None:
    """The container's cpuset assigned, cached and pending (the container a call is about)."""
    assign(p, container)
    p.cache.insert(container)
    pend(p, container)


def follow(p: KubeletPlacement, skip: Optional[str] = None) -> None:
    """Every other cached container whose cpuset changed (a shared pool that shrank or grew): assigned
    again, cached, and the changed values pending."""
    for c in p.cache:
        if c.id == skip:
            continue
        cpus, mems = assign(p, c)
        if cpus is not None or mems is not None:
            p.cache.insert(c)
            pend(p, c, cpus, mems)


def push(p: KubeletPlacement) -> None:
    """Hand the pending changes to the owner (`update_containers`, under the lock the caller holds)."""
    if p.owner is not None and p.cache.pending():
        p.owner.update_containers()
