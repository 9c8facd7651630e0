"""`memorymanager explain --node ROOT POD`: a fake node root (fixtures/nodes) and this machine, read-only."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from memorymanager.cli.app import main
from memorymanager.explain.live import explain_on_node
from tests.explain.helpers import ROOT

NODES = ROOT / "fixtures" / "nodes"
FAKE = NODES / "two-nodes"
POD = str(NODES / "pod-4gi.yaml")
HINTS = str(NODES / "cpu-hints.yaml")
MI = 1 << 20


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root: content hash and modification time."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_fake_node_with_cpu_hints_is_refused_and_untouched() -> None:
    before = snapshot(FAKE)
    e = explain_on_node(str(FAKE), POD, hints_path=HINTS)
    assert snapshot(FAKE) == before  # nothing under ROOT written
    rows = {tuple(r.nodes): r for r in e.hints[0].masks}
    assert rows[(0,)].free["memory"] == 924 * MI  # the checkpoint's 4Gi pod is still there
    assert rows[(0,)].fits is False and rows[(1,)].preferred
    assert not e.decision.admitted and e.decision.reason == "TopologyAffinityError"
    assert "cpu prefers 0" in e.decision.why


def test_fake_node_without_hints_admits_on_node_1_as_json() -> None:
    code, out, err = run("explain", "--node", str(FAKE), POD, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema_version"] == 1 and doc["node"] == str(FAKE)
    alloc = doc["explanation"]["allocation"]["containers"][0]
    assert alloc["cpuset_mems"] == "1" and doc["explanation"]["decision"]["admitted"]


def test_bad_roots_name_the_file(tmp_path: Path) -> None:
    code, _, err = run("explain", "--node", str(tmp_path / "none"), POD)
    assert code == 2 and "none" in err and "Traceback" not in err
    root = tmp_path / "node"
    shutil.copytree(FAKE, root)
    (root / "var/lib/kubelet/config.yaml").unlink()
    code, _, err = run("explain", "--node", str(root), POD)
    assert code == 2 and "config.yaml: no kubelet configuration file here" in err
    shutil.copyfile(FAKE / "var/lib/kubelet/config.yaml", root / "var/lib/kubelet/config.yaml")
    state = root / "var/lib/kubelet/memory_manager_state"
    state.write_text(state.read_text()[:100])  # a truncated checkpoint
    code, _, err = run("explain", "--node", str(root), POD)
    assert code == 2 and "memory_manager_state: kubelet could not load this checkpoint" in err
    bad_hints = tmp_path / "h.yaml"
    bad_hints.write_text("nginx: {cpu: []}\n")
    code, _, err = run("explain", "--node", str(FAKE), POD, "--hints", str(bad_hints))
    assert code == 2 and "h.yaml" in err and "no container of this name" in err


@pytest.mark.skipif(not Path("/sys/devices/system/node/node0").is_dir(), reason="this machine shows no NUMA nodes in /sys")
def test_this_machine_read_only(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                      "memoryManagerPolicy: Static\ntopologyManagerPolicy: best-effort\n"
                      "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text("metadata: {name: small}\nspec:\n  containers:\n  - name: c\n"
                   "    resources: {limits: {cpu: '1', memory: 64Mi}}\n")
    code, out, err = run("explain", "--node", "/", str(pod), "--kubelet-config", str(config), "--format", "json")
    assert code == 0, err
    e = json.loads(out)["explanation"]
    assert e["asked"]["containers"][0]["requested"] == {"memory": 64 * MI}
    nodes = {p.name[4:] for p in Path("/sys/devices/system/node").glob("node[0-9]*")}
    assert set(e["allocation"]["before"]) == nodes


def test_fake_node_html_draws_the_node_after_admission(tmp_path: Path) -> None:
    from tests.explain.test_html import collect

    target = tmp_path / "live.html"
    code, _, err = run("explain", "--node", str(FAKE), POD, "--format", "html", "-o", str(target))
    assert code == 0, err
    parser = collect(target.read_text())
    bars = {b["data-resource"]: b for b in parser.steps[0]["1"]}
    assert list(bars) == ["memory", "hugepages-1Gi", "hugepages-2Mi"]
    assert int(bars["memory"]["data-reserved"]) == 4 << 30  # the explained pod, admitted on node 1
    assert int(bars["hugepages-2Mi"]["data-reserved"]) == 256 * MI
    assert parser.pod_rects == 3  # db on node 0, cache's memory and hugepages on node 1


def test_hints_in_the_other_scopes_shape_are_refused_not_ignored(tmp_path: Path) -> None:
    """The fake node is container scope: pod-scope hints would change nothing (kubelet never asks
    for them), so explain refuses them, naming the shape it expects, instead of saying "admitted"."""
    pod_shaped = tmp_path / "pod-hints.yaml"
    pod_shaped.write_text("cpu:\n- {numaAffinity: [0], preferred: true}\n")
    code, out, err = run("explain", "--node", str(FAKE), POD, "--hints", str(pod_shaped))
    assert (code, out) == (2, "")
    assert err.startswith(f"memorymanager: error: {pod_shaped}: hints.cpu: the node's topologyManagerScope is "
                          "'container': expected hints shaped {CONTAINER: {RESOURCE: [HINT, ...]}}")
    list_shaped = tmp_path / "list-hints.yaml"
    list_shaped.write_text("redis:\n- {numaAffinity: [0], preferred: true}\n")
    code, _, err = run("explain", "--node", str(FAKE), POD, "--hints", str(list_shaped))
    assert code == 2 and "hints.redis: " in err and "a list where a map of resource to hints belongs" in err
