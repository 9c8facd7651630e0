"""Explaining one pod on a live node, read-only (`memorymanager explain --node ROOT POD`).

The node is read from under ROOT as kubelet and cadvisor see it: the machine from
`ROOT/sys/devices/system/node`, the kubelet configuration from
`ROOT/var/lib/kubelet/config.yaml` (or a given file), the memory manager's state from
`ROOT/var/lib/kubelet/memory_manager_state`. The checkpoint is read once, through the reader
of `checkpoint inspect|verify` (a folder, a FIFO, a device or a symbolic link loop in its
place is refused as they refuse it), into an in-memory file store: the simulated kubelet
restores it from there and writes there, so nothing under ROOT, nor any temporary folder,
is ever written. The pods of the checkpoint count as running (otherwise kubelet's
stale-state cleanup would drop them); their names are not in the checkpoint, so they are
shown by UID.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from kubeinputs.collector import collector_paused
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


def checkpoint_pods(state: StateReader) -> list[Pod]:
    """The pods (by UID, with their container names) the restored state holds memory for."""
    pods = {uid: Pod(name=uid, uid=uid, containers=[Container(name=name) for name in containers])
            for uid, containers in state.get_memory_assignments().items()}
    for uid in state.get_pod_memory_assignments():
        pods.setdefault(uid, Pod(name=uid, uid=uid))
    return list(pods.values())


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


def open_live_node(root: str, kubelet_config: Optional[str], limits: Limits = DEFAULT_LIMITS) -> SimulatedNode:
    """A started simulated node for the node under ROOT, its checkpoint held in memory, read within `limits`."""
    sysfs, default_config, checkpoint = kubelet_paths(root)
    if not Path(root).is_dir():
        raise InputError(root, "no such folder (--node takes the root of a node's file system, / for this machine)")
    machine = read_machine_info(sysfs, limits)
    config_path = Path(kubelet_config) if kubelet_config else default_config
    if not config_path.is_file():
        raise InputError(str(config_path), "no kubelet configuration file here (give one with --kubelet-config)")
    config = load_kubelet_config_file(str(config_path), limits=limits)
    blob = read_checkpoint_file(str(checkpoint), limits)
    node = SimulatedNode(machine, config, str(checkpoint.parent), limits=limits)
    node.file_ops = MemoryFileOps({} if blob is None else {str(checkpoint): blob})
    try:
        node.start()
    except KubeletStartError as exc:
        problem = None if blob is None else _load_error(checkpoint, blob)
        if problem is not None:
            raise problem from None
        raise InputError(str(checkpoint if blob is not None else config_path),
                         f"kubelet would not start with this machine, configuration and state: {exc}") from None
    node.assume_running(checkpoint_pods(node.state()))
    return node


def explain_on_node(root: str, pod_path: str, kubelet_config: Optional[str] = None,
                    hints_path: Optional[str] = None, keep: Optional[dict] = None,
                    what_if: bool = False, limits: Limits = DEFAULT_LIMITS) -> Explanation:
    """The explanation of admitting the pod of `pod_path` on the node under ROOT (nothing is written
    there); `keep` receives the node's state after the admission and the pod names by UID; `what_if`
    adds part 6."""
    pod = load_pod_file(pod_path, limits=limits)
    hints = load_file(hints_path, limits) if hints_path is not None else None
    with collector_paused():  # a node of 50,000 containers: see kubeinputs.collector
        node = open_live_node(root, kubelet_config, limits)
        extra = None
        if hints_path is not None:  # their shape is the node's topologyManagerScope's
            try:
                extra = hint_provider(pod, hints, node.config.topology_manager_scope)
            except InputError as exc:
                raise InputError(f"{hints_path}: {exc.where}", exc.reason) from None
        if keep is not None:
            keep["names"] = {p.uid: p.name for p in node.active_pods()} | {pod.uid: pod.name}
        return explain_pod(node, pod, extra, "admit", keep, what_if, disposable=True)
