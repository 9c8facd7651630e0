"""One node shared by every gRPC and HTTP handler: the node, its lock, its metrics.

Kubelet admits pods one at a time (the pod admission handlers run in the sync loop, and the
memory manager holds its own mutex), so `NodeHost` runs every operation of the node under
one lock: concurrent clients see the node as a sequence of whole admissions and removals.
Readers (PodResources, metrics) never take that lock: they read the snapshot published after
each operation that changed the node (`snapshot.SnapshotReader`), so they never see half an
admission and never wait for one.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar

from kubeinputs.errors import InputError
from kubeinputs.features import FeatureGateError, FeatureGates
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.pod import Container, Pod, parse_pod
from kubeinputs.reader import load_file, load_text
from memorymanager.node.api import Admission, HintsInput, Node, PodInput, find_admitted, read_pod
from memorymanager.node.simulated_node import KubeletStartError, SimulatedNode
from state.checkpoint_manager import FileOps, remove_temp_files, write_file
from memorymanager.server.metrics import KubeletMetrics, NodeMetrics, metrics_page, node_metrics
from memorymanager.server.snapshot import (Allocatable, Changes, ContainerView, DeviceEntry, PodChange,  # noqa: F401
                                           PodEntry, PodView, SnapshotReader, StartError)

T = TypeVar("T")

# The served node's pods, beside the checkpoint: what kubelet learns again from the API server
# after a restart (the checkpoint holds only UIDs), so a restarted `serve` lists its pods.
PODS_FILE_NAME = "served_pods.json"


def listed_containers(pod: Pod, sidecars: bool = True) -> list[Container]:
    """Kubelet's PodResources order: restartable init containers (sidecars) first, then app
    containers; regular init containers are not listed."""
    first = [c for c in pod.init_containers if sidecars and c.is_restartable]
    return first + list(pod.containers)


def device_entries(devices: Mapping[str, Mapping[str, Optional[Sequence[int]]]]) -> tuple[DeviceEntry, ...]:
    """A device manager's devices ({resource: {device ID: NUMA nodes, None without topology}}) as kubelet's
    PodResources server lists them: one entry per device and NUMA node, one entry without topology for a
    device that has none; resources by name, devices in the order given."""
    entries: list[DeviceEntry] = []
    for resource in sorted(devices):
        for device_id, nodes in devices[resource].items():
            if nodes is None:
                entries.append(DeviceEntry(resource, (device_id,), None))
            else:
                entries.extend(DeviceEntry(resource, (device_id,), (numa,)) for numa in sorted(nodes))
    return tuple(entries)


def allocatable_of(node: SimulatedNode) -> Allocatable:
    """GetAllocatableResources of a running node: the memory manager's blocks, the CPU manager's
    GetAllocatableCPUs (empty under the `none` policy) and the device manager's healthy devices, in the
    plugins' order."""
    devices = node.device_manager.get_allocatable_devices()
    return Allocatable(
        tuple(node.memory_manager.get_allocatable_memory() or ()),
        tuple(node.cpu_manager.get_allocatable_cpus().list()),
        device_entries({r: {d: dev.numa_nodes for d, dev in ds.items()} for r, ds in devices.items()}))


def container_cpus(node: SimulatedNode, pod_uid: str, container: str) -> tuple[int, ...]:
    """kubelet's GetCPUs: the container's exclusive CPUs (ascending), none for a container in the shared pool."""
    return tuple(node.cpu_manager.get_exclusive_cpus(pod_uid, container).list())


def container_devices(node: SimulatedNode, pod_uid: str, container: str) -> tuple[DeviceEntry, ...]:
    """kubelet's GetDevices of one container, device IDs ascending."""
    held = node.device_manager.get_devices(pod_uid, container) or {}
    return device_entries({r: dict(sorted(ids.items())) for r, ids in held.items()})


def document_pod(pod: PodInput, limits: Limits = DEFAULT_LIMITS) -> Pod:
    """A pod the server was sent (decoded from a request's JSON or YAML) or keeps in its pods file:
    a decoded document is read as a file's document is, `null` keeping its Kubernetes meaning
    (`kubeinputs.pod.parse_pod`); the Python API's refusal of None is for values given in Python."""
    if isinstance(pod, Mapping):
        return parse_pod(dict(pod), "pod", limits=limits)
    return read_pod(pod, limits=limits)


class NodeHost(SnapshotReader):
    """A started `memorymanager.Node` behind one lock, observed by kubelet's metrics, and the readers'
    snapshot published after every change."""

    def __init__(self, node: Node, *, already_started: bool = False, pods_file: Optional[str] = None,
                 file_ops: Optional[FileOps] = None) -> None:
        super().__init__()
        self.node = node
        self.lock = threading.RLock()
        self.metrics = KubeletMetrics()
        self.generation = 0  # bumped by every operation that may change the node
        # the changes published since the node process last shipped them (None: nobody ships them)
        self.journal: Optional[list[Changes]] = None
        self._metrics_part: Optional[tuple[int, NodeMetrics]] = None  # the node's part of /metrics, its generation
        self._refused_holding: set[str] = set()  # refused pods published with memory (stale state, dropped later)
        self._sidecars = True  # the SidecarContainers gate, read at every (re)start
        self.pods_file = pods_file
        # every write of the checkpoint and of the pods file (a seam for fault injection)
        self.file_ops = file_ops or FileOps()
        self._manifests: dict[str, dict[str, Any]] = {}  # pod UID -> manifest, admission order
        if not already_started:
            if file_ops is not None:
                node.simulated_node.file_ops = file_ops  # before start: the checkpoint store is built with it
            self._remove_temp_files()
            self._restore_pods()
            node.start()  # raises KubeletStartError, before any socket is bound
            self._reconcile()
        node.simulated_node.add_observer(self.metrics)  # a restart starts its counters again from zero
        self._publish_all()
        self.metrics_part()

    @property
    def limits(self) -> Limits:
        """The work limits of the node's readers, and of the control requests (their budget and queue)."""
        return self.node.limits

    def _remove_temp_files(self) -> None:
        """Temporary files a killed process left in the state folder (a write cut before its rename)."""
        folders = {self.node.simulated_node.state_dir, os.path.dirname(self.pods_file) if self.pods_file else None}
        for folder in sorted(f for f in folders if f):
            remove_temp_files(folder, self.file_ops)

    def _reconcile(self) -> None:
        """Make the checkpoint agree with the restored pod list: the state of a pod the list lacks (an
        admission cut before its pod was listed, a removal cut after its pod was unlisted) is dropped
        now and the checkpoint stored, instead of at the next admission as kubelet would; so
        PodResources and the checkpoint agree from the first call. The pod list is written last on
        admission and first on removal, so a listed pod never lacks the state it was admitted with."""
        if self.pods_file is None:
            return
        self.node.simulated_node.remove_stale_state()
        self._record_pods()

    def _restore_pods(self) -> None:
        """The pods a previous `serve` of this state folder was running, taken as running again
        before kubelet starts (as its pod sources and container runtime report them)."""
        if self.pods_file is None or not os.path.exists(self.pods_file):
            return
        doc = load_file(self.pods_file, self.limits)
        if not isinstance(doc, dict) or not isinstance(doc.get("pods"), list):
            raise InputError("pods", "expected {pods: [v1 Pod manifest, ...]}").in_file(self.pods_file)
        pods = [document_pod(item, self.limits) for item in doc["pods"]]
        self.node.simulated_node.assume_running(pods)
        self._manifests = {pod.uid: item for pod, item in zip(pods, doc["pods"])}

    def _record_pods(self, leaving: Optional[str] = None) -> None:
        """Write the active pods' manifests durably (temporary file, fsync, rename); `leaving` is the
        UID of a pod about to be removed, left out already."""
        if self.pods_file is None:
            return
        active = {p.uid for p in self.node.active_pods()}
        self._manifests = {uid: doc for uid, doc in self._manifests.items() if uid in active}
        listed = [doc for uid, doc in self._manifests.items() if uid != leaving]
        write_file(self.file_ops, self.pods_file, json.dumps({"pods": listed}, indent=1).encode())

    def locked(self, fn: Callable[[], T]) -> T:
        """Run `fn` with the node to itself."""
        with self.lock:
            return fn()

    # ----- the readers' snapshot -----

    def _entry(self, pod: Pod) -> PodEntry:
        """One pod (active, or refused at admission) as both PodResources versions list it."""
        node, sim = self.node, self.node.simulated_node
        listed = {c.name: ContainerView(c.name, tuple(node.memory_blocks(pod.uid, c.name)),
                                        container_cpus(sim, pod.uid, c.name), container_devices(sim, pod.uid, c.name))
                  for c in listed_containers(pod)}
        pod_blocks = tuple(node.pod_memory_blocks(pod.uid))
        pod_cpus = sim.cpu_manager.get_pod_cpus(pod.uid)
        pod_cpu_ids = tuple(pod_cpus.list()) if pod_cpus is not None else ()

        def view(containers: list[Container]) -> PodView:
            return PodView(pod.name, pod.namespace, pod.uid, tuple(listed[c.name] for c in containers),
                           pod_blocks, pod_cpu_ids)

        return PodEntry(view(listed_containers(pod, self._sidecars)), view(listed_containers(pod, False)))

    def _changed(self, changes: Changes) -> None:
        """Publish a change (and keep it for the node process to ship, when one does)."""
        self._publish(changes)
        if self.journal is not None:
            self.journal.append(changes)

    def _publish_pod(self, uid: str, moved: bool = False) -> None:
        """Publish one pod after an operation on it: its entry when active, its refused entry when it was
        refused at admission, else its removal. Refused pods published with memory are published again:
        the memory manager drops such stale state at its next call."""
        if not self.node.simulated_node.running:  # nothing ran; the readers answer UNAVAILABLE meanwhile
            self._changed(Changes(self.generation))
            return
        changes = [self._pod_change(uid, moved)]
        changes += [self._pod_change(other) for other in sorted(self._refused_holding - {uid})]
        self._changed(Changes(self.generation, changes))

    def _pod_change(self, uid: str, moved: bool = False) -> PodChange:
        """One pod as the node has it now (the node is running)."""
        active = self._active_with(uid)
        if active:
            self._refused_holding.discard(uid)
            return PodChange(uid, self._entry(active[0]), moved)
        refused = self.node.simulated_node.refused_pod(uid)
        if refused is None:
            self._refused_holding.discard(uid)
            return PodChange(uid, None)
        entry = self._entry(refused)
        if entry.v1.memory or entry.v1.cpus or any(c.memory or c.cpus or c.devices for c in entry.v1.containers):
            self._refused_holding.add(uid)
        else:
            self._refused_holding.discard(uid)
        return PodChange(uid, entry, moved, refused=True)

    def _active_with(self, uid: str) -> list[Pod]:
        """The active pod of this UID, if any (kubelet's active pods list, searched for one UID)."""
        return [p for p in self.node.simulated_node.active_pods() if p.uid == uid]

    def _publish_all(self, restarted: bool = False) -> None:
        """Publish every pod (active and refused), the allocatable resources, the gates and the start error
        (at start and restart)."""
        sim = self.node.simulated_node
        try:
            gates = FeatureGates.from_config(self.node.kubelet.feature_gates)
        except FeatureGateError:  # a kubelet that failed to start on them: its readers answer UNAVAILABLE
            gates = FeatureGates()
        self._sidecars = gates.enabled("SidecarContainers")
        try:
            active = self.node.active_pods()  # raises KubeletStartError when kubelet failed to start
            start_error = None
        except KubeletStartError as exc:
            active, start_error = [], StartError(str(exc), exc.hint)
        running = start_error is None
        refused = [self._pod_change(p.uid) for p in sim.refused_pods()] if running else []
        self._changed(Changes(
            self.generation,
            full=[self._entry(p) for p in active],
            full_refused=[change.entry for change in refused if change.entry is not None],
            allocatable=allocatable_of(sim) if running else Allocatable(),
            gates={g: gates.enabled(g) for g in self.GATES},
            started=True, start_error=start_error, restarted=restarted))

    def touch(self) -> None:
        """Publish the node again under a new generation, as after an operation that changed nothing
        (the readers' cached answers are built anew: benchmark B5)."""
        with self.lock:
            self.generation += 1
            self._changed(Changes(self.generation))

    def take_changes(self) -> list[Changes]:
        """The changes published since the last call (for the node process to ship)."""
        changes, self.journal = self.journal or [], []
        return changes

    def metrics_part(self) -> NodeMetrics:
        """The node's part of the `/metrics` page: built again when the node changed and nothing holds
        it, else the last one (a scrape never waits for a control request)."""
        part = self._metrics_part
        if part is not None and part[0] == self.generation:
            return part[1]
        if not self.lock.acquire(blocking=part is None):
            return part[1]  # type: ignore[index]
        try:
            built = node_metrics(self.metrics, self.node.simulated_node)
            self._metrics_part = (self.generation, built)
            return built
        finally:
            self.lock.release()

    def metrics_text(self) -> str:
        """The `/metrics` page: the node's part (`metrics_part`) and the PodResources counts as they are."""
        return metrics_page(self.metrics_part(), self.metrics)

    # ----- writes -----

    def admit(self, pod: PodInput, hints: HintsInput = None) -> Admission:
        with self.lock:
            self.generation += 1  # even a refusal may leave earlier containers' allocations
            parsed = document_pod(pod, self.limits)
            listed = parsed.uid in self._manifests
            decided = False  # kubelet admitted or refused the pod (it then moves to the end of its list)
            try:
                answer = self.node.admit(parsed, hints)  # the checkpoint is stored before the pod is listed
                decided = True
                if self.pods_file is not None and (answer.admitted or listed):  # a refused re-admission unlists
                    doc = pod if isinstance(pod, dict) else \
                        load_text(pod, "pod", limits=self.limits) if isinstance(pod, str) else None
                    if answer.admitted and isinstance(doc, dict):
                        self._manifests.pop(parsed.uid, None)
                        self._manifests[parsed.uid] = doc
                    self._record_pods()
            finally:
                self._publish_pod(parsed.uid, moved=decided)
            return answer

    def would_admit(self, pod: PodInput, hints: HintsInput = None) -> Admission:
        with self.lock:
            return self.node.would_admit(document_pod(pod, self.limits), hints)

    def remove(self, pod: str, container: Optional[str] = None, *, namespace: Optional[str] = None) -> None:
        with self.lock:
            self.generation += 1
            sim = self.node.simulated_node
            # the pod removed (the errors of a pod that is not there are node.remove's own, raised here
            # first); a container's removal leaves its pod listed
            found = find_admitted(sim, pod, namespace) if sim.running else None
            try:
                if container is None and self.pods_file is not None and found is not None \
                        and found.uid in self._manifests:
                    self._record_pods(leaving=found.uid)  # unlisted first: a cut leaves only stale state
                self.node.remove(pod, container, namespace=namespace)
                if container is None:
                    self._record_pods()
            finally:
                if found is not None:
                    self._publish_pod(found.uid)

    def restart(self, overrides: Optional[dict[str, object]] = None) -> None:
        """A kubelet restart: state from the checkpoint, counters from zero."""
        with self.lock:
            self.generation += 1
            self.metrics.reset()  # a restart request starts the counters again, as the readers' `restarted` does
            try:
                self.node.restart(**(overrides or {}))  # the observer hears the start itself: from zero again
            finally:
                self._publish_all(restarted=True)


def not_running_message(error: KubeletStartError) -> str:
    """What a client of a kubelet that failed to start is told: kubelet's start error, and the
    project's hint about it (if any) on a line of its own."""
    return f"kubelet is not running: {error}" + (f"\n{error.hint}" if error.hint else "")


def parse_overrides(text: str, where: str, limits: Limits = DEFAULT_LIMITS) -> dict[str, object]:
    """A YAML/JSON map of KubeletConfiguration fields (empty text: no change)."""
    if not text.strip():
        return {}
    doc = load_text(text, where, limits=limits)
    if not isinstance(doc, dict):
        raise InputError(where, "expected a map of KubeletConfiguration fields")
    return doc
