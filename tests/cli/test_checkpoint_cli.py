"""`memorymanager checkpoint inspect|verify`."""
from __future__ import annotations

import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeinputs.quantity import size_text
from memorymanager.cli.checkpoint_cmd import inspect, verify
from memorymanager.explain.units import fmt_bytes
from state.checkpoint_writer import encode_checkpoint
from tests.helpers.paths import FIXTURES
from state.types import Block, MemoryTable, NUMANodeState, PodEntry

GI = 1 << 30
MACHINE = {
    0: NUMANodeState(2, {"memory": MemoryTable(8 * GI, GI, 7 * GI, 3 * GI, 4 * GI),
                         "hugepages-2Mi": MemoryTable(GI, 0, GI, 0, GI)}, [0, 1]),
    1: NUMANodeState(1, {"memory": MemoryTable(8 * GI, GI, 7 * GI, 2 * GI, 5 * GI)}, [0, 1]),
    2: NUMANodeState(0, {"memory": MemoryTable(8 * GI, GI, 7 * GI, 0, 7 * GI)}, [2]),
}
ENTRIES = {"pod-uid": {"app": [Block([0, 1], "memory", 5 * GI)]}}
REAL_NONE = b'{"policyName":"None","machineState":{},"checksum":4236770233}'


def run(fn, *args) -> tuple[int, str]:
    out = io.StringIO()
    code = fn(*args, out)
    return code, out.getvalue()


def write(tmp_path, blob: bytes, name: str = "memory_manager_state") -> str:
    path = tmp_path / name
    path.write_bytes(blob)
    return str(path)


def test_sizes_in_one_style_with_explain() -> None:
    """checkpoint inspect, explain and run -v print a size the same way: exact, in the largest binary unit."""
    sizes = (0, 512, 1024, 1536, GI, 3 * GI // 2, 104857600, 4190109696)
    assert [size_text(n) for n in sizes] == ["0", "512", "1Ki", "1536", "1Gi", "1536Mi", "100Mi", "3996Mi"]
    assert [fmt_bytes(n) for n in sizes] == [size_text(n) for n in sizes]


def test_inspect_table(tmp_path) -> None:
    path = write(tmp_path, encode_checkpoint("Static", MACHINE, ENTRIES, fmt="v3"))
    code, text = run(inspect, path, False)
    assert code == 0
    assert "format:      v3" in text and "policy:      Static" in text
    assert "checksum:    valid (dataChecksum " in text
    assert "v1 part for older kubelets: valid (checksum " in text
    assert "kubelet:     loads it (as v3" in text
    assert "NUMA node 0   cells [0,1]   assignments 2" in text
    assert "7Gi (7516192768)" in text and "hugepages-2Mi" in text
    assert "NUMA groups: [0,1] [2]" in text
    assert "pod pod-uid" in text and "app: memory 5Gi (5368709120) on [0,1]" in text


def test_inspect_and_explain_print_a_node_state_alike(tmp_path) -> None:
    """The tutorial's node after its two pods: explain says 3996Mi allocatable on node 0, and so does inspect."""
    import memorymanager.cli.app as cli

    tutorial = str(FIXTURES / "scenarios" / "tutorial" / "001-single-node-fit.yaml")
    assert cli.main(["run", tutorial, "--state-dir", str(tmp_path)], out=io.StringIO(), err=io.StringIO()) == 0
    code, text = run(inspect, str(tmp_path / "memory_manager_state"), False)
    explained = io.StringIO()
    assert cli.main(["explain", tutorial, "--step", "1"], out=explained, err=io.StringIO()) == 0
    assert "3996Mi (4190109696)" in text and "1948Mi (2042626048)" in text and "3.90Gi" not in text
    assert "1948Mi / 3996Mi" in explained.getvalue()


def test_inspect_json_matches_the_checkpoint_shape(tmp_path) -> None:
    blob = encode_checkpoint("Static", MACHINE, ENTRIES, {"pod-uid": PodEntry([Block([2], "memory", GI)])}, fmt="v2")
    code, text = run(inspect, write(tmp_path, blob), True)
    assert code == 0
    report = json.loads(text)
    assert report["format"] == "v2" and report["loadedAs"] == "v2"
    assert report["checksum"]["verdict"] == "valid" and report["checksum"]["stored"] == json.loads(blob)["checksum"]
    assert report["machineState"] == json.loads(blob)["machineState"]
    assert report["entries"] == json.loads(blob)["entries"]
    assert report["podEntries"] == json.loads(blob)["podEntries"]
    assert report["groups"] == [[0, 1], [2]]
    assert report["nodes"][1]["resources"]["memory"]["free"] == 5 * GI


@pytest.mark.parametrize(
    "blob, verdict",
    [
        (REAL_NONE, "valid"),
        (REAL_NONE.replace(b"4236770233", b"0"), "not checked (0)"),
        (REAL_NONE.replace(b"4236770233", b"42"), "corrupted: expected 4236770233 stored 42"),
    ],
)
def test_checksum_verdicts(tmp_path, blob, verdict) -> None:
    code, text = run(inspect, write(tmp_path, blob), True)
    report = json.loads(text)
    assert code == 0 and report["format"] == "v1"
    assert report["checksum"]["verdict"] == verdict
    assert (report["loadError"] is None) == (verdict != f"corrupted: expected 4236770233 stored 42")


def test_v3_with_bad_data_checksum(tmp_path) -> None:
    doc = json.loads(encode_checkpoint("Static", MACHINE, ENTRIES))
    good = doc["dataChecksum"]
    doc["dataChecksum"] = 7
    code, text = run(inspect, write(tmp_path, json.dumps(doc).encode()), False)
    assert code == 0
    assert f"checksum:    corrupted: expected {good} stored 7 (dataChecksum)" in text
    assert "kubelet:     refuses it: could not load v3 checkpoint: checkpoint is corrupted" in text


def test_inspect_undecodable_and_missing(tmp_path) -> None:
    code, text = run(inspect, write(tmp_path, b'{"policyName":'), False)
    assert code == 1 and "unexpected end of JSON input" in text
    from memorymanager.cli.app import main

    for path, words in ((tmp_path / "nothing", "no such file"), (tmp_path, "is a directory")):
        for extra in ([], ["--json"]):  # a path that cannot be read is the command's error, as everywhere
            out, err = io.StringIO(), io.StringIO()
            assert main(["checkpoint", "inspect", str(path), *extra], out=out, err=err) == 2
            assert out.getvalue() == "" and err.getvalue().startswith(f"memorymanager: error: {path}: {words}")


def test_verify(tmp_path) -> None:
    path = write(tmp_path, REAL_NONE)
    assert run(verify, path, None)[0] == 0
    code, text = run(verify, path, "None")
    assert code == 0 and text.startswith("OK: kubelet would load") and "format v1" in text
    code, text = run(verify, path, "Static")
    assert code == 1
    assert text.strip() == (
        'FAIL: could not restore state from checkpoint: [memorymanager] configured policy "Static" differs from '
        f'state checkpoint policy "None", please drain this node and delete the memory manager checkpoint file '
        f'"{path}" before restarting Kubelet'
    )
    bad = write(tmp_path, REAL_NONE.replace(b"4236770233", b"4236770234"), "bad")
    code, text = run(verify, bad, "None")
    assert code == 1 and "could not restore state from checkpoint: checkpoint is corrupted, please drain" in text
    code, text = run(verify, str(tmp_path / "missing"), None)
    assert code == 1 and text.startswith("FAIL: ") and "no such file" in text


def test_verify_reports_the_kubelet_crash_case(tmp_path) -> None:
    path = write(tmp_path, encode_checkpoint("Static", {0: NUMANodeState(0, {"memory": None}, [0])}, {}))
    code, text = run(verify, path, "Static")
    assert code == 1 and "kubelet would crash" in text


def test_cli_wiring(tmp_path, capsys) -> None:
    from memorymanager.cli.app import main

    path = write(tmp_path, REAL_NONE)
    assert main(["checkpoint", "verify", path, "--policy", "None"]) == 0
    assert main(["checkpoint", "inspect", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])["policyName"] == "None"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=80), st.booleans())
def test_never_a_traceback(tmp_path, blob, as_json) -> None:
    path = write(tmp_path, blob, "garbage")
    assert run(inspect, path, as_json)[0] in (0, 1)
    assert run(verify, path, "None")[0] in (0, 1)


def test_inspect_shows_how_allocatable_is_derived(tmp_path) -> None:
    path = write(tmp_path, encode_checkpoint("Static", MACHINE, ENTRIES, fmt="v3"))
    _, text = run(inspect, path, False)
    assert "allocatable = MemTotal - hugepages - reservedMemory" in text
    # node 0 claims 7Gi allocatable although its 1Gi hugepage pool leaves 8Gi - 1Gi - 1Gi = 6Gi: told, not hidden
    assert "    memory 8Gi - 1Gi - 1Gi = 7Gi (does not add up: not derived from one machine)" in text
    assert "    memory 8Gi - 0 - 1Gi = 7Gi\n" in text  # node 1
    _, doc = run(inspect, path, True)
    rows = json.loads(doc)["nodes"][0]["allocatableDerivation"]
    assert rows[0] == {"resource": "memory", "total": 8 * GI, "hugepages": GI, "reserved": GI, "allocatable": 7 * GI,
                       "addsUp": False}
    assert rows[1] == {"resource": "hugepages-2Mi", "total": GI, "hugepages": 0, "reserved": 0, "allocatable": GI,
                       "addsUp": True}
