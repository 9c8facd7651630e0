"""`memorymanager explain --start`: the inputs of one kubelet start, read-only, and their diagnosis
(`memorymanager.node.start_diagnosis`).

The start is read from a scenario (its machine, kubelet configuration and `checkpoint`; the start
before its first step), from a node's root (as `explain --node` reads it: the machine from
ROOT/sys, the configuration from ROOT/var/lib/kubelet/config.yaml or a given file, the checkpoint
ROOT/var/lib/kubelet/memory_manager_state, cpu_manager_state and the device checkpoint if present, the
device plugins from a devices file when given), or from files (a KubeletConfiguration, a
cadvisor machine, optionally the memory, CPU and device checkpoints and a devices file). Nothing given is
ever written.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from kubeinputs.devices import load_devices_file
from kubeinputs.errors import InputError
from kubeinputs.kubelet_config import KubeletConfig, load_kubelet_config_file
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.machine import MachineInfo, load_machine_info
from kubeinputs.sysfs import read_machine_info
from memorymanager.explain.live import kubelet_paths, manager_checkpoint_paths
from memorymanager.node.start_diagnosis import DEFAULT_CHECKPOINT_PATH, ManagerCheckpoints, StartDiagnosis, diagnose_start
from state.checkpoint_manager import read_checkpoint_file


def _checkpoint_bytes(path: Path, limits: Limits) -> Optional[bytes]:
    """The checkpoint's bytes, None when there is no file; read as `checkpoint verify` and
    `explain --node` read it (a folder, a FIFO, a link loop or a file past the limit refused)."""
    return read_checkpoint_file(str(path), limits)


def start_of_scenario(path: str, limits: Limits = DEFAULT_LIMITS) -> StartDiagnosis:
    """The scenario's first start (its machine, configuration and checkpoint)."""
    from memorymanager.runner.scenario import load_scenario

    scenario = load_scenario(path, limits)  # ScenarioError names the file, the path and the reason
    checkpoint = scenario.checkpoint.encode() if scenario.checkpoint is not None else None
    others = ManagerCheckpoints(None, _encoded(scenario.cpu_checkpoint), _encoded(scenario.device_checkpoint),
                                scenario.devices or None)
    return diagnose_start(scenario.machine, scenario.kubelet, checkpoint, DEFAULT_CHECKPOINT_PATH, limits, others)


def _encoded(text: Optional[str]) -> Optional[bytes]:
    """A scenario's checkpoint text as the file's bytes (None: no file)."""
    return text.encode() if text is not None else None


def start_of_node(root: str, kubelet_config: Optional[str], limits: Limits = DEFAULT_LIMITS,
                  devices: Optional[str] = None) -> StartDiagnosis:
    """The start of the kubelet of the node under ROOT (its CPU and device checkpoints too), with the device
    plugins of the `devices` file when given."""
    if not Path(root).is_dir():
        raise InputError(root, "no such folder (--node takes the root of a node's file system, / for this machine)")
    sysfs, default_config, checkpoint = kubelet_paths(root)
    config_path = Path(kubelet_config) if kubelet_config else default_config
    if not config_path.is_file():
        raise InputError(str(config_path), "no kubelet configuration file here (give one with --kubelet-config)")
    machine = read_machine_info(sysfs, limits)
    config = load_kubelet_config_file(str(config_path), limits=limits)
    declared = None if devices is None else load_devices_file(
        devices, numa_nodes=[n.node_id for n in machine.topology], limits=limits)
    cpu_path, device_path = manager_checkpoint_paths(root)
    others = ManagerCheckpoints(None, read_checkpoint_file(str(cpu_path), limits),
                                read_checkpoint_file(str(device_path), limits), declared)
    return _diagnose(machine, config, checkpoint, limits, others)


def _given_checkpoint(path: Optional[str], limits: Limits) -> Optional[bytes]:
    """The bytes of a checkpoint file named on the command line (None: none named); a missing one is an error."""
    if path is None:
        return None
    blob = read_checkpoint_file(path, limits)
    if blob is None:
        raise InputError(path, "no such checkpoint file")
    return blob


def start_of_files(kubelet_config: str, machine: str, checkpoint: Optional[str],
                   limits: Limits = DEFAULT_LIMITS, cpu_checkpoint: Optional[str] = None,
                   device_checkpoint: Optional[str] = None, devices: Optional[str] = None) -> StartDiagnosis:
    """The start of a kubelet with this configuration file, machine file and (optional) checkpoint files: the
    memory manager's, the CPU manager's `cpu_manager_state`, the device manager's; with the device plugins of
    the `devices` file when given."""
    path = Path(checkpoint) if checkpoint else None
    if path is not None and not path.is_file():
        raise InputError(checkpoint, "no such checkpoint file")
    machine_info = load_machine_info(machine, limits)
    config = load_kubelet_config_file(kubelet_config, limits=limits)
    declared = None if devices is None else load_devices_file(
        devices, numa_nodes=[n.node_id for n in machine_info.topology], limits=limits)
    others = ManagerCheckpoints(None, _given_checkpoint(cpu_checkpoint, limits),
                                _given_checkpoint(device_checkpoint, limits), declared,
                                cpu_checkpoint or "", device_checkpoint or "")
    return _diagnose(machine_info, config, path, limits, others)


def _diagnose(machine: MachineInfo, config: KubeletConfig, checkpoint: Optional[Path],
              limits: Limits, others: Optional[ManagerCheckpoints] = None) -> StartDiagnosis:
    """The diagnosis, the checkpoint named by its own path."""
    blob = _checkpoint_bytes(checkpoint, limits) if checkpoint is not None else None
    return diagnose_start(machine, config, blob, str(checkpoint) if checkpoint is not None else DEFAULT_CHECKPOINT_PATH,
                          limits, others)
