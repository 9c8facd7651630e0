"""The checkpoint-backed state store (kubelet's state_checkpoint.go, v1.37).

At creation it restores the state from `<state_dir>/memory_manager_state` (or writes a
fresh checkpoint when there is none); afterwards every change is written to the file at
once. As in kubelet, a failed write is only logged: the in-memory state stays the truth
until the next successful write.

Restore rules (NewCheckpointState / restoreState):
* the file is read through the v3 -> v2 -> v1 fallback of checkpoint.read_checkpoint;
* the stored policy name must equal the configured one, exactly (`Static` is not `static`);
* pod-level entries are restored, and written, only with the PodLevelResourceManagers gate;
* any failure is reported as kubelet wraps it: `could not restore state from checkpoint:
  <reason>, please drain this node and delete the memory manager checkpoint file "<path>"
  before restarting Kubelet`.
"""
from __future__ import annotations

import logging
from typing import Optional, Sequence

from kubeinputs import gojson
from kubeinputs.goformat import go_quote
from state.checkpoint import DEFAULT_WRITE_FORMAT, FORMATS, LoadedCheckpoint, read_checkpoint
from state.checkpoint_errors import CheckpointError
from state.checkpoint_writer import encode_checkpoint
from state.checkpoint_manager import CheckpointManager, FileOps
from state.checkpoint_store import CheckpointStore, go_join, open_checkpoint_manager  # noqa: F401 (go_join: tools')
from kubeinputs.checksum import FNVMemo
from state.state import State
from state.state_mem import MemoryState, in_memory_copy
from state.types import Block, ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments


log = logging.getLogger("memorymanager.state")


class StateError(Exception):
    """The checkpoint-backed state could not be created; str() is kubelet's full message."""


def restore_error(path: str, reason: object) -> StateError:
    """kubelet's wrapper around every restore failure."""
    return StateError(
        f"could not restore state from checkpoint: {reason}, please drain this node and delete "
        f"the memory manager checkpoint file {go_quote(path)} before restarting Kubelet"
    )


def policy_mismatch(configured: str, stored: str) -> CheckpointError:
    """restoreState's policy check."""
    return CheckpointError(
        f"[memorymanager] configured policy {go_quote(configured)} differs from state checkpoint policy {go_quote(stored)}"
    )


def nil_memory_table(loaded: LoadedCheckpoint) -> Optional[str]:
    """What in a restored machine state is null where kubelet dereferences it (NUMANodeMap.Clone: a
    node's state, or one of its memory tables), e.g. `the memory table of NUMA node 0 resource
    "memory"`; None when nothing is."""
    for node_id, node in sorted((loaded.machine_state or {}).items()):
        if node is None:
            return f"the state of NUMA node {node_id}"
        if node.memory_map is None:
            continue
        for resource, table in sorted(node.memory_map.items()):
            if table is None:
                return f"the memory table of NUMA node {node_id} resource {go_quote(resource)}"
    return None


def check_loadable(loaded: LoadedCheckpoint, policy_name: Optional[str], path: str) -> None:
    """The checks restoreState makes after reading: policy name, then the panic case."""
    if policy_name is not None and policy_name != loaded.policy_name:
        raise restore_error(path, policy_mismatch(policy_name, loaded.policy_name))
    where = nil_memory_table(loaded)
    if where is not None:
        raise StateError(
            f"kubelet would crash restoring {go_quote(path)}: {where} is null "
            f"(nil pointer dereference in NUMANodeMap.Clone); drain this node and delete the file"
        )


class CheckpointState(CheckpointStore, State):
    """State backed by a checkpoint file (`checkpoint_store.CheckpointStore`); readers return copies,
    writers persist at once."""

    def __init__(
        self,
        manager: CheckpointManager,
        checkpoint_name: str,
        policy_name: str,
        *,
        pod_level_resource_managers: bool = False,
        write_format: str = DEFAULT_WRITE_FORMAT,
    ):
        """A store over `manager`'s folder; call restore() before use."""
        super().__init__(manager, checkpoint_name, policy_name, write_format, FORMATS, log)
        self._cache = MemoryState()
        self.pod_level_resource_managers = pod_level_resource_managers
        self._pod_pieces: dict = {}  # pod UID -> encoded texts of its entries (see encode_checkpoint)
        self._checksum_memo = FNVMemo()  # checksums of unchanged pieces, from one write to the next

    def __deepcopy__(self, memo: dict) -> MemoryState:
        """A copy of the store is its content held in memory (`in_memory_copy`): the file, and every
        later write of it, stay the original's (a copy of a node, `SimulatedNode.fork`)."""
        return in_memory_copy(self)

    def _restore_error(self, reason: object) -> StateError:
        """kubelet's wrapper around a restore failure of the memory manager's checkpoint."""
        return restore_error(self.path, reason)

    def _load(self, blob: bytes) -> None:
        """restoreState after reading: the v3 -> v2 -> v1 fallback, the policy name, the nil tables kubelet
        crashes on; then the cache holds the state."""
        try:
            loaded = read_checkpoint(blob)
        except (CheckpointError, gojson.GoJSONError) as err:
            raise restore_error(self.path, err) from err
        check_loadable(loaded, self.policy_name, self.path)
        self._cache.set_machine_state(loaded.machine_state)
        self._cache.set_memory_assignments(loaded.entries)
        self._pod_pieces.clear()
        if self.pod_level_resource_managers:
            self._cache.set_pod_memory_assignments(loaded.pod_entries)
        self.restored_format = loaded.format
        log.debug("State checkpoint: restored state from checkpoint (%s)", loaded.format)

    def checkpoint_bytes(self) -> bytes:
        """The bytes the next write would put in the file (encoded from the cache itself, not from
        copies: encoding only reads, and copying every entry on every write made n writes O(n^2))."""
        cache = self._cache
        pod_entries = cache._pod_assignments if self.pod_level_resource_managers else None
        return encode_checkpoint(
            self.policy_name,
            cache._machine_state,
            cache._assignments,
            pod_entries,
            self.write_format,
            memo=self._checksum_memo,
            pod_pieces=self._pod_pieces,
        )

    # readers

    def get_machine_state(self) -> NUMANodeMap:
        """A copy of the NUMA node map."""
        return self._cache.get_machine_state()

    def get_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[list[Block]]:
        """A copy of a container's blocks, or None."""
        return self._cache.get_memory_blocks(pod_uid, container_name)

    def peek_memory_blocks(self, pod_uid: str, container_name: str) -> Optional[Sequence[Block]]:
        """The cached blocks themselves (read-only: see State.peek_memory_blocks), or None."""
        return self._cache.peek_memory_blocks(pod_uid, container_name)

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        """A copy of all container assignments."""
        return self._cache.get_memory_assignments()

    def assigned_containers(self) -> list[tuple[str, str]]:
        """(pod UID, container name) of every container entry, sorted. Cost: O(c log c)."""
        return self._cache.assigned_containers()

    def get_pod_memory_blocks(self, pod_uid: str) -> Optional[list[Block]]:
        """A copy of a pod's pod-level blocks, or None."""
        return self._cache.get_pod_memory_blocks(pod_uid)

    def get_pod_memory_assignments(self) -> PodMemoryAssignments:
        """A copy of all pod-level assignments."""
        return self._cache.get_pod_memory_assignments()

    # writers: change the cache, then write the whole checkpoint

    def set_machine_state(self, memory_map: Optional[NUMANodeMap]) -> None:
        """Store the NUMA node map, then write the checkpoint."""
        self._cache.set_machine_state(memory_map)
        self._store_logged()

    def adopt_machine_state(self, memory_map: Optional[NUMANodeMap]) -> None:
        """Store a NUMA node map handed over by a caller that never uses it again (no copy; see
        MemoryState.adopt_machine_state), then write the checkpoint."""
        self._cache.adopt_machine_state(memory_map)
        self._store_logged()

    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Optional[list[Block]]) -> None:
        """Store a container's blocks, then write the checkpoint."""
        self._cache.set_memory_blocks(pod_uid, container_name, blocks)
        self._pod_pieces.pop(pod_uid, None)
        self._store_logged()

    def set_memory_assignments(self, assignments: Optional[ContainerMemoryAssignments]) -> None:
        """Replace all container assignments, then write the checkpoint."""
        self._cache.set_memory_assignments(assignments)
        self._pod_pieces.clear()
        self._store_logged()

    def set_pod_memory_blocks(self, pod_uid: str, blocks: Optional[list[Block]]) -> None:
        """Store a pod's pod-level blocks, then write the checkpoint."""
        self._cache.set_pod_memory_blocks(pod_uid, blocks)
        self._store_logged()

    def set_pod_memory_assignments(self, assignments: Optional[PodMemoryAssignments]) -> None:
        """Replace all pod-level assignments, then write the checkpoint."""
        self._cache.set_pod_memory_assignments(assignments)
        self._store_logged()

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container, then write the checkpoint."""
        self._cache.delete(pod_uid, container_name)
        self._pod_pieces.pop(pod_uid, None)
        self._store_logged()

    def delete_pod(self, pod_uid: str) -> None:
        """Forget a pod's pod-level blocks, then write the checkpoint."""
        self._cache.delete_pod(pod_uid)
        self._store_logged()

    def clear_state(self) -> None:
        """Empty the state, then write the checkpoint."""
        self._cache.clear_state()
        self._pod_pieces.clear()
        self._store_logged()


def new_checkpoint_state(
    state_dir: str,
    checkpoint_name: str,
    policy_name: str,
    *,
    pod_level_resource_managers: bool = False,
    write_format: str = DEFAULT_WRITE_FORMAT,
    ops: Optional[FileOps] = None,
) -> CheckpointState:
    """NewCheckpointState: a store restored from (or creating) `<state_dir>/<checkpoint_name>`.

    `write_format` picks the format written (v1, v2, v3; default what kubelet v1.37 writes,
    v3); `ops` replaces the file system calls (tests). Raises StateError with kubelet's text.
    """
    manager = open_checkpoint_manager(state_dir, ops, StateError)
    state = CheckpointState(
        manager,
        checkpoint_name,
        policy_name,
        pod_level_resource_managers=pod_level_resource_managers,
        write_format=write_format,
    )
    state.restore()
    return state
