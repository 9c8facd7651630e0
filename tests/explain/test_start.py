"""`explain --start`: kubelet's start error, the arithmetic behind it, and fixes that are checked here
again by starting a node with them through the public API (never by trusting the diagnosis)."""
from __future__ import annotations

import io
import json

import pytest

import memorymanager
from memorymanager.cli.app import main
from memorymanager.explain.start import start_of_files, start_of_node, start_of_scenario
from memorymanager.explain.start_text import start_text
from memorymanager.node.start_diagnosis import FIX_DELETE, FIX_DRIFT_TOLERANCE, FIX_POLICY, FIX_RESERVED_MEMORY
from memorymanager.runner.scenario import load_scenario
from state import CHECKPOINT_FILE_NAME
from tests.explain.helpers import ROOT, SCENARIOS, TUTORIAL

MI, GI = 1 << 20, 1 << 30
RESERVED = TUTORIAL / "007-reserved-memory-does-not-add-up.yaml"
REBOOT = TUTORIAL / "008-checkpoint-after-a-reboot.yaml"


def node_with(scenario_path, fields, folder, keep_checkpoint=True):
    """A public-API node with the scenario's machine and configuration, `fields` set, and its checkpoint (in
    a new folder)."""
    folder.mkdir()
    tmp_path = folder
    scenario = load_scenario(str(scenario_path))
    if keep_checkpoint and scenario.checkpoint is not None:
        (tmp_path / CHECKPOINT_FILE_NAME).write_text(scenario.checkpoint)
    config = memorymanager.node.api.read_kubelet(scenario.kubelet)
    if fields:
        from kubeinputs.kubelet_config import parse_kubelet_config

        config = parse_kubelet_config(fields, "fix", base=config)
    return memorymanager.Node(scenario.machine, config, state_dir=tmp_path)


def run_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", *args], out, err)
    return code, out.getvalue(), err.getvalue()


def test_reserved_memory_that_does_not_add_up(tmp_path) -> None:
    d = start_of_scenario(str(RESERVED))
    assert not d.starts
    assert d.error == 'the total amount "1Gi" of type "memory" is not equal to the value "1636Mi" determined by Node Allocatable feature'
    [row] = d.reservations
    assert (row.resource, row.reserved_by_node, row.reserved) == ("memory", {0: GI}, GI)
    assert (row.system_reserved, row.kube_reserved, row.eviction_hard) == (GI, 512 * MI, 100 * MI)
    assert row.allocatable == 1636 * MI and not row.equal and row.eviction_note == "kubelet's default"
    [fix] = d.fixes
    assert fix.kind == FIX_RESERVED_MEMORY and fix.starts and not fix.delete_checkpoint
    assert fix.config == {"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1636Mi"}}]}
    node = node_with(RESERVED, fix.config, tmp_path / "fixed")  # the fix, applied for real
    node.start()
    assert node.allocatable()[0]["memory"] == 4 * GI - 1636 * MI
    with pytest.raises(memorymanager.KubeletStartError):  # and without it, kubelet's refusal
        node_with(RESERVED, {}, tmp_path / "as-is").start()
    text = start_text(d)
    assert text.startswith("kubelet does not start:\n   the total amount \"1Gi\"")
    assert "612Mi short" in text and "limits: {memory: 1636Mi}" in text


def test_the_fix_spreads_an_excess_back_from_the_highest_nodes(tmp_path) -> None:
    from memorymanager.node.reservation import reservation_sums, reserved_memory_fix

    node = memorymanager.Node(memorymanager.synthetic_machine(3, 4 * GI), {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": n, "limits": {"memory": "60Mi"}} for n in range(3)]})
    rows = reservation_sums(node.kubelet, node.machine)
    assert rows[0].reserved == 180 * MI and rows[0].allocatable == 100 * MI
    assert reserved_memory_fix(rows, node.machine) == {0: {"memory": 60 * MI}, 1: {"memory": 40 * MI}}


def test_checkpoint_that_no_longer_matches_the_machine(tmp_path) -> None:
    d = start_of_scenario(str(REBOOT))
    assert not d.starts and d.error.endswith("the expected machine state is different from the real one")
    assert d.checkpoint == "/var/lib/kubelet/memory_manager_state" and d.checkpoint_policy == "Static"
    drift = {(tuple(x.nodes), x.resource, x.field): (x.stored, x.expected) for x in d.drift}
    assert drift == {((1,), "memory", "total"): (4 * GI + 12 * MI, 4 * GI),
                     ((1,), "memory", "allocatable"): (4 * GI + 12 * MI, 4 * GI),
                     ((1,), "memory", "free"): (3 * GI + 12 * MI, 3 * GI)}
    fixes = {f.kind: f for f in d.fixes}
    assert list(fixes) == [FIX_DRIFT_TOLERANCE, FIX_DELETE] and all(f.starts for f in d.fixes)
    tolerate = fixes[FIX_DRIFT_TOLERANCE]
    assert tolerate.config["memoryManagerPolicyOptions"] == {"memory-drift-tolerance": "12Mi"}
    node = node_with(REBOOT, tolerate.config, tmp_path / "tolerate")
    node.start()  # the checkpoint kept: db's 1Gi still counts on node 1
    assert node.free()[1]["memory"] == 3 * GI
    delete = fixes[FIX_DELETE]
    assert delete.delete_checkpoint and delete.lost == {"db": {"postgres": [{"numaAffinity": [1], "type": "memory",
                                                                            "size": GI}]}}
    fresh = node_with(REBOOT, {}, tmp_path / "fresh", keep_checkpoint=False)
    fresh.start()
    assert fresh.free()[1]["memory"] == 4 * GI  # what is lost: node 1's 1Gi is free again
    text = start_text(d)
    assert "node 1 memory: MemTotal 4108Mi when the checkpoint was written, 4Gi now: 12Mi less" in text
    assert "rm /var/lib/kubelet/memory_manager_state" in text and "- pod db, container postgres: memory 1Gi on node 1" in text


def test_policy_the_checkpoint_was_written_with() -> None:
    d = start_of_scenario(str(SCENARIOS / "memory" / "138-checkpoint-from-none-policy.yaml"))
    policy = next(f for f in d.fixes if f.kind == FIX_POLICY)
    assert policy.starts and policy.config == {"memoryManagerPolicy": d.checkpoint_policy}


def test_a_start_that_succeeds_and_the_live_node_form() -> None:
    d = start_of_node(str(ROOT / "fixtures" / "nodes" / "two-nodes"), None)
    assert d.starts and not d.fixes and not d.drift and d.checkpoint.endswith(CHECKPOINT_FILE_NAME)
    assert start_text(d).startswith("kubelet starts\n")
    assert [(r.node, r.resource, r.total - r.hugepages - r.reserved) for r in d.allocatable][:1] == [(0, "memory", 5020 * MI)]


def test_files_form_and_cli(tmp_path) -> None:
    scenario = load_scenario(str(REBOOT))
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                      "memoryManagerPolicy: Static\nreservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]\n")
    checkpoint = tmp_path / CHECKPOINT_FILE_NAME
    checkpoint.write_text(scenario.checkpoint)
    machine = str(ROOT / "fixtures" / "machines" / "two-nodes.json")
    before = checkpoint.read_bytes()
    d = start_of_files(str(config), machine, str(checkpoint))
    assert not d.starts and d.checkpoint == str(checkpoint) and checkpoint.read_bytes() == before  # never written
    code, out, _ = run_cli("--start", "--kubelet-config", str(config), "--machine", machine, "--checkpoint",
                           str(checkpoint), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["source"]["checkpoint"] == str(checkpoint) and doc["start"]["drift"][0]["field"] == "total"
    code, out, _ = run_cli("--start", str(REBOOT), "--format", "html")
    assert code == 0 and 'class="reason no"' in out and "kubelet does not start" in out
    for bad in (["--start"], ["--start", str(REBOOT), "--what-if"], ["--start", "--machine", machine],
                ["--start", "--node", str(tmp_path), str(REBOOT)], [str(REBOOT), "--machine", machine]):
        code, _, err = run_cli(*bad)
        assert code == 2 and err.startswith("memorymanager: error: "), bad
    code, _, err = run_cli("--start", "--node", str(tmp_path / "missing"))
    assert code == 2 and "no such folder" in err
