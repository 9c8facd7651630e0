"""`explain --start` for the CPU and device managers: the CPU manager's start errors (its reserved CPUs, its options,
cpu_manager_state against this machine) with the arithmetic behind them, and fixes checked again here by starting a
public-API node with them; the device checkpoint, which never stops kubelet, reported as kubelet restores it."""
from __future__ import annotations

import io
import json
import shutil

import pytest

import memorymanager
from cpumanager.state import CHECKPOINT_FILE_NAME as CPU_CHECKPOINT_FILE_NAME
from kubeinputs.kubelet_config import parse_kubelet_config
from memorymanager.cli.app import main
from memorymanager.explain.start import start_of_files, start_of_node, start_of_scenario
from memorymanager.explain.start_text import start_text
from memorymanager.node.cpu_start import (FIX_CPU_DELETE, FIX_CPU_OPTION_GATE, FIX_CPU_OPTIONS, FIX_CPU_POLICY,
                                          FIX_CPU_RESERVATION, FIX_RESERVED_CPUS)
from memorymanager.runner.scenario import load_scenario
from tests.explain.helpers import ROOT

CPU = ROOT / "fixtures" / "scenarios" / "cpu"
NODES = ROOT / "fixtures" / "nodes"


def fixed_node(scenario_path, fields, folder, keep_cpu_checkpoint=True) -> memorymanager.Node:
    """A public-API node with the scenario's machine and configuration with `fields` set, and its CPU checkpoint."""
    folder.mkdir()
    scenario = load_scenario(str(scenario_path))
    if keep_cpu_checkpoint and scenario.cpu_checkpoint is not None:
        (folder / CPU_CHECKPOINT_FILE_NAME).write_text(scenario.cpu_checkpoint)
    config = parse_kubelet_config(fields, "fix", base=memorymanager.node.api.read_kubelet(scenario.kubelet))
    return memorymanager.Node(scenario.machine, config, state_dir=folder)


def test_zero_reserved_cpus_under_static(tmp_path) -> None:
    path = CPU / "003-static-zero-cpu-reservation.yaml"
    d = start_of_scenario(str(path))
    assert not d.starts and d.error == "[cpumanager] unable to determine reserved CPU resources for static policy"
    assert (d.cpu.policy, d.cpu.machine_cpus, d.cpu.reservation, d.cpu.reserved_count) == ("static", "0-15", "", None)
    [fix] = d.fixes
    assert (fix.kind, fix.config, fix.starts) == (FIX_CPU_RESERVATION, {"systemReserved": {"cpu": "1"}}, True)
    node = fixed_node(path, fix.config, tmp_path / "fixed")
    node.start()
    assert str(node.simulated_node.cpu_manager.reserved_cpus()) == "0"  # one CPU, the lowest
    with pytest.raises(memorymanager.KubeletStartError):
        fixed_node(path, {}, tmp_path / "as-is").start()
    text = start_text(d)
    assert "4. The CPU manager (policy static)" in text and "5. Fixes" in text
    assert "static policy needs at least one reserved CPU" in text


def test_reserved_system_cpus_the_machine_lacks(tmp_path) -> None:
    path = CPU / "005-reserved-cpus-not-on-machine.yaml"
    d = start_of_scenario(str(path))
    assert d.error == "reserved-cpus: 0,16,40 is not a subset of online-cpus: 0-31"
    assert (d.cpu.reserved_system_cpus, d.cpu.reservation, d.cpu.reserved) == ("0,16,40", "3", "")
    [fix] = d.fixes
    assert (fix.kind, fix.config) == (FIX_RESERVED_CPUS, {"reservedSystemCPUs": "0,16"})
    node = fixed_node(path, fix.config, tmp_path / "fixed")
    node.start()
    assert str(node.simulated_node.cpu_manager.reserved_cpus()) == "0,16"


@pytest.mark.parametrize("name, kinds", [
    ("007-unknown-policy-option.yaml", [(FIX_CPU_OPTIONS, {"cpuManagerPolicyOptions": {}})]),
    ("008-alpha-option-without-gate.yaml", [(FIX_CPU_OPTION_GATE, {"featureGates": {"CPUManagerPolicyAlphaOptions": True}}),
                                            (FIX_CPU_OPTIONS, {"cpuManagerPolicyOptions": {}})]),
])
def test_refused_options(name, kinds, tmp_path) -> None:
    d = start_of_scenario(str(CPU / name))
    assert d.error.startswith("new static policy error: ")
    assert [(f.kind, f.config) for f in d.fixes] == kinds
    for i, fix in enumerate(d.fixes):
        fixed_node(CPU / name, fix.config, tmp_path / str(i)).start()


def test_checkpoint_naming_cpus_the_machine_lacks(tmp_path) -> None:
    path = CPU / "086-checkpoint-cpus-machine-lacks.yaml"
    d = start_of_scenario(str(path))
    assert d.error == ('start cpu manager error: current set of available CPUs "0-15" doesn\'t match with CPUs in '
                       'state "0-31"')
    c = d.cpu
    assert (c.checkpoint, c.checkpoint_policy, c.checkpoint_cpus, c.lacking, c.machine_cpus, c.reserved) == (
        "/var/lib/kubelet/cpu_manager_state", "static", "0-31", "16-31", "0-15", "0")
    [fix] = d.fixes
    assert (fix.kind, fix.delete_cpu_checkpoint, fix.starts, fix.lost_cpus) == (FIX_CPU_DELETE, True, True, {})
    fixed_node(path, {}, tmp_path / "deleted", keep_cpu_checkpoint=False).start()
    with pytest.raises(memorymanager.KubeletStartError):
        fixed_node(path, {}, tmp_path / "kept").start()
    assert "it names CPUs 16-31 this machine lacks" in start_text(d)


def test_checkpoint_of_another_policy(tmp_path) -> None:
    path = CPU / "087-checkpoint-written-by-none-policy.yaml"
    d = start_of_scenario(str(path))
    assert 'differs from state checkpoint policy "none"' in d.error
    assert '"/var/lib/kubelet/cpu_manager_state" before restarting' in d.error  # the node's path, not a temporary one
    assert [(f.kind, f.config) for f in d.fixes] == [(FIX_CPU_POLICY, {"cpuManagerPolicy": "none"}), (FIX_CPU_DELETE, {})]
    fixed_node(path, d.fixes[0].config, tmp_path / "none").start()


def test_deleting_a_cpu_checkpoint_lists_the_cpus_lost(tmp_path) -> None:
    root = tmp_path / "node"
    shutil.copytree(NODES / "two-nodes-cpu", root)
    config = root / "var/lib/kubelet/config.yaml"
    config.write_text(config.read_text().replace('reservedSystemCPUs: "0"', 'reservedSystemCPUs: "0,2"'))
    d = start_of_node(str(root), None)
    assert d.error == 'start cpu manager error: not all reserved cpus: "0,2" are present in defaultCpuSet: "0-1,3-5,7"'
    assert [(f.kind, f.config) for f in d.fixes] == [(FIX_RESERVED_CPUS, {"reservedSystemCPUs": "0"}),
                                                     (FIX_CPU_DELETE, {})]  # 2 is held by job
    fix = d.fixes[1]
    assert fix.lost_cpus == {"7d2c1d52-0000-4000-8000-000000000002": {"job": "2,6"}}
    assert "- pod 7d2c1d52-0000-4000-8000-000000000002, container job: CPUs 2,6" in start_text(d)


def test_node_start_reads_the_cpu_and_device_checkpoints() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "--start", "--node", str(NODES / "two-nodes-cpu"), "--devices",
                 str(NODES / "two-nodes-cpu-devices.yaml"), "--format", "json"], out, err)
    assert code == 0, err.getvalue()
    d = json.loads(out.getvalue())["start"]
    assert d["starts"] and d["warnings"] == []  # the devices file declares the checkpoint's device
    assert (d["cpu"]["reserved"], d["cpu"]["checkpoint_default"]) == ("0", "0-1,3-5,7")
    assert d["cpu"]["entries"] == {"7d2c1d52-0000-4000-8000-000000000002": {"job": "2,6"}}
    assert d["device_checkpoint"]["entries"] == {"7d2c1d52-0000-4000-8000-000000000002": {"job": {"example.com/gpu": ["gpu1"]}}}


def test_an_unreadable_device_checkpoint_does_not_stop_kubelet(tmp_path) -> None:
    root = tmp_path / "node"
    shutil.copytree(NODES / "two-nodes-cpu", root)
    (root / "var/lib/kubelet/device-plugins/kubelet_internal_checkpoint").write_text('{"Data": {}, "Checksum": 1}')
    d = start_of_node(str(root), None)
    assert d.starts and d.device_checkpoint.error
    assert any("was not restored (kubelet continues without it)" in w for w in d.warnings)
    assert "kubelet cannot read it and starts with no device allocation" in start_text(d)


def test_memory_only_start_has_no_cpu_section() -> None:
    d = start_of_scenario(str(ROOT / "fixtures" / "scenarios" / "tutorial" / "007-reserved-memory-does-not-add-up.yaml"))
    assert d.cpu is None and d.device_checkpoint is None
    assert "CPU manager" not in start_text(d) and "4. Fixes" in start_text(d)


def test_devices_with_start_need_a_node() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "--start", str(CPU / "086-checkpoint-cpus-machine-lacks.yaml"), "--devices",
                 str(NODES / "two-nodes-cpu-devices.yaml")], out, err)
    assert code == 2 and "--start takes --devices with --node ROOT or --machine FILE only" in err.getvalue()


def test_checkpoint_naming_a_cpu_twice() -> None:
    d = start_of_scenario(str(CPU / "088-checkpoint-assignment-overlaps-default.yaml"))
    assert d.error == ('start cpu manager error: pod: ghost, container: c1 cpuset: "1-2" overlaps with default cpuset '
                       '"0-15"')
    assert (d.cpu.overlaps, d.cpu.lacking, d.cpu.entries) == ("1-2", "", {"ghost": {"c1": "1-2"}})
    assert [f.kind for f in d.fixes] == [FIX_CPU_DELETE]
    assert "it names CPUs 1-2 twice" in start_text(d)


KUBELET_STATIC = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n"
                  "systemReserved: {cpu: \"1\"}\n")


def test_files_form_reads_a_cpu_checkpoint_as_the_scenario_form_does(tmp_path) -> None:
    path = CPU / "087-checkpoint-written-by-none-policy.yaml"
    config, state = tmp_path / "config.yaml", tmp_path / "saved-cpu-state"
    config.write_text(KUBELET_STATIC)
    state.write_text(load_scenario(str(path)).cpu_checkpoint)
    before = state.read_bytes()
    d = start_of_files(str(config), str(ROOT / "fixtures" / "machines" / "cpu-1s-ht.json"), None,
                       cpu_checkpoint=str(state))
    assert f'delete the CPU manager checkpoint file "{state}" before restarting' in d.error  # the file given
    assert (d.cpu.checkpoint, d.cpu.checkpoint_policy, d.cpu.reserved) == (str(state), "none", "0")
    assert [(f.kind, f.config) for f in d.fixes] == [(FIX_CPU_POLICY, {"cpuManagerPolicy": "none"}), (FIX_CPU_DELETE, {})]
    assert state.read_bytes() == before  # never written
    scenario = start_of_scenario(str(path))  # the same diagnosis, apart from the file's name
    assert d.error.replace(str(state), "/var/lib/kubelet/cpu_manager_state") == scenario.error
    assert f"rm {state}" in start_text(d)


def test_files_form_reads_a_device_checkpoint_and_devices_file(tmp_path) -> None:
    scenario = load_scenario(str(ROOT / "fixtures" / "scenarios" / "devices" / "026-device-checkpoint-changed-request.yaml"))
    config, checkpoint, devices = tmp_path / "config.yaml", tmp_path / "dev-ck", tmp_path / "devices.yaml"
    config.write_text(KUBELET_STATIC)
    checkpoint.write_text(scenario.device_checkpoint)
    devices.write_text("nvidia.com/gpu:\n- {id: g0, numaNodes: [0]}\n- {id: g1, numaNodes: [0]}\n")
    machine = str(ROOT / "fixtures" / "machines" / "two-nodes.json")
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "--start", "--kubelet-config", str(config), "--machine", machine, "--device-checkpoint",
                 str(checkpoint), "--devices", str(devices), "--format", "json"], out, err)
    assert code == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert (doc["source"]["device_checkpoint"], doc["source"]["devices"]) == (str(checkpoint), str(devices))
    d = doc["start"]
    assert d["starts"] and d["device_checkpoint"]["checkpoint"] == str(checkpoint)
    assert d["device_checkpoint"]["entries"] == {"trainer": {"c": {"nvidia.com/gpu": ["g2", "g3"]}}}
    lacking = [w for w in d["warnings"] if "is not a device of" in w]
    assert len(lacking) == 4 and all(w.startswith(f"warning: {checkpoint}: ") for w in lacking)  # g2, g3 twice each
    devices.write_text("nvidia.com/gpu:\n" + "".join(f"- {{id: g{i}, numaNodes: [{i // 2}]}}\n" for i in range(4)))
    d = start_of_files(str(config), machine, None, device_checkpoint=str(checkpoint), devices=str(devices))
    assert d.starts and d.warnings == []  # every device the checkpoint names is declared


@pytest.mark.parametrize("extra, words", [
    (["--cpu-checkpoint", "{tmp}/missing"], "missing: no such checkpoint file"),
    (["--device-checkpoint", "{tmp}"], "is a directory, not a checkpoint file"),
    (["--devices", "{tmp}/config.yaml"], "config.yaml"),
])
def test_files_form_refuses_bad_files(extra, words, tmp_path) -> None:
    (tmp_path / "config.yaml").write_text(KUBELET_STATIC)
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "--start", "--kubelet-config", str(tmp_path / "config.yaml"), "--machine",
                 str(ROOT / "fixtures" / "machines" / "two-nodes.json"),
                 *[a.format(tmp=tmp_path) for a in extra]], out, err)
    assert code == 2 and err.getvalue().startswith("memorymanager: error: ") and words in err.getvalue()
    assert "Traceback" not in err.getvalue() and out.getvalue() == ""


@pytest.mark.parametrize("args, words", [
    (["--start", "--node", "{node}", "--cpu-checkpoint", "x"], "takes no scenario, --machine, --checkpoint"),
    (["{scenario}", "--device-checkpoint", "x"], "need --start"),
    (["--start", "{scenario}", "--cpu-checkpoint", "x"], "--start takes a scenario, --node ROOT, or"),
])
def test_loose_checkpoints_need_the_files_form(args, words) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", *[a.format(node=NODES / "two-nodes-cpu", scenario=CPU / "087-checkpoint-written-by-none-policy.yaml")
                              for a in args]], out, err)
    assert code == 2 and words in err.getvalue()
