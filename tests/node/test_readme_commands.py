"""The README's commands run as written, in a fresh shell in the repository folder (with its
virtual environment at `.venv`), and the README stays short and free of tracker references."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
RUNNABLE = re.compile(r"<!-- readme-test -->\n```sh\n(.*?)```", re.S)


def runnable_blocks() -> list[str]:
    """The shell blocks the README marks as runnable (`<!-- readme-test -->` before them)."""
    return RUNNABLE.findall(README.read_text(encoding="utf-8"))


def test_the_readme_is_short_and_its_runnable_blocks_are_found():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250
    blocks = runnable_blocks()
    assert len(blocks) == 3 and any("memorymanager serve" in b for b in blocks)


def test_user_docs_cite_no_issue_numbers():
    for page in [README, *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        found = re.findall(r"\bissues? #?\d+", page.read_text(encoding="utf-8"), re.I)
        assert found == [], (page.name, found)


def test_every_command_after_the_set_up_runs_as_written(tmp_path):
    """A fresh shell (no activated environment, no PYTHONPATH) in a copy of the repository folder
    (its entries linked, `.venv` this interpreter's environment); /tmp/mm and /tmp/fleet become
    folders of this test, so that parallel runs do not meet."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "memorymanager").exists():
        pytest.skip("the tests do not run from an installed virtual environment")
    work = tmp_path / "repository"
    work.mkdir()
    for entry in REPO_ROOT.iterdir():
        if entry.name not in (".venv", ".git"):
            (work / entry.name).symlink_to(entry)
    (work / ".venv").symlink_to(venv)
    env = {"PATH": os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                   if not p.startswith(str(venv))) or "/usr/bin:/bin",
           "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    outputs = []
    for block in runnable_blocks():
        script = block.replace("/tmp/mm", str(tmp_path / "mm")).replace("/tmp/fleet", str(tmp_path / "fleet"))
        # `wait`: the serve session's background server has stopped before the test looks
        proc = subprocess.run(["bash", "-e", "-c", script + "\nwait\n"], cwd=work, env=env, capture_output=True,
                              text=True, timeout=600)  # a hang guard only
        assert proc.returncode == 0, (block, proc.stdout[-2000:], proc.stderr[-2000:])
        outputs.append(proc.stdout)
    explain, serve, fleet = outputs
    assert "== step 1: admit pod b" in explain and "admitted: app aligned on node 1 (preferred)" in explain
    assert "default/db\n  pg  cpus: -  devices: -  memory: memory 2Gi on [0]\n" in serve
    assert "admitted: true" in serve and serve.rstrip().endswith("stopped")
    assert fleet.startswith("fleet sweep-demo:") and (tmp_path / "fleet" / "report.html").is_file()
    assert (tmp_path / "mm" / "memory_manager_state").is_file() and (work / "my-kubelet.yaml").is_file()
