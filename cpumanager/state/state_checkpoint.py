"""The checkpoint-backed store (kubelet's cpumanager state_checkpoint.go, v1.37).

At creation the state is restored from `<state_dir>/cpu_manager_state` (or a fresh checkpoint
is written when there is none); afterwards every change rewrites the file. A failed write is
only logged, as in kubelet.

Restore rules (NewCheckpointState / restoreState):
* the file is read through the v4 -> v3 -> v2 fallback of checkpoint.read_checkpoint;
* the stored policy name must equal the configured one (`static`, `none`);
* the shared pool and every container's cpuset must parse (`could not parse default CPU set
  "x": ...`, `could not parse cpuset "x" for container "c" in pod "p": ...`);
* pod-level entries are restored, and written, only with the PodLevelResourceManagers gate;
* any failure is reported as kubelet wraps it: `could not restore state from checkpoint: <reason>,
  please drain this node and delete the CPU manager checkpoint file "<path>" before restarting Kubelet`.
"""
from __future__ import annotations

import logging
from typing import Optional

from kubeinputs import gojson
from kubeinputs.cpuset import CPUSet, CPUSetError
from kubeinputs.goformat import go_quote
from state.checkpoint_errors import CheckpointError
from state.checkpoint_manager import CheckpointManager, FileOps
from state.checkpoint_store import CheckpointStore, open_checkpoint_manager

from cpumanager.errors import CPUManagerError
from cpumanager.state.checkpoint import DEFAULT_WRITE_FORMAT, FORMATS, LoadedCheckpoint, encode_checkpoint, \
    read_checkpoint
from cpumanager.state.state import ContainerCPUAssignments, PodCPUAssignments, State
from cpumanager.state.state_mem import MemoryState, in_memory_copy

log = logging.getLogger("cpumanager.state")


class CPUStateError(CPUManagerError):
    """The checkpoint-backed state could not be created; str() is kubelet's full message."""


def restore_error(path: str, reason: object) -> CPUStateError:
    """kubelet's wrapper around every restore failure."""
    return CPUStateError(
        f"could not restore state from checkpoint: {reason}, please drain this node and delete the CPU manager "
        f"checkpoint file {go_quote(path)} before restarting Kubelet"
    )


def parse_loaded(loaded: LoadedCheckpoint, policy_name: Optional[str]) -> tuple[CPUSet, ContainerCPUAssignments]:
    """restoreState's checks after reading: the policy name, the shared pool, every container's cpuset
    (pods and containers in sorted order, where Go's map order is random). Raises CheckpointError."""
    if policy_name is not None and policy_name != loaded.policy_name:
        raise CheckpointError(f"configured policy {go_quote(policy_name)} differs from state checkpoint policy "
                              f"{go_quote(loaded.policy_name)}")
    try:
        default = CPUSet.parse(loaded.default_cpu_set)
    except CPUSetError as err:
        raise CheckpointError(f"could not parse default CPU set {go_quote(loaded.default_cpu_set)}: {err}") from None
    assignments: ContainerCPUAssignments = {}
    for pod in sorted(loaded.entries):
        assignments[pod] = {}
        for container in sorted(loaded.entries[pod]):
            text = loaded.entries[pod][container]
            try:
                assignments[pod][container] = CPUSet.parse(text)
            except CPUSetError as err:
                raise CheckpointError(f"could not parse cpuset {go_quote(text)} for container {go_quote(container)} "
                                      f"in pod {go_quote(pod)}: {err}") from None
    return default, assignments


class CheckpointState(CheckpointStore, State):
    """State backed by the checkpoint file (`state.checkpoint_store.CheckpointStore`); readers serve the
    cache, writers persist at once."""

    def __init__(self, manager: CheckpointManager, checkpoint_name: str, policy_name: str, *,
                 pod_level_resource_managers: bool = False, write_format: str = DEFAULT_WRITE_FORMAT):
        """A store over `manager`'s folder; call restore() before use."""
        super().__init__(manager, checkpoint_name, policy_name, write_format, FORMATS, log)
        self._cache = MemoryState()
        self.pod_level_resource_managers = pod_level_resource_managers

    def __deepcopy__(self, memo: dict) -> MemoryState:
        """A copy of the store is its content held in memory (`in_memory_copy`): the file, and every
        later write of it, stay the original's (a copy of a node)."""
        return in_memory_copy(self)

    def _restore_error(self, reason: object) -> CPUStateError:
        """kubelet's wrapper around a restore failure of the CPU manager's checkpoint."""
        return restore_error(self.path, reason)

    def _load(self, blob: bytes) -> None:
        """restoreState after reading: the v4 -> v3 -> v2 fallback, the policy name, every cpuset parsed;
        then the cache holds the state."""
        try:
            loaded = read_checkpoint(blob, self.pod_level_resource_managers)
            default, assignments = parse_loaded(loaded, self.policy_name)
        except (CheckpointError, gojson.GoJSONError) as err:
            raise restore_error(self.path, err) from err
        self._cache.set_default_cpu_set(default)
        self._cache.set_cpu_assignments(assignments)
        if self.pod_level_resource_managers:
            self._cache.set_pod_cpu_assignments(loaded.pod_entries)
        self.restored_format = loaded.format
        log.debug("CPU manager state: restored from checkpoint (%s)", loaded.format)

    def checkpoint_bytes(self) -> bytes:
        """The bytes the next write puts in the file."""
        cache = self._cache
        pods = cache.get_pod_cpu_assignments() if self.pod_level_resource_managers else {}
        return encode_checkpoint(self.policy_name, cache.get_default_cpu_set(), cache.get_cpu_assignments(), pods,
                                 self.write_format)

    # readers

    def get_cpu_set(self, pod_uid: str, container_name: str) -> Optional[CPUSet]:
        """The container's exclusive CPUs, or None."""
        return self._cache.get_cpu_set(pod_uid, container_name)

    def get_default_cpu_set(self) -> CPUSet:
        """The shared pool."""
        return self._cache.get_default_cpu_set()

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        """The container's exclusive CPUs, else the shared pool."""
        return self._cache.get_cpu_set_or_default(pod_uid, container_name)

    def get_cpu_assignments(self) -> ContainerCPUAssignments:
        """A copy of every assignment."""
        return self._cache.get_cpu_assignments()

    def get_pod_cpu_set(self, pod_uid: str) -> Optional[CPUSet]:
        """The pod-level set, or None."""
        return self._cache.get_pod_cpu_set(pod_uid)

    def get_pod_cpu_assignments(self) -> PodCPUAssignments:
        """A copy of every pod-level set."""
        return self._cache.get_pod_cpu_assignments()

    def assigned_containers(self) -> list[tuple[str, str]]:
        """(pod UID, container name) of every assignment, sorted."""
        return self._cache.assigned_containers()

    # writers: change the cache, then write the whole checkpoint

    def set_cpu_set(self, pod_uid: str, container_name: str, cpuset: CPUSet) -> None:
        """Store a container's exclusive CPUs, then write."""
        self._cache.set_cpu_set(pod_uid, container_name, cpuset)
        self._store_logged()

    def set_default_cpu_set(self, cpuset: CPUSet) -> None:
        """Store the shared pool, then write."""
        self._cache.set_default_cpu_set(cpuset)
        self._store_logged()

    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None:
        """Replace every assignment, then write."""
        self._cache.set_cpu_assignments(assignments)
        self._store_logged()

    def set_pod_cpu_set(self, pod_uid: str, cpuset: CPUSet) -> None:
        """Store a pod-level set, then write."""
        self._cache.set_pod_cpu_set(pod_uid, cpuset)
        self._store_logged()

    def set_pod_cpu_assignments(self, assignments: PodCPUAssignments) -> None:
        """Replace every pod-level set, then write."""
        self._cache.set_pod_cpu_assignments(assignments)
        self._store_logged()

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container, then write."""
        self._cache.delete(pod_uid, container_name)
        self._store_logged()

    def delete_pod(self, pod_uid: str) -> None:
        """Forget a pod-level set, then write."""
        self._cache.delete_pod(pod_uid)
        self._store_logged()

    def clear_state(self) -> None:
        """Empty the state, then write."""
        self._cache.clear_state()
        self._store_logged()


def new_checkpoint_state(state_dir: str, checkpoint_name: str, policy_name: str, *,
                         pod_level_resource_managers: bool = False, write_format: str = DEFAULT_WRITE_FORMAT,
                         ops: Optional[FileOps] = None) -> CheckpointState:
    """NewCheckpointState: a store restored from (or creating) `<state_dir>/<checkpoint_name>`.
    Raises CPUStateError with kubelet's text."""
    manager = open_checkpoint_manager(state_dir, ops, CPUStateError)
    state = CheckpointState(manager, checkpoint_name, policy_name,
                            pod_level_resource_managers=pod_level_resource_managers, write_format=write_format)
    state.restore()
    return state
