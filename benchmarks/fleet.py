"""B7: the fleet simulation at scale: 1,000 nodes (2-, 4- and 8-NUMA groups) and a bound
trace of 100,000 pod events, on the local engine with 1 and 2 worker processes and on Dask
(a LocalCluster of 2 single-threaded worker processes); then the numa-aware rule on the same
trace, bound (the filter asked before each admission) and unbound (the filter places every pod),
with the rate over the first and the last tenth of the events; then the numa-aware rule again on
nodes whose CPU manager pins CPUs (static policy) and whose device plugins report one GPU per NUMA
node, a fifth of the pods asking for one.

Events per second count the replay (nodes built, events applied, results folded), not the
reading of the trace file, which is timed on its own. Peak memory is the largest summed
proportional set size (PSS: shared pages split between the processes sharing them, so forked
workers do not count their parent's pages again) of this process and its children (pool
workers, Dask nanny and workers), sampled every 100 ms. The three runs must give the same summary; the row notes say whether they did.
"""
from __future__ import annotations

import json
import os
import random
import tempfile
import threading
import time
from typing import Callable

import psutil

from benchmarks.timing import Row

GROUPS = (("duo", 2, 500), ("quad", 4, 350), ("octo", 8, 150))  # name, NUMA nodes, share per 1,000


def write_fleet(folder: str, nodes: int, events: int, seed: int = 7, placement: str = "first-fit",
                bound: bool = True, pinned: bool = False) -> str:
    """A fleet file and its trace in `folder` (bound: every add names its node; else the placement
    rule places it); the fleet file's path. `pinned`: the CPU manager's static policy (16 CPUs per
    NUMA node as 8 cores x 2 threads, CPU 0 reserved) and one GPU per NUMA node, a fifth of the pods
    asking for one."""
    rng = random.Random(seed)
    groups = [(name, numa, max(1, nodes * share // 1000)) for name, numa, share in GROUPS]
    kubelet = ("{memoryManagerPolicy: Static, topologyManagerPolicy: single-numa-node, "
               + ('cpuManagerPolicy: static, reservedSystemCPUs: "0", ' if pinned else "")
               + "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]}")
    cores = "coresPerNode: 8, threadsPerCore: 2" if pinned else "coresPerNode: 16"
    lines = ["name: b7", "nodes:"]
    for name, numa, count in groups:
        lines += [f"- name: {name}", f"  count: {count}",
                  f"  machine: {{numaNodes: {numa}, memoryPerNode: 16Gi, {cores}}}", f"  kubelet: {kubelet}"]
        if pinned:
            gpus = ", ".join(f"{{id: gpu{n}, numaNodes: [{n}]}}" for n in range(numa))
            lines.append(f"  devices: {{example.com/gpu: [{gpus}]}}")
    lines += ["trace: trace.jsonl", f"placement: {placement}"]
    with open(os.path.join(folder, "fleet.yaml"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    names = [f"{name}-{i}" for name, _, count in groups for i in range(count)]
    active: dict[str, list[str]] = {n: [] for n in names}
    with open(os.path.join(folder, "trace.jsonl"), "w") as fh:
        for t in range(events):
            node = rng.choice(names)
            if active[node] and (len(active[node]) > 12 or rng.random() < 0.45):
                pod = active[node].pop(rng.randrange(len(active[node])))
                fh.write(json.dumps({"time": t, "delete": pod}) + "\n")
                continue
            pod = f"p{t}"
            memory = rng.choice(("1Gi", "2Gi", "3Gi", "6Gi", "12Gi"))
            cpu = rng.choice(("1", "2", "4"))
            limits = {"cpu": cpu, "memory": memory}
            if pinned and rng.random() < 0.2:
                limits["example.com/gpu"] = "1"
            manifest = {"metadata": {"name": pod},
                        "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}}
            event = {"time": t, "add": manifest, "nodeName": node} if bound else {"time": t, "add": manifest}
            fh.write(json.dumps(event) + "\n")
            active[node].append(pod)
    return os.path.join(folder, "fleet.yaml")


class PeakMemory:
    """The largest summed PSS (RSS where PSS is unavailable) of this process and its
    descendants while running."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for proc in [me] + me.children(recursive=True):
                try:
                    info = proc.memory_full_info()
                    total += getattr(info, "pss", info.rss)
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(0.1)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _timed(fn: Callable[[], str]) -> tuple[float, int, str]:
    with PeakMemory() as peak:
        start = time.perf_counter()
        text = fn()
        elapsed = time.perf_counter() - start
    return elapsed, peak.peak, text


def run(quick: bool = False) -> list[Row]:
    """The B7 rows: trace reading, then events/s and peak memory per engine."""
    from memorymanager.fleet.engines import execute
    from memorymanager.fleet.spec import load_fleet
    from memorymanager.fleet.summary import build_summary, dumps
    from memorymanager.fleet.trace import load_trace

    nodes, events = (100, 10_000) if quick else (1000, 100_000)
    case = f"{nodes:,} nodes, {events:,} events"
    rows = []
    with tempfile.TemporaryDirectory(prefix="b7-") as folder:
        spec = load_fleet(write_fleet(folder, nodes, events))
        start = time.perf_counter()
        trace = load_trace(spec.trace, spec.templates, spec.node_names())
        rows.append(Row("B7", case, "read trace", len(trace) / (time.perf_counter() - start), "ops/s",
                        "events parsed and checked per second"))
        texts = []
        for label, engine in (("local, 1 worker", {"engine": "local", "workers": 1}),
                              ("local, 2 workers", {"engine": "local", "workers": 2}),
                              ("dask, 2 workers", {"engine": "dask", "workers": 2})):
            def replay() -> str:
                results = execute(spec, trace, **engine)  # type: ignore[arg-type]
                return dumps(build_summary(spec, results, events=len(trace), bound=True))
            elapsed, peak, text = _timed(replay)
            texts.append(text)
            rows.append(Row("B7", case, label, len(trace) / elapsed, "ops/s",
                            f"{elapsed:.1f} s, peak memory {peak / (1 << 20):,.0f} MiB"))
        same = all(t == texts[0] for t in texts)
        rows[-1].note += "; summaries identical" if same else "; SUMMARIES DIFFER"
        for label, bound in (("numa-aware, bound, local 1 worker", True), ("numa-aware, unbound, local 1 worker", False)):
            sub = os.path.join(folder, "bound" if bound else "unbound")
            os.mkdir(sub)
            rows.append(_numa_aware_row(case, label, load_fleet(write_fleet(sub, nodes, events, placement="numa-aware",
                                                                              bound=bound))))
        for label, bound in (("numa-aware, static CPUs + GPUs, bound, local 1 worker", True),
                             ("numa-aware, static CPUs + GPUs, unbound, local 1 worker", False)):
            sub = os.path.join(folder, "pinned-bound" if bound else "pinned-unbound")
            os.mkdir(sub)
            rows.append(_numa_aware_row(case, label, load_fleet(write_fleet(sub, nodes, events, placement="numa-aware",
                                                                              bound=bound, pinned=True))))
    return rows


def _numa_aware_row(case: str, label: str, spec: object) -> Row:
    """Events/s of one numa-aware replay, with the rate over its first and last tenth of events (equal
    when the per-event cost does not grow as the fleet fills)."""
    from memorymanager.fleet.engines import execute
    from memorymanager.fleet.trace import load_trace

    trace = load_trace(spec.trace, spec.templates, spec.node_names())  # type: ignore[attr-defined]
    marks: list[tuple[int, float]] = []
    done = 0

    def progress(events: int) -> None:
        nonlocal done
        done += events
        marks.append((done, time.perf_counter()))

    start = time.perf_counter()
    marks.append((0, start))
    elapsed, peak, _ = _timed(lambda: str(execute(spec, trace, progress=progress)))  # type: ignore[arg-type]
    tenth = len(trace) // 10

    def rate(lo: int, hi: int) -> float:
        a = min(marks, key=lambda m: abs(m[0] - lo))
        b = min(marks, key=lambda m: abs(m[0] - hi))
        return (b[0] - a[0]) / max(b[1] - a[1], 1e-9)

    return Row("B7", case, label, len(trace) / elapsed, "ops/s",
               f"{elapsed:.1f} s, peak memory {peak / (1 << 20):,.0f} MiB; first tenth {rate(0, tenth):,.0f}/s, "
               f"last tenth {rate(len(trace) - tenth, len(trace)):,.0f}/s")


if __name__ == "__main__":
    import sys

    for row in run("--quick" in sys.argv):
        print(row)
