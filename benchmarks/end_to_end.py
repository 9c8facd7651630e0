"""B15: `memorymanager run` end to end against the same admissions in process.

The scenario: 1,000 one-container Guaranteed pods (cpu 1, memory 32Mi) admitted one by one and
kept, on 2 and on 8 NUMA nodes of 64Gi (Static memory manager, restricted topology manager,
each step expecting `admitted: true`). "in process" admits the same pod manifests through
`memorymanager.Node` (in-memory state, no checkpoint file); "run" is the command in a new
process (start-up, reading and checking the file, the checkpoint in a temporary folder,
expectations, the report). Both are timed in one run, alternating, and the ratio is
run / (2 x in process + 0.5 s): at most 1 meets the target of issue 26.

Also timed: the per-step cost of `run` (the command's main in this process, so without the
interpreter's start-up) on 1,000 and 10,000 steps of admit/remove churn (the live state stays
small), whose ratio shows that steps cost the same however many there are.
"""
from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.timing import Row

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GiB = 1 << 30
START_UP_ALLOWANCE = 0.5  # seconds


def machine(nodes: int) -> dict:
    """cadvisor MachineInfo: `nodes` NUMA nodes of 64Gi, two CPUs each."""
    return {
        "num_cores": 2 * nodes,
        "memory_capacity": nodes * 64 * GiB,
        "topology": [
            {"node_id": n, "memory": 64 * GiB, "distances": [10 if m == n else 20 for m in range(nodes)],
             "cores": [{"core_id": n, "thread_ids": [2 * n, 2 * n + 1], "socket_id": n}]}
            for n in range(nodes)
        ],
    }


KUBELET = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "restricted",
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def pod(i: int) -> dict:
    """Guaranteed pod `p<i>`: one container, cpu 1, memory 32Mi."""
    return {"metadata": {"name": f"p{i}"},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "32Mi"}}}]}}


def admissions(pods: int, nodes: int) -> dict:
    """`pods` admissions, all kept, each expecting `admitted: true`."""
    return {"name": f"{pods} admissions on {nodes} NUMA nodes", "machine": machine(nodes), "kubelet": KUBELET,
            "steps": [{"admit": pod(i), "expect": {"admitted": True}} for i in range(pods)]}


def churn(steps: int, nodes: int) -> dict:
    """`steps` steps alternating an admission (expecting `admitted: true`) and the pod's removal."""
    out: list[dict] = []
    for i in range(steps // 2):
        out += [{"admit": pod(i), "expect": {"admitted": True}}, {"remove": {"pod": f"p{i}"}}]
    return {"name": f"{steps} steps of churn on {nodes} NUMA nodes", "machine": machine(nodes), "kubelet": KUBELET,
            "steps": out}


def in_process(doc: dict) -> float:
    """Seconds to admit the scenario's pods through memorymanager.Node (started first, off the clock)."""
    import memorymanager

    node = memorymanager.Node(doc["machine"], doc["kubelet"])
    node.start()
    pods = [step["admit"] for step in doc["steps"]]
    start = time.perf_counter()
    for manifest in pods:
        if not node.admit(manifest).admitted:
            raise RuntimeError(f"{manifest['metadata']['name']} was not admitted")
    return time.perf_counter() - start


def run_command(path: str) -> float:
    """Wall seconds of `python -m memorymanager run PATH` in a new process (it must pass)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memorymanager", "run", path], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"run {path} exited {done.returncode}: {done.stdout.decode()[-2000:]}{done.stderr.decode()}")
    return elapsed


def run_in_process(path: str) -> float:
    """Seconds of `memorymanager run PATH` through the command's main in this process (reading, checking,
    running, reporting; no interpreter start-up). It must pass."""
    from memorymanager.cli.app import main

    out = io.StringIO()
    start = time.perf_counter()
    code = main(["run", path], out, out)
    elapsed = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"run {path} exited {code}: {out.getvalue()[-2000:]}")
    return elapsed


def _write(folder: str, name: str, doc: dict) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    return path


def run(repeats: int = 3, pods: int = 1000, churn_steps: tuple[int, int] = (1000, 10_000)) -> list[Row]:
    """B15 rows: per NUMA size, run vs in process (medians of `repeats` alternating pairs) and the
    ratio to the target; then the per-step time of churn runs of both lengths."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="memorymanager-b15-") as folder:
        for nodes in (2, 8):
            doc = admissions(pods, nodes)
            path = _write(folder, f"admit-{nodes}.json", doc)
            run_command(path)  # warm the bytecode and the page cache
            inside, whole = [], []
            for _ in range(max(1, repeats)):
                inside.append(in_process(doc))
                whole.append(run_command(path))
            inside_s, whole_s = statistics.median(inside), statistics.median(whole)
            ratio = whole_s / (2 * inside_s + START_UP_ALLOWANCE)
            case = f"{pods:,} admissions kept, {nodes} NUMA"
            rows.append(Row("B15", case, "in process (Node.admit)", inside_s, "s"))
            rows.append(Row("B15", case, "memorymanager run", whole_s, "s",
                            f"run / (2 x in process + 0.5 s) = {ratio:.2f} (target <= 1)"))
        per_step = {}
        for steps in churn_steps:
            path = _write(folder, f"churn-{steps}.json", churn(steps, 2))
            seconds = statistics.median(run_in_process(path) for _ in range(max(1, repeats)))
            per_step[steps] = seconds / steps
            rows.append(Row("B15", f"{steps:,} steps of admit/remove churn, 2 NUMA", "memorymanager run, in process",
                            seconds, "s", f"{per_step[steps] * 1e3:.3f} ms per step"))
        if len(churn_steps) == 2:
            short, long = churn_steps
            rows[-1].note += f"; {per_step[long] / per_step[short]:.2f}x the {short:,}-step run's"
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for row in run(1 if quick else 3):
        print(row)
