"""`explain --node ROOT`: what stands where the checkpoint should be is refused as `checkpoint verify`
refuses it; a large checkpoint is explained without any temporary folder; `-o` never writes under
the root being read (issue 20)."""
from __future__ import annotations

import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from memorymanager.cli.app import main
from tests.explain.helpers import ROOT, node_root_with_entries

FAKE = ROOT / "fixtures" / "nodes" / "two-nodes"
POD = str(ROOT / "fixtures" / "nodes" / "pod-4gi.yaml")
STATE = Path("var") / "lib" / "kubelet" / "memory_manager_state"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def root_with_state(tmp_path: Path, make) -> Path:
    """The fake node root with its checkpoint replaced by what `make(path)` puts there."""
    root = tmp_path / "node"
    shutil.copytree(FAKE, root)
    state = root / STATE
    state.unlink()
    make(state)
    return root


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _loop(path: Path) -> None:
    os.symlink(path.name + ".other", path)
    os.symlink(path.name, str(path) + ".other")


CASES = {
    "a folder": (lambda p: p.mkdir(), "is a directory, not a checkpoint file"),
    "a FIFO": (_fifo, "a FIFO, not a regular file: not read"),
    "a symbolic link to /dev/zero": (lambda p: os.symlink("/dev/zero", p), "the max_checkpoint_bytes limit"),
    "a symbolic link to /dev/urandom": (lambda p: os.symlink("/dev/urandom", p), "the max_checkpoint_bytes limit"),
    "a symbolic link loop": (_loop, "cannot read: Too many levels of symbolic links"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_what_is_no_checkpoint_is_refused_as_checkpoint_verify_refuses_it(tmp_path: Path, case: str) -> None:
    make, reason = CASES[case]
    root = root_with_state(tmp_path, make)
    code, out, err = run("explain", "--node", str(root), POD)
    assert code == 2 and out == "", out  # was: explained as an empty node
    assert f"{root / STATE}: " in err and reason in err and "Traceback" not in err
    verified = io.StringIO()
    assert main(["checkpoint", "verify", str(root / STATE)], verified, io.StringIO()) == 1
    assert reason in verified.getvalue()


@pytest.mark.parametrize("case", list(CASES))
def test_explain_start_of_a_node_reads_its_checkpoint_the_same_way(tmp_path: Path, case: str) -> None:
    make, reason = CASES[case]
    root = root_with_state(tmp_path, make)
    code, out, err = run("explain", "--start", "--node", str(root))
    assert code == 2 and out == "", out
    assert f"{root / STATE}: " in err and reason in err and "Traceback" not in err


def test_a_dangling_symbolic_link_is_no_checkpoint_as_for_kubelet(tmp_path: Path) -> None:
    root = root_with_state(tmp_path, lambda p: os.symlink("nowhere", p))
    code, out, err = run("explain", "--node", str(root), POD, "--format", "json")
    assert code == 0, err
    assert '"0, 1"' not in out and "uid-" not in out


def test_no_temporary_folder_is_needed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = node_root_with_entries(tmp_path / "node", 2000)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))  # was: a copy of the checkpoint here
    before, state = sorted(p.name for p in tmp_path.iterdir()), (root / STATE).read_bytes()
    code, out, err = run("explain", "--node", str(root), POD, "--format", "json")
    assert code == 0, err
    assert '"admitted": true' in out
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (root / STATE).read_bytes() == state


def test_the_restored_pods_hold_their_memory(tmp_path: Path) -> None:
    from memorymanager.explain.live import explain_on_node

    root = node_root_with_entries(tmp_path / "node", 1000)
    explanation = explain_on_node(str(root), POD)
    rows = {tuple(r.nodes): r for r in explanation.hints[0].masks}
    memory = {numa: rows[(numa,)].free["memory"] for numa in (0, 1)}
    # 500 pods of 64Ki on each node, as in the checkpoint: stale-state cleanup dropped none of them
    assert memory[0] == 968884224 + (4 << 30) - 500 * (64 << 10)
    assert memory[1] == 6979321856 - 500 * (64 << 10)


@pytest.mark.parametrize("where", ["var/lib/kubelet/out.html", "out.html", "sys/x.html"])
def test_output_under_the_root_being_read_is_refused(tmp_path: Path, where: str) -> None:
    root = tmp_path / "node"
    shutil.copytree(FAKE, root)
    target = root / where
    code, _, err = run("explain", "--node", str(root), POD, "--format", "html", "-o", str(target))
    assert code == 2 and "not written: it is under the node root" in err
    assert not target.exists()
    os.symlink(root, tmp_path / "link")  # the same root through a symbolic link
    code, _, err = run("explain", "--node", str(root), POD, "-o", str(tmp_path / "link" / "x.txt"))
    assert code == 2 and not (root / "x.txt").exists()
    code, _, err = run("explain", "--node", str(root), POD, "-o", str(tmp_path / "out.txt"))
    assert code == 0 and (tmp_path / "out.txt").read_text().strip()


def test_on_this_machine_only_what_is_read_is_protected(tmp_path: Path) -> None:
    from argparse import Namespace

    from memorymanager.cli.explain_cmd import output_reads_back

    args = Namespace(node="/", path=str(tmp_path / "pod.yaml"), kubelet_config=None, hints=None, output="",
                     devices=str(tmp_path / "devices.yaml"))
    for output, refused in (("/sys/x", True), ("/var/lib/kubelet/y", True), (str(tmp_path / "pod.yaml"), True),
                            (str(tmp_path / "devices.yaml"), True), (str(tmp_path / "report.html"), False)):
        args.output = output
        assert (output_reads_back(args) is not None) is refused, output
