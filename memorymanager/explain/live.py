"""Explaining one pod on a live node, read-only (`memorymanager explain --node ROOT POD`).

The node is read from under ROOT as kubelet and cadvisor see it: the machine (NUMA nodes and
CPU topology) from `ROOT/sys/devices/system/node`, the kubelet configuration from
`ROOT/var/lib/kubelet/config.yaml` (or a given file), the managers' states from
`ROOT/var/lib/kubelet/memory_manager_state`, `cpu_manager_state` and
`device-plugins/kubelet_internal_checkpoint`, and the device plugins' devices from a devices
file when given (sysfs does not list plugins; without it the device checkpoint's resources are
known with no device, as kubelet knows them before their plugins register again). Each
checkpoint is read once, through the reader of `checkpoint inspect|verify` (a folder, a FIFO, a
device or a symbolic link loop in its place is refused as they refuse it), into an in-memory
file store: the simulated kubelet restores them from there and writes there, so nothing under
ROOT, nor any temporary folder, is ever written. A checkpoint kubelet cannot load is refused
naming the file: for the memory and CPU managers kubelet would not start; an unreadable device
checkpoint kubelet would ignore (starting with no device allocation), which would make the
explanation wrong, and with a devices file an entry naming a device, resource or NUMA node the
node lacks is refused as `checkpoint verify --devices` refuses it. The pods of the checkpoints
count as running (otherwise kubelet's stale-state cleanup would drop them); their names are not
in the checkpoints, so they are shown by UID.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from cpumanager.state import CHECKPOINT_FILE_NAME as CPU_CHECKPOINT_FILE_NAME
from cpumanager.state.checkpoint import read_checkpoint as read_cpu_checkpoint
from devicemanager.checkpoint import check_against_node, read_checkpoint as read_device_checkpoint
from devicemanager.constants import CHECKPOINT_DIR as DEVICE_CHECKPOINT_DIR
from devicemanager.constants import CHECKPOINT_FILE_NAME as DEVICE_CHECKPOINT_FILE_NAME
from devicemanager.errors import DeviceCheckpointError
from kubeinputs.collector import collector_paused
from kubeinputs.devices import DeclaredDevices, load_devices_file
from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import load_kubelet_config_file
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.pod import Container, Pod, load_pod_file
from kubeinputs.reader import load_file
from kubeinputs.sysfs import read_machine_info
from memorymanager.explain.build import explain_pod
from memorymanager.explain.model import Explanation
from memorymanager.node.api import hint_provider
from memorymanager.node.simulated_node import KubeletStartError, SimulatedNode
from state import CHECKPOINT_FILE_NAME
from state.checkpoint_manager import MemoryFileOps, read_checkpoint_file
from state.state import StateReader


def kubelet_paths(root: str) -> tuple[Path, Path, Path]:
    """(sysfs root, default kubelet config, checkpoint file) under ROOT."""
    base = Path(root)
    return base / "sys", base / "var" / "lib" / "kubelet" / "config.yaml", base / "var" / "lib" / "kubelet" / CHECKPOINT_FILE_NAME


def manager_checkpoint_paths(root: str) -> tuple[Path, Path]:
    """(cpu_manager_state, device-plugins/kubelet_internal_checkpoint) under ROOT."""
    kubelet = Path(root) / "var" / "lib" / "kubelet"
    return kubelet / CPU_CHECKPOINT_FILE_NAME, kubelet / DEVICE_CHECKPOINT_DIR / DEVICE_CHECKPOINT_FILE_NAME


def checkpoint_pods(state: StateReader, cpu_assignments: Optional[dict[str, dict]] = None,
                    device_containers: Optional[dict[str, set[str]]] = None) -> list[Pod]:
    """The pods (by UID, with their container names) the restored states hold memory, CPUs or devices for."""
    names: dict[str, list[str]] = {}
    for uid, containers in state.get_memory_assignments().items():
        names.setdefault(uid, []).extend(containers)
    for source in (cpu_assignments or {}, device_containers or {}):
        for uid, containers in source.items():
            known = names.setdefault(uid, [])
            known.extend(sorted(c for c in containers if c not in known))
    for uid in state.get_pod_memory_assignments():
        names.setdefault(uid, [])
    return [Pod(name=uid, uid=uid, containers=[Container(name=name) for name in containers])
            for uid, containers in names.items()]


def _device_containers(blob: Optional[bytes], path: Path) -> dict[str, set[str]]:
    """Pod UID -> container names of the device checkpoint's entries (read already, so it loads)."""
    if blob is None:
        return {}
    found: dict[str, set[str]] = {}
    for entry in read_device_checkpoint(blob, str(path)).entries or []:
        found.setdefault(entry.pod_uid, set()).add(entry.container_name)
    return found


def _check_device_checkpoint(path: Path, blob: Optional[bytes], devices: Optional[DeclaredDevices],
                             numa_nodes: list[int]) -> None:
    """Refuse a device checkpoint kubelet cannot read (it would silently start without its allocations) and,
    with declared devices, one naming what the node lacks (as `checkpoint verify --devices` does)."""
    if blob is None:
        return
    try:
        data = read_device_checkpoint(blob, str(path))
    except DeviceCheckpointError as err:
        raise InputError(str(path), "kubelet cannot read this device checkpoint and would start with no device "
                         f"allocation, so the explanation would be wrong: {err}") from None
    if devices is not None:
        problems = check_against_node(data, devices, numa_nodes, str(path))
        if problems:
            raise InputError(str(path), f"this node cannot account for the checkpoint's entries: {problems[0]} "
                             "(kubelet would restore them without a word)") from None


def _cpu_load_error(path: Path, blob: bytes) -> Optional[InputError]:
    """kubelet's reason for not loading the CPU checkpoint bytes, or None when they load."""
    from kubeinputs.gojson import GoJSONError
    from state.checkpoint_errors import CheckpointError

    try:
        read_cpu_checkpoint(blob, pod_level_resource_managers=True)
    except (CheckpointError, GoJSONError) as exc:
        return InputError(str(path), f"kubelet could not load this checkpoint: {exc}")
    return None


def _load_error(path: Path, blob: bytes) -> Optional[InputError]:
    """kubelet's reason for not loading the checkpoint bytes, or None when they load."""
    from kubeinputs.gojson import GoJSONError
    from state.checkpoint import read_checkpoint
    from state.checkpoint_errors import CheckpointError

    try:
        read_checkpoint(blob)
    except (CheckpointError, GoJSONError) as exc:
        return InputError(str(path), f"kubelet could not load this checkpoint: {exc}")
    return None


def open_live_node(root: str, kubelet_config: Optional[str], limits: Limits = DEFAULT_LIMITS,
                   devices_path: Optional[str] = None) -> SimulatedNode:
    """A started simulated node for the node under ROOT, its checkpoints held in memory, read within `limits`;
    `devices_path` declares the device plugins' devices (kubeinputs.devices)."""
    sysfs, default_config, checkpoint = kubelet_paths(root)
    cpu_checkpoint, device_checkpoint = manager_checkpoint_paths(root)
    if not Path(root).is_dir():
        raise InputError(root, "no such folder (--node takes the root of a node's file system, / for this machine)")
    machine = read_machine_info(sysfs, limits)
    numa_nodes = [n.node_id for n in machine.topology]
    config_path = Path(kubelet_config) if kubelet_config else default_config
    if not config_path.is_file():
        raise InputError(str(config_path), "no kubelet configuration file here (give one with --kubelet-config)")
    config = load_kubelet_config_file(str(config_path), limits=limits)
    devices = None if devices_path is None else load_devices_file(devices_path, numa_nodes=numa_nodes, limits=limits)
    blobs = {path: read_checkpoint_file(str(path), limits) for path in (checkpoint, cpu_checkpoint, device_checkpoint)}
    _check_device_checkpoint(device_checkpoint, blobs[device_checkpoint], devices, numa_nodes)
    node = SimulatedNode(machine, config, str(checkpoint.parent), limits=limits, devices=devices)
    node.file_ops = MemoryFileOps({str(path): blob for path, blob in blobs.items() if blob is not None})
    try:
        node.start()
    except KubeletStartError as exc:
        blob, cpu_blob = blobs[checkpoint], blobs[cpu_checkpoint]
        problem = None if blob is None else _load_error(checkpoint, blob)
        if problem is None and cpu_blob is not None:
            problem = _cpu_load_error(cpu_checkpoint, cpu_blob)
        if problem is not None:
            raise problem from None
        if cpu_blob is not None and str(exc).startswith("start cpu manager error"):
            culprit = cpu_checkpoint
        else:
            culprit = checkpoint if blob is not None else config_path
        raise InputError(str(culprit), f"kubelet would not start with this machine, configuration and state: {exc}"
                         ) from None
    cpu_assignments = node.cpu_manager.state().get_cpu_assignments()
    node.assume_running(checkpoint_pods(node.state(), cpu_assignments,
                                        _device_containers(blobs[device_checkpoint], device_checkpoint)))
    return node


def explain_on_node(root: str, pod_path: str, kubelet_config: Optional[str] = None,
                    hints_path: Optional[str] = None, keep: Optional[dict] = None,
                    what_if: bool = False, limits: Limits = DEFAULT_LIMITS,
                    devices_path: Optional[str] = None) -> Explanation:
    """The explanation of admitting the pod of `pod_path` on the node under ROOT (nothing is written
    there); `keep` receives the node's state after the admission and the pod names by UID; `what_if`
    adds part 6; `devices_path` declares the device plugins' devices."""
    pod = load_pod_file(pod_path, limits=limits)
    hints = load_file(hints_path, limits) if hints_path is not None else None
    with collector_paused():  # a node of 50,000 containers: see kubeinputs.collector
        node = open_live_node(root, kubelet_config, limits, devices_path)
        extra = None
        if hints_path is not None:  # their shape is the node's topologyManagerScope's
            try:
                extra = hint_provider(pod, hints, node.config.topology_manager_scope)
            except InputError as exc:
                raise InputError(f"{hints_path}: {exc.where}", exc.reason) from None
        if keep is not None:
            keep["names"] = {p.uid: p.name for p in node.active_pods()} | {pod.uid: pod.name}
        return explain_pod(node, pod, extra, "admit", keep, what_if, disposable=True)
