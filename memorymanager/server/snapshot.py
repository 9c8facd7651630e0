"""What PodResources and `/metrics` read: the last published snapshot of the node.

Readers never take the node's lock: while a control request runs (an admission of a large pod,
an explanation), they answer from the snapshot published after the last request that changed
the node. A snapshot holds the active pods as PodResources lists them (in admission order, both
the v1 and the v1alpha1 container lists, with each container's memory blocks, exclusive CPUs and
devices), the pods refused at admission and not removed since (kubelet's pod manager keeps them,
so `Get` answers them), what GetAllocatableResources answers as computed at start (memory, CPUs
and devices: `Allocatable`), the feature gates PodResources reads, and the start error of a
kubelet that failed to start (every reader then raises it: PodResources answers UNAVAILABLE).
The `/metrics` page is the host's to give (`metrics_text`).

The pods are kept in a `PodBook` and changed pod by pod (`PodChange`): an admission or a removal
touches one pod, so publishing costs O(touched pods), not O(pods). The node's host and the
server process of an isolated node (`node_process`) keep one book each and apply the same changes.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, TypeVar

from memorymanager.node.simulated_node import KubeletStartError
from state.types import Block

T = TypeVar("T")


@dataclass(frozen=True)
class DeviceEntry:
    """One `ContainerDevices` entry: a resource, its device IDs and their NUMA nodes (None: the entry carries
    no topology, as kubelet reports a device whose plugin gave none)."""

    resource_name: str
    device_ids: tuple[str, ...]
    numa_nodes: Optional[tuple[int, ...]] = ()


@dataclass(frozen=True)
class ContainerView:
    """One container as PodResources reports it: name, memory blocks, exclusive CPUs, device entries."""

    name: str
    memory: tuple[Block, ...]
    cpus: tuple[int, ...] = ()
    devices: tuple[DeviceEntry, ...] = ()


@dataclass(frozen=True)
class PodView:
    """One active pod: name, namespace, UID, listed containers, pod-level blocks and pod-level exclusive CPUs."""

    name: str
    namespace: str
    uid: str
    containers: tuple[ContainerView, ...]
    memory: tuple[Block, ...]
    cpus: tuple[int, ...] = ()


@dataclass(frozen=True)
class Allocatable:
    """What `GetAllocatableResources` answers, computed at (re)start: the memory manager's blocks, the CPU
    manager's allocatable CPUs (ascending) and the device manager's healthy devices."""

    memory: tuple[Block, ...] = ()
    cpus: tuple[int, ...] = ()
    devices: tuple[DeviceEntry, ...] = ()


@dataclass(frozen=True)
class PodEntry:
    """One active pod for both PodResources versions: v1 (sidecars first when the gate is on) and
    v1alpha1 (app containers only)."""

    v1: PodView
    v1alpha1: PodView


@dataclass(frozen=True)
class PodChange:
    """One pod after a request: its entry (None: neither active nor refused any more), whether it moved
    to the end of the admission order (admitted again), and whether the entry is of a pod refused at
    admission (kept for `Get`, not listed)."""

    uid: str
    entry: Optional[PodEntry]
    moved: bool = False
    refused: bool = False


@dataclass(frozen=True)
class StartError:
    """Why kubelet is not running: its start error and the project's hint (KubeletStartError's)."""

    error: str
    hint: Optional[str] = None

    def exception(self) -> KubeletStartError:
        """The error as the node API raises it."""
        exc = KubeletStartError(self.error)
        exc.hint = self.hint
        return exc


@dataclass
class Changes:
    """What a request changed, as the readers see it: pods one by one, or all of them (`full` and
    `full_refused`, at start and restart), the allocatable memory, gates and start error when they may
    have changed (`started`: at start and restart), the node's generation, and whether it was a kubelet
    restart (its counters start again from zero)."""

    generation: int
    pods: list[PodChange] = field(default_factory=list)
    full: Optional[list[PodEntry]] = None
    full_refused: Optional[list[PodEntry]] = None
    allocatable: Optional[Allocatable] = None
    gates: Optional[dict[str, bool]] = None
    started: bool = False
    start_error: Optional[StartError] = None
    restarted: bool = False


@dataclass(frozen=True)
class Snapshot:
    """The node as readers see it between requests (immutable: replaced, never changed)."""

    generation: int
    pods: tuple[PodEntry, ...]
    allocatable: Allocatable
    gates: Mapping[str, bool]
    refused: tuple[PodEntry, ...] = ()
    start_error: Optional[StartError] = None


class PodBook:
    """The active pods in admission order, and the pods refused at admission in refusal order, changed
    pod by pod."""

    def __init__(self) -> None:
        self._entries: dict[str, PodEntry] = {}
        self._refused: dict[str, PodEntry] = {}

    def apply(self, changes: Changes) -> None:
        """Take a request's changes."""
        if changes.full is not None:
            self._entries = {e.v1.uid: e for e in changes.full}
        if changes.full_refused is not None:
            self._refused = {e.v1.uid: e for e in changes.full_refused}
        for change in changes.pods:
            if change.entry is None:
                self._entries.pop(change.uid, None)
                self._refused.pop(change.uid, None)
            elif change.refused:
                self._entries.pop(change.uid, None)
                if change.moved:  # refused again: the latest refusal
                    self._refused.pop(change.uid, None)
                self._refused[change.uid] = change.entry
            else:
                self._refused.pop(change.uid, None)
                if change.moved or change.uid not in self._entries:
                    self._entries.pop(change.uid, None)
                self._entries[change.uid] = change.entry

    def entries(self) -> tuple[PodEntry, ...]:
        """The active pods, admission order."""
        return tuple(self._entries.values())

    def refused(self) -> tuple[PodEntry, ...]:
        """The refused pods, refusal order."""
        return tuple(self._refused.values())


class SnapshotReader:
    """The readers of PodResources and `/metrics` over a published snapshot (never the node's lock).

    Subclasses publish (`_publish`) and give the metrics page (`metrics_text`)."""

    GATES = ("KubeletPodResourcesGet", "SidecarContainers")

    def __init__(self) -> None:
        self._snapshot = Snapshot(0, (), Allocatable(), {})
        self._book = PodBook()
        self._cache: dict[str, tuple[int, Any]] = {}
        self._cache_lock = threading.Lock()

    def _publish(self, changes: Changes) -> None:
        """Apply a request's changes and publish the next snapshot."""
        self._book.apply(changes)
        old = self._snapshot
        self._snapshot = Snapshot(
            changes.generation, self._book.entries(),
            old.allocatable if changes.allocatable is None else changes.allocatable,
            old.gates if changes.gates is None else dict(changes.gates),
            self._book.refused(),
            changes.start_error if changes.started else old.start_error)

    @property
    def snapshot(self) -> Snapshot:
        """The last published snapshot."""
        return self._snapshot

    def _running(self) -> Snapshot:
        """The snapshot of a running kubelet; raises KubeletStartError when it failed to start."""
        snapshot = self._snapshot
        if snapshot.start_error is not None:
            raise snapshot.start_error.exception()
        return snapshot

    def pod_views(self, app_only: bool = False) -> list[PodView]:
        """The active pods with their listed containers' blocks; `app_only`: v1alpha1's lists."""
        return [e.v1alpha1 if app_only else e.v1 for e in self._running().pods]

    def find_view(self, name: str, namespace: str) -> Optional[PodView]:
        """A pod by namespace and name as kubelet's pod manager holds it (GetPodByName): an active pod
        (the latest admitted of that name), else one refused at admission and not removed since; else None."""
        snapshot = self._running()
        for entries in (snapshot.pods, snapshot.refused):
            for entry in reversed(entries):
                if entry.v1.name == name and entry.v1.namespace == namespace:
                    return entry.v1
        return None

    def allocatable_blocks(self) -> list[Block]:
        """The memory manager's allocatable memory, as computed at (re)start."""
        return list(self._running().allocatable.memory)

    def allocatable(self) -> Allocatable:
        """Everything GetAllocatableResources answers (memory, CPUs, devices), as computed at (re)start."""
        return self._running().allocatable

    def feature_enabled(self, gate: str) -> bool:
        """Whether a feature gate PodResources reads is on."""
        return bool(self._snapshot.gates.get(gate, False))

    def cached(self, key: str, build: Callable[[], T]) -> T:
        """`build()`'s answer, built again only when a newer snapshot was published (the answers of an
        unchanged node are the same; kubelet recomputes them)."""
        generation = self._snapshot.generation
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] == generation:
                return hit[1]
            value = build()
            self._cache[key] = (generation, value)
            return value

    def metrics_text(self) -> str:
        """The `/metrics` page."""
        raise NotImplementedError
