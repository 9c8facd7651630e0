"""Container ID <-> (pod UID, container name): kubelet's cm/containermap.ContainerMap.

The memory manager learns container IDs at AddContainer and needs them back at
RemoveContainer, which only receives the ID.
"""
from __future__ import annotations

from typing import Optional


class ContainerMapError(KeyError):
    """An ID or (pod, container) pair the map does not know; str(e) is kubelet's text."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ContainerMap:
    """containerID -> (podUID, containerName), in insertion order.

    Where Go walks its map in random order (a (pod, container) pair registered under
    several IDs), the first-registered ID wins here. A reverse index (pair -> its IDs in
    the map's order) makes every look-up O(1).
    """

    def __init__(self, entries: Optional[dict[str, tuple[str, str]]] = None):
        self._entries: dict[str, tuple[str, str]] = {}
        self._ids: dict[tuple[str, str], dict[str, None]] = {}  # (pod, container) -> IDs, map order
        for container_id, (pod_uid, container_name) in (entries or {}).items():
            self.add(pod_uid, container_name, container_id)

    def add(self, pod_uid: str, container_name: str, container_id: str) -> None:
        """Register (or re-register) a container ID; a known ID keeps its place in the map's
        order. Cost: O(1), or O(entries) when a known ID moves to another container."""
        ref = (pod_uid, container_name)
        old = self._entries.get(container_id)
        if old == ref:
            return
        self._entries[container_id] = ref
        if old is None:
            self._ids.setdefault(ref, {})[container_id] = None
            return
        self._forget_id(old, container_id)
        self._ids[ref] = {cid: None for cid, r in self._entries.items() if r == ref}

    def _forget_id(self, ref: tuple[str, str], container_id: str) -> None:
        """Drop one ID from the reverse index. Cost: O(1)."""
        ids = self._ids[ref]
        del ids[container_id]
        if not ids:
            del self._ids[ref]

    def remove_by_container_id(self, container_id: str) -> None:
        """Forget one ID (unknown IDs are ignored). Cost: O(1)."""
        ref = self._entries.pop(container_id, None)
        if ref is not None:
            self._forget_id(ref, container_id)

    def remove_by_container_ref(self, pod_uid: str, container_name: str) -> None:
        """Forget the ID registered for (pod, container), if any. Cost: O(1) (no error is built for
        an unknown ref: kubelet's AddContainer asks for every earlier init container)."""
        ids = self._ids.get((pod_uid, container_name))
        if ids:
            self.remove_by_container_id(next(iter(ids)))

    def has_ref(self, pod_uid: str, container_name: str) -> bool:
        """Whether some ID is registered for (pod, container). Cost: O(1)."""
        return (pod_uid, container_name) in self._ids

    def get_container_id(self, pod_uid: str, container_name: str) -> str:
        """The (first) ID registered for (pod, container). Cost: O(1)."""
        ids = self._ids.get((pod_uid, container_name))
        if ids:
            return next(iter(ids))
        raise ContainerMapError(f"container {container_name} not in ContainerMap for pod {pod_uid}")

    def get_container_ref(self, container_id: str) -> tuple[str, str]:
        """(pod UID, container name) of an ID. Cost: O(1)."""
        if container_id not in self._entries:
            raise ContainerMapError(f"containerID {container_id} not in ContainerMap")
        return self._entries[container_id]

    def items(self) -> list[tuple[str, tuple[str, str]]]:
        """A snapshot of (container_id, (pod_uid, container_name)) pairs."""
        return list(self._entries.items())

    def copy(self) -> "ContainerMap":
        """An independent copy."""
        return ContainerMap(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, container_id: object) -> bool:
        return container_id in self._entries
