"""Every input of fixtures/bad (and the generated large ones) gives its clean outcome, never a hang."""
from __future__ import annotations

import os

import pytest

from tests.fuzz.corpus import (BAD, admit_steps, argv_of, load_cases, pod_with_containers, run_cli,
                               whitespace_checkpoint, write_json)
from tests.fuzz.harness import budget
from tests.helpers.budget import scale

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["path"] for c in CASES])
def test_bad_input_is_refused_cleanly(case):
    path = os.path.join(BAD, case["path"])
    assert os.path.lexists(path), path
    with budget(20):
        code, output = run_cli(argv_of(case, path))
    assert "Traceback" not in output
    assert code == case["exit"], output[-2000:]
    assert case["text"] in output, output[-2000:]


def test_every_stored_input_has_a_case():
    listed = {c["path"] for c in CASES}
    stored = set()
    for folder in ("scenarios", "checkpoints", "sysfs", "fleets", "nodes"):
        for name in os.listdir(os.path.join(BAD, folder)):
            stored.add(f"{folder}/{name}")
    assert stored <= listed, sorted(stored - listed)


def test_50_mb_of_blanks_then_an_object(tmp_path):
    path = whitespace_checkpoint(str(tmp_path / "memory_manager_state"))
    with budget(20):
        code, output = run_cli(["checkpoint", "inspect", path])
    assert code == 2 and output.startswith("memorymanager: error: ") and "the max_checkpoint_bytes limit" in output
    with budget(20):
        code, output = run_cli(["checkpoint", "inspect", "--limit", "max-checkpoint-bytes=67108864", path])
    assert code == 0 and "format:      v1" in output, output


def test_a_pod_of_thousands_of_containers(tmp_path):  # 2,000; 10,000 in the long run
    path = write_json(str(tmp_path / "big.json"), pod_with_containers(scale(2_000, 10_000)))
    with budget(60):  # a hang guard in CPU seconds; the speed is benchmarks/scale.py's (B11)
        code, output = run_cli(["run", path])
    assert code == 0, output[-2000:]


def test_hundreds_of_admit_steps(tmp_path):  # 300; 1,000 in the long run
    path = write_json(str(tmp_path / "steps.json"), admit_steps(scale(300, 1000)))
    with budget(60):  # a hang guard in CPU seconds; the speed is benchmarks/scale.py's (B11)
        code, output = run_cli(["run", path])
    assert code == 0, output[-2000:]


def test_a_fifo_in_a_node_root(tmp_path):
    import shutil

    root = tmp_path / "node"
    shutil.copytree(os.path.join(BAD, "nodes", "state-is-a-folder"), root, symlinks=True)
    shutil.rmtree(root / "var/lib/kubelet/memory_manager_state")
    os.symlink(os.path.realpath(os.path.join(BAD, "..", "nodes", "two-nodes", "sys")), root / "sys.real")
    os.remove(root / "sys")
    os.rename(root / "sys.real", root / "sys")
    os.mkfifo(root / "var/lib/kubelet/memory_manager_state")
    with budget(20):
        code, output = run_cli(argv_of({"command": "explain-node"}, str(root)))
    assert code == 2 and "memory_manager_state: a FIFO, not a regular file: not read" in output


def test_a_checkpoint_of_5000_entries(tmp_path):
    """50,000 entries is the long run's case (`python -m tests.fuzz`, see tests/fuzz/run.py); 5,000 here."""
    from tests.explain.helpers import node_root_with_entries

    root = node_root_with_entries(tmp_path / "node", 5000)
    with budget(60):
        code, output = run_cli(argv_of({"command": "explain-node"}, str(root)))
    assert code == 0 and "admitted" in output
