"""The generated members of the bad-input corpus (too large to store in fixtures/bad) and the
replay of fixtures/bad/cases.yaml."""
from __future__ import annotations

import io
import json
import os
from typing import Any


BAD = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "bad")
TWO_NODES = os.path.join(BAD, "..", "machines", "two-nodes.json")
POD_4GI = os.path.join(BAD, "..", "nodes", "pod-4gi.yaml")


def load_cases() -> list[dict]:
    """fixtures/bad/cases.yaml."""
    import yaml

    with open(os.path.join(BAD, "cases.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def argv_of(case: dict, path: str) -> list[str]:
    """The command line of a case (`args`: more arguments; one starting with @ is a path below fixtures/bad)."""
    command = case["command"]
    extra = [os.path.join(BAD, a[1:]) if a.startswith("@") else a for a in case.get("args", [])]
    if command == "run":
        return ["run", path]
    if command in ("inspect", "verify"):
        return ["checkpoint", command, path, *extra]
    if command == "fleet":
        return ["fleet", os.path.join(path, "fleet.yaml"), "--no-progress"]
    if command == "explain-node":
        return ["explain", "--node", path, POD_4GI]
    return ["machine", "--sysfs-root", path]


def run_cli(argv: list[str]) -> tuple[int, str]:
    """memorymanager's main in this process: (exit code, stdout + stderr)."""
    from memorymanager.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return code, out.getvalue() + err.getvalue()


def scenario_doc(steps: list, kubelet: Any = None) -> dict:
    return {"name": "generated", "machine": json.load(open(TWO_NODES)),
            "kubelet": kubelet or {"memoryManagerPolicy": "Static",
                                   "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
            "steps": steps}


def guaranteed(name: str, memory: str = "1Mi") -> dict:
    return {"name": name, "resources": {"limits": {"cpu": "1", "memory": memory}}}


def pod_with_containers(n: int) -> dict:
    """One pod of `n` containers (was 55 s at 10,000: quadratic)."""
    return scenario_doc([{"admit": {"metadata": {"name": "big"}, "spec": {"containers": [guaranteed(f"c{i}", "64Ki") for i in range(n)]}},
                          "expect": {"admitted": True}}])


def admit_steps(n: int) -> dict:
    """`n` admissions of one-container pods, all kept (1,000 were 12 s)."""
    return scenario_doc([{"admit": {"metadata": {"name": f"p{i}"}, "spec": {"containers": [guaranteed("app")]}},
                          "expect": {"admitted": True}} for i in range(n)])


def churn_steps(n: int) -> dict:
    """`n` steps alternating admit and remove (the live state stays small)."""
    steps: list = []
    for i in range(n // 2):
        steps.append({"admit": {"metadata": {"name": f"p{i}"}, "spec": {"containers": [guaranteed("app")]}}})
        steps.append({"remove": {"pod": f"p{i}"}})
    return scenario_doc(steps)


def write_json(path: str, doc: Any) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    return path


def whitespace_checkpoint(path: str, megabytes: int = 50) -> str:
    """50 MB of blanks, then `{}` (the Go-JSON reader took minutes)."""
    with open(path, "wb") as fh:
        fh.write(b" " * (megabytes << 20) + b"{}")
    return path


def unbound_trace(folder: str, adds: int, nodes: int = 100, live: int = 1000) -> str:
    """A fleet of `nodes` 2-NUMA nodes and an unbound trace of `adds` small adds, each pod deleted
    again `live` adds later (the fleet file's path): 200,000 adds ran past 60 s with no output."""
    with open(os.path.join(folder, "fleet.yaml"), "w", encoding="utf-8") as fh:
        fh.write(f"nodes:\n- name: n\n  count: {nodes}\n  machine: {{numaNodes: 2, memoryPerNode: 64Gi}}\n"
                 "  kubelet: {memoryManagerPolicy: Static, topologyManagerPolicy: single-numa-node,\n"
                 "            reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]}\n"
                 "trace: t.jsonl\nplacement: numa-aware\ntemplates:\n  small: {metadata: {name: small}, spec: {containers:\n"
                 "    [{name: c, resources: {limits: {cpu: '1', memory: 64Mi}}}]}}\n")
    with open(os.path.join(folder, "t.jsonl"), "w", encoding="utf-8") as fh:
        for i in range(adds):
            fh.write(json.dumps({"time": i, "add": {"template": "small", "name": f"p{i}"}}) + "\n")
            if i >= live:
                fh.write(json.dumps({"time": i, "delete": f"p{i - live}"}) + "\n")
    return os.path.join(folder, "fleet.yaml")


def claim_records(folder: str, claims: int) -> str:
    """A resmgr folder whose claims.json holds `claims` small claims and no checkpoint (2,000 hung)."""
    state = os.path.join(folder, "kubelet")
    os.makedirs(state, exist_ok=True)
    records = {f"c{i}": {"uid": f"c{i}", "name": f"n{i}", "namespace": "default",
                         "allocations": [{"request": "mem", "device": f"memory-numa{i % 2}", "numaNode": i % 2,
                                          "resource": "memory", "size": 1 << 20}],
                         "edits": [{"env": [f"CLAIMED_MEMS={i % 2}"]}]} for i in range(claims)}
    with open(os.path.join(state, "claims.json"), "w", encoding="utf-8") as fh:
        json.dump({"version": 1, "claims": records}, fh)
    return folder
