"""The kubelet device manager (devicemanager/manager.go): device plugins' devices as the third hint provider.

The Manager owns the registered devices (what the plugins report), which container holds which
device, the devices a pod's finished init containers leave for later containers, and the
checkpoint `device-plugins/kubelet_internal_checkpoint` under the state folder. kubelet registers
it with the topology manager first, before the CPU manager and the memory manager
(container_manager_linux.go), and starts it last.

Lifecycle, as kubelet drives it:

* `new_manager(machine_info, affinity_store, state_dir, devices)`, then `start(active_pods)`:
  the checkpoint is restored (allocations and the resources it names), then every declared
  plugin registers and reports its devices (`update_devices`, which writes the checkpoint);
* admission: `get_topology_hints` / `get_pod_topology_hints`, then `allocate` per container
  (init containers first); `allocate_pod` does nothing (kubelet's device manager has no
  pod-level allocation);
* devices are released when their pod stops being active: kubelet's device manager has no
  RemoveContainer; `update_allocated_devices` (run at the start of every hint and allocate
  call, and by PodResources List) drops the pods `active_pods` no longer lists.

Where kubelet only logs (a checkpoint it cannot read: it continues with no allocation), the
manager does the same and keeps the error in `checkpoint_error`; what a readable checkpoint names
that the node does not have (devices, NUMA nodes) is restored as kubelet restores it and listed in
`checkpoint_problems`, for the node to report as warnings. `strict_checkpoint` turns both into a
start error instead.

Example: two GPUs on NUMA node 1 of a 2-node machine, the topology manager's stored affinity {1}:

>>> from kubeinputs.devices import parse_devices
>>> from kubeinputs.pod import parse_pod
>>> from topologymanager.hint import TopologyHint
>>> class Store:
...     def get_affinity(self, pod_uid, container_name): return TopologyHint(0b10, True)
>>> devices = parse_devices({"nvidia.com/gpu": [{"id": "g0", "numaNodes": [0]}, {"id": "g1", "numaNodes": [1]},
...                                             {"id": "g2", "numaNodes": [1]}]}, numa_nodes=[0, 1])
>>> pod = parse_pod({"metadata": {"name": "train"}, "spec": {"containers": [
...     {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}})
>>> manager = new_manager([0, 1], Store(), None, devices)
>>> manager.start(lambda: [pod])
>>> manager.get_topology_hints(pod, pod.containers[0])
{'nvidia.com/gpu': [TopologyHint([1], preferred=True), TopologyHint([0, 1], preferred=False)]}
>>> manager.allocate(pod, pod.containers[0])
>>> manager.get_devices("train", "c")
{'nvidia.com/gpu': {'g1': (1,), 'g2': (1,)}}
"""
from __future__ import annotations

import os
from typing import Callable, Iterable, Mapping, Optional, Protocol, Sequence, Union

from kubeinputs.devices import DeclaredDevices, Device
from kubeinputs.machine import MachineInfo
from state.checkpoint_errors import CheckpointNotFoundError
from state.checkpoint_manager import CheckpointManager, FileOps, StoreError
from topologymanager.hint import TopologyHint
from kubeinputs.pod import Container, Pod
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import DEVICE_MANAGER, NO_OBSERVER, Observer

from devicemanager.allocation import devices_to_allocate
from devicemanager.checkpoint import (DeviceCheckpointData, alloc_resp_problem, check_against_node, encode_checkpoint,
                                      read_checkpoint)
from devicemanager.constants import CHECKPOINT_DIR, CHECKPOINT_FILE_NAME, NODE_WITHOUT_TOPOLOGY
from devicemanager.device_state import DeviceState
from devicemanager.errors import DeviceCheckpointError, DeviceManagerError
from devicemanager.pod_devices import CheckpointEntry, DevicesPerNUMA
from devicemanager.topology_hints import get_pod_topology_hints, get_topology_hints

__all__ = ["ActivePodsFunc", "AffinityStore", "Manager", "new_manager", "EMPTY_ALLOCATE_RESPONSE"]

ActivePodsFunc = Callable[[], Sequence[Pod]]

# What a declared (simulated) plugin answers to Allocate: an empty ContainerAllocateResponse, whose
# protobuf encoding is zero bytes (the checkpoint writes "AllocResp":"").
EMPTY_ALLOCATE_RESPONSE = b""


class AffinityStore(Protocol):
    """The topology manager's Store: the merged hint stored for a container at admission."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint, or the zero hint for an unknown container."""


def _machine_nodes(machine_info: Union[MachineInfo, Iterable[int]]) -> list[int]:
    """The NUMA node ids of a MachineInfo (cadvisor's topology order), or of a plain list of ids."""
    topology = getattr(machine_info, "topology", None)
    if topology is None:
        return [int(n) for n in machine_info]
    return [node.node_id for node in topology]


def new_manager(machine_info: Union[MachineInfo, Iterable[int]], affinity_store: AffinityStore,
                state_dir: Optional[str], devices: Optional[Mapping[str, Iterable[Device]]] = None, *,
                strict_checkpoint: bool = False, observer: Observer = NO_OBSERVER) -> "Manager":
    """NewManagerImpl: a device manager for the machine's NUMA nodes (a MachineInfo or a list of ids).

    `state_dir` is kubelet's root folder (the checkpoint goes to `<state_dir>/device-plugins/`); None keeps
    everything in memory. `devices` are the plugins that register at start ({resource: devices}).
    `observer` hears the manager's hints and allocations (`topologymanager.observer`)."""
    declared: DeclaredDevices = {r: tuple(ds) for r, ds in (devices or {}).items()}
    return Manager(_machine_nodes(machine_info), affinity_store, state_dir, declared, strict_checkpoint, observer)


class Manager:
    """kubelet's device manager. Build with `new_manager`, then `start` before anything else."""

    def __init__(self, numa_nodes: list[int], affinity_store: AffinityStore, state_dir: Optional[str],
                 devices: DeclaredDevices, strict_checkpoint: bool = False, observer: Observer = NO_OBSERVER):
        self.numa_nodes = list(numa_nodes)
        self.observer = observer
        self.affinity_store = affinity_store
        self.state_dir = state_dir
        self.declared_devices = devices
        self.strict_checkpoint = strict_checkpoint
        self.file_ops = None  # the checkpoint's FileOps (None: the durable default); set before start
        self.checkpoint_error: Optional[DeviceCheckpointError] = None
        self.write_error: Optional[DeviceManagerError] = None
        self.skipped_entries: list[tuple[CheckpointEntry, str]] = []
        self.checkpoint_problems: list[DeviceCheckpointError] = []
        self._state = DeviceState()
        self._active_pods: Optional[ActivePodsFunc] = None
        self._started = False

    # ----- lifecycle ----------------------------------------------------------------------------

    @property
    def checkpoint_path(self) -> Optional[str]:
        """Where the checkpoint file lives (None: in memory only)."""
        if self.state_dir is None:
            return None
        return os.path.join(self.state_dir, CHECKPOINT_DIR, CHECKPOINT_FILE_NAME)

    def _checkpoint_manager(self) -> CheckpointManager:
        return CheckpointManager(os.path.join(self.state_dir or "", CHECKPOINT_DIR), self.file_ops)

    def start(self, active_pods: ActivePodsFunc) -> None:
        """Start: restore the checkpoint (kubelet: an unreadable one is logged and ignored), then let every
        declared plugin register its devices.

        Raises DeviceCheckpointError only with `strict_checkpoint` (an unreadable checkpoint, or one naming
        what the node does not have), and StoreError when the checkpoint folder cannot be used."""
        self._active_pods = active_pods
        self._state = DeviceState()
        self.checkpoint_error = None
        self.write_error = None
        self.skipped_entries = []
        self.checkpoint_problems = []
        self._started = True
        self._read_checkpoint()
        for resource in sorted(self.declared_devices):
            self.update_devices(resource, self.declared_devices[resource])

    def _read_checkpoint(self) -> None:
        """readCheckpoint: allocations and the registered resources (with no device until their plugin
        reports), or nothing when the file is missing or unreadable."""
        if self.state_dir is None or self._folder_listing() == []:  # no folder is created just to look
            return
        path = self.checkpoint_path
        try:
            blob = self._checkpoint_manager().read_blob(CHECKPOINT_FILE_NAME)
            data = read_checkpoint(blob, path)
        except CheckpointNotFoundError:
            return
        except (DeviceCheckpointError, StoreError) as failure:
            err = failure if isinstance(failure, DeviceCheckpointError) else DeviceCheckpointError("", str(failure), path)
            if self.strict_checkpoint:
                raise err from None
            self.checkpoint_error = err  # kubelet: "Continue after failing to read checkpoint file"
            return
        problems = check_against_node(data, self.declared_devices, self.numa_nodes, path)
        if problems and self.strict_checkpoint:
            raise problems[0]
        self.checkpoint_problems = problems  # kubelet restores such entries without a word
        self._restore(data)

    def _restore(self, data: DeviceCheckpointData) -> None:
        """fromCheckpointData and the registered resources, as kubelet applies them."""
        usable = []
        for entry in data.entries or []:
            problem = alloc_resp_problem(entry.alloc_resp or b"")
            if problem is not None:
                self.skipped_entries.append((entry, problem))  # kubelet: "Can't unmarshal allocResp"
                continue
            if entry.alloc_resp is None:
                entry = CheckpointEntry(entry.pod_uid, entry.container_name, entry.resource_name, entry.device_ids,
                                        EMPTY_ALLOCATE_RESPONSE)  # an absent answer decodes as an empty one
            usable.append(entry)
        self._state.pod_devices.from_checkpoint_data(usable)
        self._state.allocated = self._state.pod_devices.devices()
        for resource in data.registered_devices or {}:
            self._state.plugins.restore_resource(resource)

    def write_checkpoint(self) -> None:
        """writeCheckpoint: allocations and the healthy devices of every registered resource (in memory: nothing).

        Raises DeviceManagerError with kubelet's text when the file cannot be written."""
        if self.state_dir is None:
            return
        try:
            self._checkpoint_manager().write_blob(CHECKPOINT_FILE_NAME, self.checkpoint_bytes())
        except (OSError, StoreError) as err:
            raise DeviceManagerError(f'failed to write checkpoint file "{CHECKPOINT_FILE_NAME}": {err}') from err

    def checkpoint_data(self) -> DeviceCheckpointData:
        """The checkpoint's content now: entries (None when there is none, written as null) and the healthy
        devices of every registered resource, in the plugins' order."""
        plugins = self._state.plugins
        registered = {r: plugins.ordered(r, healthy) for r, healthy in plugins.healthy.items()}
        return DeviceCheckpointData(self._state.pod_devices.to_checkpoint_data() or None, registered)

    def checkpoint_bytes(self) -> bytes:
        """What writeCheckpoint writes now (also without a state folder)."""
        return encode_checkpoint(self.checkpoint_data())

    def update_devices(self, resource: str, devices: Iterable[Device]) -> None:
        """A plugin's ListAndWatch answer: `resource` now has exactly `devices` (health included); the
        checkpoint is written (a failure is kept in `write_error`: kubelet logs it and goes on)."""
        self._started_state()
        self._state.plugins.update(resource, devices)
        try:
            self.write_checkpoint()
        except DeviceManagerError as err:
            self.write_error = err

    def plugin_disconnected(self, resource: str) -> None:
        """PluginDisconnected: the resource's plugin went away; its devices turn unhealthy (kubelet writes
        no checkpoint here)."""
        state = self._started_state()
        if resource in state.plugins.endpoints:
            state.plugins.mark_unhealthy(resource)

    def keep_in_memory(self) -> None:
        """From now on nothing of this manager reaches a file: no checkpoint is written or read (a copy
        of a node). Cost: O(1)."""
        self.state_dir = None

    def can_have_opinion(self) -> bool:
        """Whether any pod could get hints or an Allocate answer other than "no preference" from this manager:
        some plugin is declared, or a checkpoint may name resources (kubelet keeps those registered, with no
        device until their plugin comes back). A manager with neither answers every pod with an empty hint
        map and allocates nothing. Asked before start."""
        if self.declared_devices:
            return True
        listing = self._folder_listing()
        return listing is None or CHECKPOINT_FILE_NAME in listing  # None: unknown, so it is asked

    def _folder_listing(self) -> Optional[list[str]]:
        """The names in the checkpoint folder, [] when there is no folder (nothing is created to look), None
        when it cannot be listed (start then reports what is wrong)."""
        if self.state_dir is None:
            return []
        try:
            return (self.file_ops or FileOps()).list_dir(os.path.join(self.state_dir, CHECKPOINT_DIR))
        except FileNotFoundError:
            return []
        except OSError:
            return None

    def should_reset_extended_resource_capacity(self) -> bool:
        """ShouldResetExtendedResourceCapacity: no checkpoint in the folder (the node was recreated)."""
        if self.state_dir is None:
            return False
        try:
            return not self._checkpoint_manager().list_checkpoints()
        except (OSError, StoreError):
            return False

    def _started_state(self) -> DeviceState:
        """The state; using the manager before start is an error."""
        if not self._started:
            raise DeviceManagerError("device manager is not started")
        return self._state

    # ----- stale state --------------------------------------------------------------------------

    def update_allocated_devices(self) -> None:
        """UpdateAllocatedDevices: free the devices of every pod `active_pods` no longer lists (the checkpoint
        is not rewritten here, as in kubelet: it still names them until the next write)."""
        state = self._started_state()
        holding = state.pod_devices.pods()
        if not holding:  # nothing to free (a node without device allocations asks for no pod list)
            return
        active = {pod.uid for pod in (self._active_pods() if self._active_pods is not None else [])}
        stale = holding - active
        if not stale:
            return
        state.pod_devices.delete(sorted(stale))
        state.allocated = state.pod_devices.devices()

    # ----- hint provider ------------------------------------------------------------------------

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """GetTopologyHints: container-scope hints per device resource the container asks for (reported to
        the observer)."""
        self.update_allocated_devices()
        hints = get_topology_hints(self._state, self.numa_nodes, pod, container)
        self.observer.hints_given(DEVICE_MANAGER, pod, container, hints)
        return hints

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """GetPodTopologyHints: pod-scope hints per device resource the pod asks for (reported)."""
        self.update_allocated_devices()
        hints = get_pod_topology_hints(self._state, self.numa_nodes, pod)
        self.observer.hints_given(DEVICE_MANAGER, pod, None, hints)
        return hints

    def allocate(self, pod: Pod, container: Container) -> None:
        """Allocate: give the container its devices; raises DeviceManagerError (kubelet's text) to refuse.

        An init container's devices become re-usable by the containers after it (a sidecar's do not);
        an app container's devices stop being re-usable. The call's start and end are reported to the
        observer."""
        self.observer.allocation_started(DEVICE_MANAGER, pod, container)
        try:
            self._allocate(pod, container)
        except Exception as err:
            self.observer.allocation_done(DEVICE_MANAGER, pod, container, err)
            raise
        self.observer.allocation_done(DEVICE_MANAGER, pod, container, None)

    def _allocate(self, pod: Pod, container: Container) -> None:
        """Allocate's work."""
        state = self._started_state()
        uid = pod.uid
        state.to_reuse.setdefault(uid, {})
        for other in [p for p in state.to_reuse if p != uid]:
            del state.to_reuse[other]
        reuse = state.to_reuse[uid]
        for init in pod.init_containers:
            if init.name == container.name:
                self._allocate_container_resources(pod, container, reuse)
                if getattr(init, "restart_policy", None) == "Always":
                    state.pod_devices.remove_container_allocated_resources(uid, container.name, reuse)
                else:
                    state.pod_devices.add_container_allocated_resources(uid, container.name, reuse)
                return
        self._allocate_container_resources(pod, container, reuse)
        state.pod_devices.remove_container_allocated_resources(uid, container.name, reuse)

    def allocate_pod(self, pod: Pod) -> None:
        """AllocatePod (PodLevelResourceManagers): kubelet's device manager allocates per container only."""
        self._started_state()

    def _allocate_container_resources(self, pod: Pod, container: Container, reuse: dict[str, set[str]]) -> None:
        """allocateContainerResources: every device plugin resource in the container's limits (sorted by name:
        Go's map order is random); the checkpoint is written when something was allocated."""
        state = self._state
        updated = False
        changed = False
        for resource, quantity in sorted((container.resources.limits or {}).items()):
            if not state.is_device_plugin_resource(resource):
                continue
            if not updated:
                self.update_allocated_devices()
                updated = True
            hint = self.affinity_store.get_affinity(pod.uid, container.name)
            picked = devices_to_allocate(state, pod.uid, container.name, resource, quantity.value_bytes(),
                                         reuse.get(resource, set()), hint)
            if not picked:
                continue
            changed = True
            per_numa: DevicesPerNUMA = {}
            for device_id in picked:
                device = state.plugins.device(resource, device_id)
                for node in (device.numa_nodes if device is not None and device.numa_nodes else (NODE_WITHOUT_TOPOLOGY,)):
                    per_numa.setdefault(node, []).append(device_id)
            state.pod_devices.insert(pod.uid, container.name, resource, per_numa, EMPTY_ALLOCATE_RESPONSE)
        if changed:
            self.write_checkpoint()

    # ----- readers ------------------------------------------------------------------------------

    def is_device_plugin_resource(self, resource: str) -> bool:
        """Whether the resource is a device plugin resource (registered, or devices of it are allocated)."""
        return self._started_state().is_device_plugin_resource(resource)

    def get_devices(self, pod_uid: str, container_name: str) -> Optional[dict[str, dict[str, Optional[tuple[int, ...]]]]]:
        """GetDevices: {resource: {device ID: NUMA nodes recorded for it (None: no topology)}}, None when the
        container holds nothing."""
        return self._started_state().pod_devices.get_container_devices(pod_uid, container_name)

    def get_allocatable_devices(self) -> dict[str, dict[str, Device]]:
        """GetAllocatableDevices: the healthy devices per resource."""
        return self._started_state().plugins.allocatable()

    def get_capacity(self) -> tuple[dict[str, int], dict[str, int]]:
        """GetCapacity's counts: (capacity, allocatable) per resource."""
        return self._started_state().plugins.capacity()

    def allocated_devices(self) -> dict[str, set[str]]:
        """The devices in use per resource (a copy; resources with none left out)."""
        return {r: set(ids) for r, ids in self._started_state().allocated.items() if ids}

    def state(self) -> DeviceState:
        """The allocation state (for tools and tests: read it, do not change it)."""
        return self._started_state()
