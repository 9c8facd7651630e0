"""What PodResources and `/metrics` read: the last published snapshot of the node.

Readers never take the node's lock: while a control request runs (an admission of a large pod,
an explanation), they answer from the snapshot published after the last request that changed
the node. A snapshot holds the active pods as PodResources lists them (in admission order, both
the v1 and the v1alpha1 container lists), the allocatable memory computed at start, the feature
gates PodResources reads, and the `/metrics` page with the generation it was built at.

The pods are kept in a `PodBook` and changed pod by pod (`PodChange`): an admission or a removal
touches one pod, so publishing costs O(touched pods), not O(pods). The node's host and the
server process of an isolated node (`node_process`) keep one book each and apply the same changes.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, TypeVar

from state.types import Block

T = TypeVar("T")


@dataclass(frozen=True)
class ContainerView:
    """One container as PodResources reports it: name and memory blocks."""

    name: str
    memory: tuple[Block, ...]


@dataclass(frozen=True)
class PodView:
    """One active pod: name, namespace, UID, listed containers, pod-level blocks."""

    name: str
    namespace: str
    uid: str
    containers: tuple[ContainerView, ...]
    memory: tuple[Block, ...]


@dataclass(frozen=True)
class PodEntry:
    """One active pod for both PodResources versions: v1 (sidecars first when the gate is on) and
    v1alpha1 (app containers only)."""

    v1: PodView
    v1alpha1: PodView


@dataclass(frozen=True)
class PodChange:
    """One pod after a request: its entry (None: no longer active) and whether it moved to the end of
    the admission order (admitted again)."""

    uid: str
    entry: Optional[PodEntry]
    moved: bool = False


@dataclass
class Changes:
    """What a request changed, as the readers see it: pods one by one, or all of them (`full`, after a
    restart), the allocatable memory and gates when they may have changed, the node's generation."""

    generation: int
    pods: list[PodChange] = field(default_factory=list)
    full: Optional[list[PodEntry]] = None
    allocatable: Optional[tuple[Block, ...]] = None
    gates: Optional[dict[str, bool]] = None


@dataclass(frozen=True)
class Snapshot:
    """The node as readers see it between requests (immutable: replaced, never changed)."""

    generation: int
    pods: tuple[PodEntry, ...]
    allocatable: tuple[Block, ...]
    gates: Mapping[str, bool]


class PodBook:
    """The active pods in admission order, changed pod by pod."""

    def __init__(self) -> None:
        self._entries: dict[str, PodEntry] = {}

    def apply(self, changes: Changes) -> None:
        """Take a request's changes."""
        if changes.full is not None:
            self._entries = {e.v1.uid: e for e in changes.full}
        for change in changes.pods:
            if change.entry is None:
                self._entries.pop(change.uid, None)
            elif change.moved or change.uid not in self._entries:
                self._entries.pop(change.uid, None)
                self._entries[change.uid] = change.entry
            else:
                self._entries[change.uid] = change.entry

    def entries(self) -> tuple[PodEntry, ...]:
        """The pods, admission order."""
        return tuple(self._entries.values())


class SnapshotReader:
    """The readers of PodResources and `/metrics` over a published snapshot (never the node's lock).

    Subclasses publish (`_publish`) and give the metrics page (`metrics_text`)."""

    GATES = ("KubeletPodResourcesGet", "SidecarContainers")

    def __init__(self) -> None:
        self._snapshot = Snapshot(0, (), (), {})
        self._book = PodBook()
        self._cache: dict[str, tuple[int, Any]] = {}
        self._cache_lock = threading.Lock()

    def _publish(self, changes: Changes) -> None:
        """Apply a request's changes and publish the next snapshot."""
        self._book.apply(changes)
        old = self._snapshot
        self._snapshot = Snapshot(
            changes.generation, self._book.entries(),
            old.allocatable if changes.allocatable is None else tuple(changes.allocatable),
            old.gates if changes.gates is None else dict(changes.gates))

    @property
    def snapshot(self) -> Snapshot:
        """The last published snapshot."""
        return self._snapshot

    def pod_views(self, app_only: bool = False) -> list[PodView]:
        """The active pods with their listed containers' blocks; `app_only`: v1alpha1's lists."""
        return [e.v1alpha1 if app_only else e.v1 for e in self._snapshot.pods]

    def find_view(self, name: str, namespace: str) -> Optional[PodView]:
        """An active pod by name and namespace (kubelet's GetPodByName), else None."""
        for entry in self._snapshot.pods:
            if entry.v1.name == name and entry.v1.namespace == namespace:
                return entry.v1
        return None

    def allocatable_blocks(self) -> list[Block]:
        """The memory manager's allocatable memory, as computed at (re)start."""
        return list(self._snapshot.allocatable)

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
