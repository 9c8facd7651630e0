"""The containers of the `kubelet-static` backend: kubelet's admission of a container's pod, its
RemoveContainer, the re-adoption of placed containers, in-place resizes and started marks.

The memory belongs to (pod UID, container name), as kubelet keys it, held by the latest container
cached under them; a pod stops being active when its last cached container goes.
"""
from __future__ import annotations

from typing import Optional, Sequence

from kubeinputs.cpuset import cpuset_string
from kubeinputs.features import IN_PLACE_POD_VERTICAL_SCALING_GATE, FeatureGates
from kubeinputs.pod import Pod
from kubeinputs.qos import GUARANTEED
from memorymanager.resmgr.cache import Container, ContainerCache
from memorymanager.resmgr.kubelet_placement import CLAIM_POD_PREFIX, KubeletPlacement, is_claim_pod_uid
from memorymanager.resmgr.types import PolicyError

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
    """Admit the container (its pod as a whole) and cache it with its memory set."""
    admit(p, container)
    container.memset = cpuset_string(p.container_memset(container))
    p.cache.insert(container)  # a new ID goes last: the owner of its (pod UID, name) from now on


def release(p: KubeletPlacement, container: Container) -> None:
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


def sync(p: KubeletPlacement, add: Sequence[Container], delete: Sequence[Container]) -> None:
    """Release `delete`; re-adopt the containers of `add` already placed; allocate the rest (the errors
    of all of them raised together)."""
    for c in delete:
        release(p, c)
    errors = []
    placed = []
    for c in add:
        if is_claim_pod_uid(c.pod_uid):
            try:
                refuse_claim_key(c)
            except PolicyError as err:
                errors.append(str(err))
        elif p.blocks(c.pod_uid, c.name) is not None:
            placed.append(c)
    p.node.adopt([c.parsed_pod() for c in placed if not p.is_active(c.pod_uid)])
    for c in placed:
        c.memset = cpuset_string(p.memset(c.pod_uid, c.name))
        p.cache.insert(c)
    for c in add:
        if c in placed or is_claim_pod_uid(c.pod_uid):
            continue
        try:
            allocate(p, c)
        except PolicyError as err:
            errors.append(str(err))
    if errors:
        raise PolicyError("; ".join(errors))


def update(p: KubeletPlacement, container: Container) -> None:
    """An in-place resize, as kubelet's allocation manager decides it (see `KubeletBackend.update_resources`)."""
    old = p.cache.lookup(container.id)
    if old is None:
        raise PolicyError(f"{container.pretty_name()}: unknown container {container.id!r}")
    if old.resources == container.resources:
        return
    gates = FeatureGates.from_config(p.node.kubelet.feature_gates)
    if not gates.enabled(IN_PLACE_POD_VERTICAL_SCALING_GATE):
        raise PolicyError(f"{container.pretty_name()}: in-place resize is disabled "
                          "(feature gate InPlacePodVerticalScaling is off)")
    if old.qos_class != container.qos_class:
        raise PolicyError(f"{container.pretty_name()}: {RESIZE_QOS}")
    if p.static and container.qos_class == GUARANTEED:
        raise PolicyError(f"{container.pretty_name()}: Infeasible: {RESIZE_INFEASIBLE}")
    container.memset, container.started = old.memset, old.started
    p.cache.insert(container)


def started(p: KubeletPlacement, container: Container) -> None:
    """Mark the cached container as started."""
    cached = p.cache.lookup(container.id)
    if cached is None:
        raise PolicyError(f"{container.pretty_name()}: unknown container {container.id!r}")
    cached.started = True
    container.started = True
    p.cache.insert(cached)
