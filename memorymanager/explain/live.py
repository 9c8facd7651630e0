"""Explaining one pod on a live node, read-only (`memorymanager explain --node ROOT POD`).

The node is read from under ROOT as kubelet and cadvisor see it: the machine from
`ROOT/sys/devices/system/node`, the kubelet configuration from
`ROOT/var/lib/kubelet/config.yaml` (or a given file), the memory manager's state from
`ROOT/var/lib/kubelet/memory_manager_state`. The checkpoint is copied into a temporary
folder before the simulated kubelet starts, so nothing under ROOT is ever written. The
pods of the checkpoint count as running (otherwise kubelet's stale-state cleanup would drop
them); their names are not in the checkpoint, so they are shown by UID.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from state import CHECKPOINT_FILE_NAME
from pathlib import Path
from typing import Optional

from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import load_kubelet_config_file
from kubeinputs.pod import Container, Pod, load_pod_file
from kubeinputs.reader import load_file
from kubeinputs.sysfs import read_machine_info
from memorymanager.explain.build import explain_pod
from memorymanager.explain.model import Explanation
from memorymanager.node.api import hint_provider
from memorymanager.node.simulated_node import KubeletStartError, SimulatedNode



def kubelet_paths(root: str) -> tuple[Path, Path, Path]:
    """(sysfs root, default kubelet config, checkpoint file) under ROOT."""
    base = Path(root)
    return base / "sys", base / "var" / "lib" / "kubelet" / "config.yaml", base / "var" / "lib" / "kubelet" / CHECKPOINT_FILE_NAME


def checkpoint_pods(path: Path) -> list[Pod]:
    """The pods (by UID, with their container names) the checkpoint holds memory for."""
    from state.checkpoint import read_checkpoint
    from state.checkpoint_errors import CheckpointError
    from kubeinputs.gojson import GoJSONError

    try:
        from kubeinputs.limits import read_bytes

        loaded = read_checkpoint(read_bytes(path, limit_name="max_checkpoint_bytes"))
    except InputError:
        raise
    except (CheckpointError, GoJSONError) as exc:
        raise InputError(str(path), f"kubelet could not load this checkpoint: {exc}") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror}") from None
    pods: dict[str, Pod] = {}
    for uid, containers in (loaded.entries or {}).items():
        pods[uid] = Pod(name=uid, uid=uid, containers=[Container(name=name) for name in (containers or {})])
    for uid in (loaded.pod_entries or {}):
        pods.setdefault(uid, Pod(name=uid, uid=uid))
    return list(pods.values())


def open_live_node(root: str, kubelet_config: Optional[str], state_dir: str) -> SimulatedNode:
    """A started simulated node for the node under ROOT, its checkpoint copied into `state_dir`."""
    sysfs, default_config, checkpoint = kubelet_paths(root)
    if not Path(root).is_dir():
        raise InputError(root, "no such folder (--node takes the root of a node's file system, / for this machine)")
    machine = read_machine_info(sysfs)
    config_path = Path(kubelet_config) if kubelet_config else default_config
    if not config_path.is_file():
        raise InputError(str(config_path), "no kubelet configuration file here (give one with --kubelet-config)")
    config = load_kubelet_config_file(str(config_path))
    pods: list[Pod] = []
    if checkpoint.is_file():
        pods = checkpoint_pods(checkpoint)
        shutil.copyfile(checkpoint, os.path.join(state_dir, CHECKPOINT_FILE_NAME))
    node = SimulatedNode(machine, config, state_dir)
    node.assume_running(pods)
    try:
        node.start()
    except KubeletStartError as exc:
        raise InputError(str(checkpoint if checkpoint.is_file() else config_path),
                         f"kubelet would not start with this machine, configuration and state: {exc}") from None
    return node


def explain_on_node(root: str, pod_path: str, kubelet_config: Optional[str] = None,
                    hints_path: Optional[str] = None, keep: Optional[dict] = None,
                    what_if: bool = False) -> Explanation:
    """The explanation of admitting the pod of `pod_path` on the node under ROOT (nothing is written
    there); `keep` receives the node's state after the admission and the pod names by UID; `what_if`
    adds part 6."""
    pod = load_pod_file(pod_path)
    hints = load_file(hints_path) if hints_path is not None else None
    state_dir = tempfile.mkdtemp(prefix="memorymanager-live-")
    try:
        node = open_live_node(root, kubelet_config, state_dir)
        extra = None
        if hints_path is not None:  # their shape is the node's topologyManagerScope's
            try:
                extra = hint_provider(pod, hints, node.config.topology_manager_scope)
            except InputError as exc:
                raise InputError(f"{hints_path}: {exc.where}", exc.reason) from None
        if keep is not None:
            keep["names"] = {p.uid: p.name for p in node.active_pods()} | {pod.uid: pod.name}
        return explain_pod(node, pod, extra, "admit", keep, what_if)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
