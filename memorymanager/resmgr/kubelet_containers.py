"""The containers of the `kubelet-static` backend: kubelet's admission of a container's pod, its
RemoveContainer, the re-adoption of placed containers, in-place resizes and started marks; each
leaves the resulting cpusets pending for the runtime (`kubelet_updates`).

The memory belongs to (pod UID, container name), as kubelet keys it, held by the latest container
cached under them; a pod stops being active when its last cached container goes.
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence

from kubeinputs.features import IN_PLACE_POD_VERTICAL_SCALING_GATE, FeatureGates
from kubeinputs.pod import Pod
from kubeinputs.qos import GUARANTEED
from memorymanager.resmgr import kubelet_updates
from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.kubelet_placement import CLAIM_POD_PREFIX, KubeletPlacement, is_claim_pod_uid
from memorymanager.resmgr.types import PolicyError

log = logging.getLogger("memorymanager.resmgr")

RESIZE_INFEASIBLE = "Resize is infeasible for Guaranteed Pods alongside Memory Manager static policy"
RESIZE_QOS = "Pod QOS Class may not change as a result of resizing"


def cached_pods(cache: ContainerCache) -> list[Pod]:
    """The pods of the cached containers, each once (in cache order)."""
    pods: dict[str, Pod] = {}
    for c in cache:
        pods.setdefault(c.pod_uid, c.parsed_pod())
    return list(pods.values())


def holder_id(cache: ContainerCache, pod_uid: str, name: str) -> Optional[str]:
    """The ID of the container that owns the memory of (pod UID, container name): the latest one
    cached (a restarted container comes back under a new ID and takes the assignment over;
    kubelet keys the memory by pod UID and container name, never by container ID)."""
    owner = None
    for c in cache:
        if c.name == name and c.pod_uid == pod_uid:
            owner = c.id
    return owner


def refuse_claim_key(container: Container) -> None:
    """Containers and claims do not share a key space: a pod UID of the claims' is refused."""
    if is_claim_pod_uid(container.pod_uid):
        raise PolicyError(f"{container.pretty_name()}: pod UID {container.pod_uid!r} is reserved for DRA claims "
                          f"(UIDs starting with {CLAIM_POD_PREFIX!r})")


def admit(p: KubeletPlacement, container: Container) -> None:
    """Admit the container's pod as kubelet does (unless the container is already placed)."""
    pod = container.parsed_pod()
    refuse_claim_key(container)
    if p.is_active(pod.uid):
        if p.blocks(pod.uid, container.name) is not None or not p.static:
            return
        trial = p.node.would_admit(pod)  # a running pod: a refusal must not make it inactive
        if not trial.admitted:
            raise PolicyError(f"{container.pretty_name()}: {trial.reason}: {trial.message}")
    answer = p.node.admit(pod)
    if not answer.admitted:
        raise PolicyError(f"{container.pretty_name()}: {answer.reason}: {answer.message}")


def allocate(p: KubeletPlacement, container: Container) -> None:
    """Admit the container (its pod as a whole), cache it and leave its cpuset pending (with any other
    container's that changed)."""
    admit(p, container)
    kubelet_updates.apply(p, container)  # a new ID goes last: the owner of its (pod UID, name) from now on
    kubelet_updates.follow(p, skip=container.id)


def remove(p: KubeletPlacement, container: Container) -> None:
    """kubelet's RemoveContainer for this container (idempotent); the pod is removed when none of its
    containers is cached any more. Releasing an older container ID (one a restart replaced) releases
    nothing; releasing the owner also forgets the IDs it replaced; a container whose pod UID is in the
    claims' key space never held memory."""
    pod = container.parsed_pod()
    holder = holder_id(p.cache, pod.uid, container.name)
    p.cache.delete(container.id)
    if is_claim_pod_uid(pod.uid) or not p.is_active(pod.uid):
        return
    if holder is not None and holder != container.id:
        return  # a replaced ID: the memory is its successor's
    for c in p.cache:
        if c.pod_uid == pod.uid and c.name == container.name:
            p.cache.delete(c.id)
    p.node.simulated_node.remove_container_ids([f"{pod.uid}/{container.name}"])
    if not any(c.pod_uid == pod.uid for c in p.cache):
        p.remove_pod(pod.uid)


def release(p: KubeletPlacement, container: Container) -> None:
    """Remove the container (`remove`); any other container whose cpuset changed is left pending."""
    remove(p, container)
    kubelet_updates.follow(p)


def sync(p: KubeletPlacement, add: Sequence[Container], delete: Sequence[Container]) -> None:
    """Synchronize as nri-plugins' resource manager calls it: every created or running container comes
    in both lists, to be allocated again. A container of `add` is never released (it comes back): one
    the memory manager already places keeps its placement (re-adopted); the others are admitted as
    `allocate_resources` admits them; the rest of `delete` is released. A container that cannot be
    placed is logged and skipped: Sync itself does not fail (a Sync error would fail the plugin's
    registration), as topology-aware's does not. Every container of `add` that is placed gets its
    cpuset pending."""
    coming_back = {c.id for c in add}
    for c in delete:
        if c.id not in coming_back:  # one coming back keeps what it holds: re-adopted below, not placed anew
            remove(p, c)
    placed, rest = [], []
    for c in add:
        if is_claim_pod_uid(c.pod_uid):
            log.warning("sync: skipping %s: pod UID %r is reserved for DRA claims", c.pretty_name(), c.pod_uid)
        elif p.blocks(c.pod_uid, c.name) is not None:
            placed.append(c)
        else:
            rest.append(c)
    p.node.adopt([c.parsed_pod() for c in placed if not p.is_active(c.pod_uid)])
    for c in placed:
        kubelet_updates.apply(p, c)
    for c in rest:
        try:
            admit(p, c)  # as allocate_resources: an active pod is tried first, so a refusal leaves it active
        except PolicyError as err:
            log.warning("sync: failed to allocate resources for %s: %s", c.pretty_name(), err)
            continue
        kubelet_updates.apply(p, c)
    kubelet_updates.follow(p)


def update(p: KubeletPlacement, container: Container) -> None:
    """An in-place resize, as kubelet's allocation manager decides it (see `KubeletBackend.update_resources`)."""
    old = p.cache.lookup(container.id)
    if old is None:
        raise PolicyError(f"{container.pretty_name()}: unknown container {container.id!r}")
    if old.resources == container.resources:
        kubelet_updates.pend(p, old)  # as nri-plugins' UpdateContainer with identical resources: re-set as is
        return
    gates = FeatureGates.from_config(p.node.kubelet.feature_gates)
    if not gates.enabled(IN_PLACE_POD_VERTICAL_SCALING_GATE):
        raise PolicyError(f"{container.pretty_name()}: in-place resize is disabled "
                          "(feature gate InPlacePodVerticalScaling is off)")
    if old.qos_class != container.qos_class:
        raise PolicyError(f"{container.pretty_name()}: {RESIZE_QOS}")
    if p.static and container.qos_class == GUARANTEED:
        raise PolicyError(f"{container.pretty_name()}: Infeasible: {RESIZE_INFEASIBLE}")
    container.started = old.started
    kubelet_updates.apply(p, container)
    kubelet_updates.follow(p, skip=container.id)


def started(p: KubeletPlacement, container: Container) -> None:
    """Mark the cached container as started."""
    cached = p.cache.lookup(container.id)
    if cached is None:
        raise PolicyError(f"{container.pretty_name()}: unknown container {container.id!r}")
    cached.started = True
    container.started = True
    p.cache.insert(cached)
