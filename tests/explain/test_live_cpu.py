"""`explain --node ROOT POD` on a node with the CPU and device managers (fixtures/nodes/two-nodes-cpu): the CPU and
device checkpoints and the host's CPU topology explain a TopologyAffinityError with no hand-written hints; bad
checkpoints and device files are clear errors naming the file."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from memorymanager.cli.app import main
from memorymanager.explain.live import explain_on_node
from tests.explain.helpers import ROOT
from tests.explain.test_live import snapshot

NODES = ROOT / "fixtures" / "nodes"
NODE = NODES / "two-nodes-cpu"
POD = str(NODES / "pod-analytics.yaml")
DEVICES = str(NODES / "two-nodes-cpu-devices.yaml")
KUBELET = Path("var/lib/kubelet")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_live_cpu_node_refusal_explained_without_hints() -> None:
    before = snapshot(NODE)
    e = explain_on_node(str(NODE), POD, devices_path=DEVICES)
    assert snapshot(NODE) == before
    assert e.decision.reason == "TopologyAffinityError"
    # the CPU checkpoint: batch holds core 0 of node 1 (CPUs 2,6), CPU 0 is reserved
    assert [(r.node, r.free, r.exclusive) for r in e.cpu_nodes] == [(0, "1,4-5", ""), (1, "3,7", "2,6")]
    [cpu] = e.cpu_hints
    assert {tuple(r.nodes): (r.free, r.hint, r.preferred) for r in cpu.masks} == {
        (0,): (3, True, True), (1,): (2, False, False), (0, 1): (5, True, False)}
    [dev] = e.device_hints
    assert [(d.id, d.state) for d in dev.devices] == [("gpu0", "free"), ("gpu1", "in use")]
    assert [(pl.provider, pl.resource) for pl in e.merges[0].lists] == [
        ("device manager", "example.com/gpu"), ("CPU manager", "cpu"), ("memory manager", "memory")]
    assert e.decision.why.startswith("memory fits worker on node(s) 1, but device manager example.com/gpu prefers 0; "
                                     "CPU manager cpu prefers 0")


def test_without_devices_file_the_checkpoint_devices_show_as_allocated() -> None:
    code, out, err = run("explain", "--node", str(NODE), POD, "--format", "json")
    assert code == 0, err
    e = json.loads(out)["explanation"]
    assert e["devices"] == [{"resource": "example.com/gpu", "registered": False, "devices": [
        {"id": "gpu1", "numa_nodes": [1], "healthy": False, "state": "in use (no plugin)"}]}]
    assert e["device_hints"][0]["path"] == "no-topology"
    assert e["decision"]["reason"] == "TopologyAffinityError"
    assert "CPU manager cpu prefers 0" in e["decision"]["why"]


def test_html_carries_the_cpu_part() -> None:
    code, out, err = run("explain", "--node", str(NODE), POD, "--devices", DEVICES, "--format", "html")
    assert code == 0, err
    assert "2b. The CPU manager&#x27;s hints" in out and "2c. The device manager&#x27;s hints" in out


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "node"
    shutil.copytree(NODE, root)
    return root


@pytest.mark.parametrize("name,damage,words", [
    ("cpu_manager_state", lambda p: p.write_bytes(p.read_bytes().replace(b"346165816", b"346165817")),
     "kubelet could not load this checkpoint"),
    ("cpu_manager_state", lambda p: (p.unlink(), p.mkdir()), "is a directory"),
    # a CPU the machine lacks: the static policy's validateState stops kubelet
    ("cpu_manager_state", lambda p: p.write_text(
        '{"policyName":"static","defaultCpuSet":"0-1,3-5,7-9","entries":{"u":{"c":"2,6"}},"checksum":0}'),
     "kubelet would not start"),
    ("device-plugins/kubelet_internal_checkpoint",
     lambda p: p.write_bytes(p.read_bytes().replace(b"1810382778", b"1810382779")),
     "kubelet cannot read this device checkpoint"),
])
def test_bad_checkpoints_name_the_file(tmp_path: Path, name, damage, words) -> None:
    root = _copy(tmp_path)
    damage(root / KUBELET / name)
    code, out, err = run("explain", "--node", str(root), POD)
    assert code == 2 and out == ""
    assert name in err and words in err and "Traceback" not in err, err


def test_devices_not_accounting_for_the_checkpoint_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "devices.yaml"
    other.write_text("example.com/gpu:\n  - {id: gpu0, numaNodes: [0]}\n")
    code, _, err = run("explain", "--node", str(NODE), POD, "--devices", str(other))
    assert code == 2 and "kubelet_internal_checkpoint" in err and "gpu1" in err, err
    other.write_text("example.com/gpu:\n  - {id: gpu0, numaNodes: [5]}\n")
    code, _, err = run("explain", "--node", str(NODE), POD, "--devices", str(other))
    assert code == 2 and str(other) in err and "Traceback" not in err, err
    code, _, err = run("explain", "fixtures/scenarios/tutorial/001-single-node-fit.yaml", "--devices", str(other))
    assert code == 2 and "--devices" in err


def test_what_if_says_where_each_provider_fits() -> None:
    code, out, err = run("explain", "--node", str(NODE), POD, "--devices", DEVICES, "--what-if")
    assert code == 0, err
    # where each provider fits, and, when the placement splits them, where each resource went
    assert ("example.com/gpu fits worker only on node 0, CPUs only on node 0, memory only on node 1: no mask\n"
            "       suits every provider as preferred") in out
    assert ("topology manager policy best-effort, scope container: admitted: worker's memory on node 1, CPUs\n"
            "       3-4,7 on nodes 0-1, example.com/gpu gpu0 on node 0 (not preferred)") in out
    assert ("the largest memory request admitted now (CPUs and devices as asked): worker memory 924Mi:\n"
            "       admitted: worker on node 0, CPUs 1,4-5, example.com/gpu gpu0; worker memory 925Mi is "
            "refused") in out
    assert ("or removing 7d2c1d52-0000-4000-8000-000000000002 (frees memory 4Gi on node 1; CPUs 2,6;\n"
            "       example.com/gpu gpu1): admitted: worker on node 1, CPUs 2-3,6, example.com/gpu gpu1") in out
