"""The `memorymanager` command (memorymanager.cli.app): run, checkpoint, machine; exit codes; no tracebacks."""
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memorymanager.cli.app as cli
import memorymanager.cli.common as common
from tests.helpers.scenarios import TWO_NODE_MACHINE

from tests.helpers.paths import REPO_ROOT as ROOT
MACHINE = TWO_NODE_MACHINE
POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}
STATIC = {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def scenario(tmp_path, name, admitted=True):
    doc = {"name": name, "machine": MACHINE, "kubelet": STATIC, "steps": [{"admit": POD, "expect": {"admitted": admitted}}]}
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(doc))
    return str(path)


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_run_exit_codes(tmp_path):
    good = scenario(tmp_path, "good")
    code, out, _ = run("run", good)
    assert code == 0 and out.rstrip().endswith("1 passed, 0 failed, 0 invalid")
    bad = scenario(tmp_path, "bad", admitted=False)
    code, out, _ = run("run", good, bad)
    assert code == 1
    assert f"{bad}: steps[0] (admit): admitted" in out
    assert out.rstrip().endswith("1 passed, 1 failed, 0 invalid")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\n")
    code, out, _ = run("run", str(tmp_path))
    assert code == 2
    assert f"INVALID {broken}: machine: required key is missing" in out
    assert out.rstrip().endswith("1 passed, 1 failed, 1 invalid")


def test_run_json_document(tmp_path):
    scenario(tmp_path, "good")
    code, out, _ = run("run", "--json", str(tmp_path), str(tmp_path / "missing.yaml"))
    assert code == 2
    doc = json.loads(out)
    assert (doc["passed"], doc["failed"], doc["invalid"]) == (1, 0, 1)
    good, missing = doc["scenarios"]
    assert good["status"] == "passed" and good["name"] == "good"
    step = good["steps"][0]
    assert step["index"] == 0 and step["op"] == "admit" and step["failures"] == []
    for key in ("error", "admitted", "reason", "message", "affinity", "memory", "hints", "numaNodes",
                "machineState", "entries", "podEntries", "allocatable"):
        assert key in step["actual"]
    assert missing["status"] == "invalid" and missing["error"].endswith("missing.yaml: no such file or folder")


def test_run_state_dir_and_merge(tmp_path):
    state_dir = tmp_path / "state"
    code, _, _ = run("run", "--state-dir", str(state_dir), "--merge", "reference", scenario(tmp_path, "good"))
    assert code == 0
    checkpoint = json.loads((state_dir / "memory_manager_state").read_text())
    assert checkpoint["policyName"] == "Static"
    assert checkpoint["entries"]["p"]["c"][0]["size"] == 1073741824


def test_run_record(tmp_path):
    path = scenario(tmp_path, "bad", admitted=False)
    code, out, _ = run("run", "--record", path)
    assert code == 1
    recorded = tmp_path / "bad.recorded.yaml"
    assert f"recorded {recorded}" in out
    assert run("run", str(recorded))[0] == 0
    code, _, _ = run("run", "--record", "--in-place", path)
    assert code == 1
    assert run("run", path)[0] == 0


def test_usage_errors_exit_2(tmp_path):
    assert run("run", "--in-place", scenario(tmp_path, "good"))[0] == 2
    assert run("run", "--merge", "slow", "x")[0] == 2
    assert run()[0] == 2
    assert run("frobnicate")[0] == 2


def test_unexpected_errors_are_one_line(tmp_path, monkeypatch):
    import memorymanager.runner.execute as execute

    def explode(*a, **kw):
        raise RuntimeError("kaput")

    monkeypatch.setattr(execute, "run_paths", explode)
    code, out, err = run("run", scenario(tmp_path, "good"))
    assert code == 2
    assert err == "memorymanager: error: RuntimeError: kaput\n"


def test_checkpoint_commands(tmp_path):
    path = tmp_path / "memory_manager_state"
    path.write_text('{"policyName":"None","machineState":{},"checksum":4236770233}')
    code, out, _ = run("checkpoint", "inspect", str(path))
    assert code == 0 and out
    code, out, _ = run("checkpoint", "inspect", str(path), "--json")
    assert code == 0 and isinstance(json.loads(out), dict)
    assert run("checkpoint", "verify", str(path))[0] == 0
    assert run("checkpoint", "verify", str(path), "--policy", "None")[0] == 0
    code, out, _ = run("checkpoint", "verify", str(path), "--policy", "Static")
    assert code == 1 and 'configured policy "Static" differs from state checkpoint policy "None"' in out
    assert run("checkpoint", "verify", str(tmp_path / "absent"))[0] == 1
    assert run("checkpoint")[0] == 2


def test_machine_json_runs_as_a_scenarios_machine(tmp_path):
    root = ROOT / "fixtures" / "sysfs" / "two-nodes-hugepages"
    if not root.is_dir():
        pytest.skip("fake sysfs tree not present")
    code, out, _ = run("machine", "--sysfs-root", str(root))
    (tmp_path / "machine.json").write_text(out)
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"machine": "machine.json", "steps": [{"check": {}, "expect": {"error": None}}]}))
    assert run("run", str(path))[0] == 0
    assert run("machine", "--table", "--json")[0] == 2


def test_machine_command_on_a_fake_sysfs():
    root = ROOT / "fixtures" / "sysfs" / "two-nodes-hugepages"
    if not root.is_dir():
        pytest.skip("fake sysfs tree not present")
    code, out, _ = run("machine", "--sysfs-root", str(root))  # JSON by default
    assert code == 0
    doc = json.loads(out)
    assert [n["node_id"] for n in doc["topology"]] == [0, 1]
    assert run("machine", "--sysfs-root", str(root), "--json")[1] == out  # --json still accepted
    # ready to paste: a scenario's `machine` accepts it as it is, inline or as a file
    from kubeinputs.machine import machine_info_to_obj, parse_machine_info
    from kubeinputs.sysfs import read_machine_info

    assert parse_machine_info(doc, "machine") == read_machine_info(str(root))
    assert machine_info_to_obj(parse_machine_info(doc, "machine")) == doc
    code, out, _ = run("machine", "--sysfs-root", str(root), "--table")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("cores: ") and "NUMA nodes: 2" in lines[0]
    assert any(line.split()[0] == "1" for line in lines[3:])


def test_machine_table_and_sizes():
    assert common.human_bytes(64 << 30) == "64Gi"
    assert common.human_bytes(3 << 29) == "1.5Gi"
    assert common.human_bytes(512) == "512"
    lines = cli.machine_table(
        {"num_cores": 1, "memory_capacity": 1 << 30,
         "topology": [{"node_id": 0, "memory": 1 << 30, "hugepages": [{"page_size": 2048, "num_pages": 4}],
                       "cores": None, "distances": None}]}
    )
    assert lines[-1].split() == ["0", "1Gi", "1073741824", "-", "2Mi", "x", "4", "-"]


def test_version_and_module_entry_point(tmp_path):
    code, out, _ = run("--version")
    assert code == 0
    proc = subprocess.run(
        [sys.executable, "-m", "memorymanager", "run", scenario(tmp_path, "good")],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("1 passed, 0 failed, 0 invalid")
    assert "Traceback" not in proc.stderr


def test_run_killed_by_sigterm_removes_its_temporary_state_folder(tmp_path):
    """Issue 18, item 7: SIGTERM used to end `run` at once, leaving `$TMPDIR/memorymanager-*`."""
    import signal
    import time

    from tests.fuzz.corpus import admit_steps, write_json

    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    path = write_json(str(tmp_path / "long.json"), admit_steps(3000))  # minutes of work: it is stopped first
    proc = subprocess.Popen([sys.executable, "-m", "memorymanager", "run", path], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(private_tmp)})
    try:
        while not any(p.name.startswith("memorymanager-") for p in private_tmp.iterdir()):  # the run has begun
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and err.strip() == "memorymanager: terminated", err
    assert list(private_tmp.iterdir()) == []


def test_machine_table_shows_the_cpu_topology():
    root = ROOT / "fixtures" / "sysfs" / "two-ccx-per-node"
    code, out, _ = run("machine", "--sysfs-root", str(root), "--table")
    assert code == 0
    lines = out.splitlines()
    assert "CPUs: 16 in 8 cores (2 threads per core), 1 socket" in lines
    assert lines[-2].split() == ["0", "0", "4", "0-3,8-11", "0", "16Mi", "0-1,8-9;", "1", "16Mi", "2-3,10-11"]
    assert lines[-1].split() == ["1", "0", "4", "4-7,12-15", "2", "16Mi", "node"]
    # a machine whose nodes list no cores (the memory manager needs none) has no CPU part
    assert not cli.cpu_topology_lines({"topology": [{"node_id": 0, "cores": None}]})
