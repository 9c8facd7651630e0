"""Clients on one `memorymanager serve` socket: admit, remove, List, Get and metrics scrapes, counted
and timed; optionally one of them sends costly requests (issue 27).

`memorymanager serve` runs as the user runs it, in its own process (its node in a process of its
own). Every call's outcome is recorded: `ok`, an expected refusal (a pod that does not fit is
admitted: false; a costly request past the work budget gets RESOURCE_EXHAUSTED), or an error (any
other gRPC status, a metrics page that is not 200). Each call's latency is kept per kind of call.
The property: no errors, and at the end PodResources, the node's pod list and the checkpoint hold
exactly the pods whose admission was acknowledged and not removed.

With `costly`, client 0 sends, in a loop, the requests that used to stall the server (an Explain
of 10,000 containers, WouldAdmit/Explain/Admit of 2,000 init containers: refused by the work
budget now) and the largest ones the budget takes (WouldAdmit and Admit of 1,000 init containers,
an Explain of 500 containers), while the others keep to their mix; the latencies of the others'
List and metrics calls are the figure of docs/limits.md. With `processes`, each client is a
process of its own (the figures: no client waits for another client's interpreter).
"""
from __future__ import annotations

import collections
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any, Optional

import grpc

import memorymanager
from kubeinputs.machine import machine_info_to_obj
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.control import control_pb2_grpc as ctl_grpc
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc

KUBELET = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}
TIMEOUT = 60.0


def pod_json(name: str, memory: str = "64Mi") -> str:
    return json.dumps({"metadata": {"name": name, "namespace": "load"},
                       "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": memory}}}]}})


def _container(name: str) -> dict:
    return {"name": name, "resources": {"limits": {"cpu": "1", "memory": "1Mi"}}}


def big_pod(name: str, containers: int = 1, init_containers: int = 0) -> str:
    """A Guaranteed pod of many small containers (the costly client's requests)."""
    spec: dict = {"containers": [_container(f"c{i}") for i in range(containers)]}
    if init_containers:
        spec["initContainers"] = [_container(f"i{i}") for i in range(init_containers)]
    return json.dumps({"metadata": {"name": name, "namespace": "load"}, "spec": spec})


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: collections.Counter = collections.Counter()
        self.errors: list[str] = []
        self.live: set[str] = set()
        self.latency: dict[str, list[float]] = collections.defaultdict(list)

    def add(self, key: str, error: str = "", seconds: Optional[float] = None, kind: Optional[str] = None) -> None:
        with self.lock:
            self.counts[key] += 1
            if seconds is not None:
                self.latency[kind or key].append(seconds)
            if error and len(self.errors) < 20:
                self.errors.append(f"{key}: {error}")

    def merge(self, other: "Tally") -> None:
        with self.lock:
            self.counts.update(other.counts)
            self.errors.extend(other.errors[: max(0, 20 - len(self.errors))])
            self.live |= other.live
            for kind, values in other.latency.items():
                self.latency[kind].extend(values)


def _timed(tally: Tally, kind: str, call: Any) -> Any:
    start = time.perf_counter()
    answer = call()
    seconds = time.perf_counter() - start
    with tally.lock:
        tally.latency[kind].append(seconds)
    return answer


MIX = ["admit", "admit", "remove", "list", "get", "metrics"]
# beside the costly client: control requests wait behind its work, so the readers' calls are the many
READER_MIX = ["admit", "remove"] + ["list", "get", "metrics"] * 4


def client(socket_path: str, metrics_url: str, seconds: Optional[float], index: int, tally: Tally,
           mix: Optional[list[str]] = None, calls: Optional[int] = None) -> None:
    """The mixed client: admit, remove, List, Get, scrape; for `seconds` (the long run), or exactly
    `calls` operations (CI: the same work on any machine, however busy)."""
    rng = random.Random(index)
    mix = mix or MIX
    channel = grpc.insecure_channel("unix:" + socket_path)
    control = ctl_grpc.NodeControlStub(channel)
    lister = v1_grpc.PodResourcesListerStub(channel)
    mine: list[str] = []
    n = 0
    deadline = time.monotonic() + (seconds or 0.0)
    made = 0
    try:
        while made < calls if calls is not None else time.monotonic() < deadline:
            made += 1
            op = rng.choice(mix)
            try:
                if op == "admit":
                    name = f"c{index}-p{n}"
                    n += 1
                    answer = _timed(tally, op, lambda: control.Admit(ctl.AdmitRequest(pod=pod_json(name)),
                                                                     timeout=TIMEOUT))
                    if answer.admitted:
                        mine.append(name)
                        with tally.lock:
                            tally.live.add(name)
                    tally.add("admit" if answer.admitted else "admit refused")
                elif op == "remove":
                    if not mine:
                        continue
                    name = mine.pop(rng.randrange(len(mine)))
                    _timed(tally, op, lambda: control.Remove(ctl.RemoveRequest(pod=name), timeout=TIMEOUT))
                    with tally.lock:
                        tally.live.discard(name)
                    tally.add("remove")
                elif op == "list":
                    _timed(tally, op, lambda: lister.List(v1.ListPodResourcesRequest(), timeout=TIMEOUT))
                    tally.add("list")
                elif op == "get":
                    target = mine[-1] if mine else "absent"
                    try:
                        _timed(tally, op, lambda: lister.Get(
                            v1.GetPodResourcesRequest(pod_name=target, pod_namespace="load"), timeout=TIMEOUT))
                        tally.add("get")
                    except grpc.RpcError as exc:
                        if target == "absent" and exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNKNOWN):
                            tally.add("get unknown pod")
                        else:
                            raise
                else:
                    def scrape() -> int:
                        with urllib.request.urlopen(metrics_url, timeout=TIMEOUT) as page:
                            page.read()
                            return page.status

                    status = _timed(tally, "metrics", scrape)
                    tally.add("metrics" if status == 200 else "error", "" if status == 200 else f"metrics {status}")
            except grpc.RpcError as exc:
                tally.add("error", f"{op}: {exc.code().name}: {exc.details()}")
            except OSError as exc:
                tally.add("error", f"{op}: {exc}")
    finally:
        channel.close()


# The costly client's loop: (kind, the call, the status it must end with: OK or RESOURCE_EXHAUSTED).
def _costly_calls(control: Any, index: int, largest: tuple[int, int] = (1000, 500)
                  ) -> list[tuple[str, Any, grpc.StatusCode]]:
    """`largest`: the init containers and the explained containers of the requests the budget takes
    (its limits by default; smaller in CI, where only the refusals and one answer are checked)."""
    ok, budget = grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED
    name = f"costly-{index}"
    inits, explained = largest
    return [
        ("explain 10,000 containers", lambda: control.Explain(ctl.ExplainRequest(pod=big_pod(name, 10_000)),
                                                              timeout=TIMEOUT), budget),
        ("would-admit 2,000 init containers", lambda: control.WouldAdmit(
            ctl.AdmitRequest(pod=big_pod(name, 1, 2000)), timeout=TIMEOUT), budget),
        ("explain 2,000 init containers", lambda: control.Explain(ctl.ExplainRequest(pod=big_pod(name, 1, 2000)),
                                                                  timeout=TIMEOUT), budget),
        ("admit 2,000 init containers", lambda: control.Admit(ctl.AdmitRequest(pod=big_pod(name, 1, 2000)),
                                                              timeout=TIMEOUT), budget),
        (f"would-admit {inits:,} init containers", lambda: control.WouldAdmit(
            ctl.AdmitRequest(pod=big_pod(name, 1, inits)), timeout=TIMEOUT), ok),
        (f"explain {explained:,} containers", lambda: control.Explain(ctl.ExplainRequest(pod=big_pod(name, explained)),
                                                                      timeout=TIMEOUT), ok),
        (f"admit {inits:,} init containers", lambda: control.Admit(ctl.AdmitRequest(pod=big_pod(name, 1, inits)),
                                                                   timeout=TIMEOUT), ok),
        ("remove it", lambda: control.Remove(ctl.RemoveRequest(pod=name), timeout=TIMEOUT), ok),
    ]


def costly_client(socket_path: str, seconds: Optional[float], index: int, tally: Tally,
                  largest: tuple[int, int] = (1000, 500)) -> None:
    """Client 0 with `costly`: the requests that used to stall the server, in a loop (one loop when
    `seconds` is None: the clients then make a count of calls, not run for a time)."""
    channel = grpc.insecure_channel("unix:" + socket_path)
    control = ctl_grpc.NodeControlStub(channel)
    deadline = time.monotonic() + (seconds or 0.0)
    try:
        while True:  # whole loops: at least one, and the costly pod is always removed again
            for kind, call, expected in _costly_calls(control, index, largest):
                start = time.perf_counter()
                try:
                    call()
                    code = grpc.StatusCode.OK
                except grpc.RpcError as exc:
                    code, detail = exc.code(), exc.details()
                seconds_taken = time.perf_counter() - start
                if code == expected:
                    tally.add(kind if code == grpc.StatusCode.OK else f"{kind}: refused by the budget",
                              seconds=seconds_taken, kind=kind)
                else:
                    tally.add("error", f"{kind}: {code.name}: {detail if code != grpc.StatusCode.OK else 'answered'}")
            if time.monotonic() >= deadline:
                break
    finally:
        channel.close()


def _client_process(socket_path: str, metrics_url: str, seconds: float, index: int, costly: bool,
                    with_costly: bool, results: Any) -> None:
    """One client in a process of its own; its tally goes back on `results`."""
    tally = Tally()
    try:
        if costly:
            costly_client(socket_path, seconds, index, tally)
        else:
            client(socket_path, metrics_url, seconds, index, tally, READER_MIX if with_costly else MIX)
    finally:
        tally.lock = None  # type: ignore[assignment]
        results.put(tally.__dict__)


def start_serve(tmp: str, extra: tuple = ()) -> tuple[subprocess.Popen, str, str, str]:
    """`memorymanager serve` on a 2-NUMA machine with its state in `tmp/state`: (process, socket,
    metrics URL, state folder)."""
    state = os.path.join(tmp, "state")
    os.makedirs(state, exist_ok=True)
    machine = os.path.join(tmp, "machine.json")
    with open(machine, "w") as fh:
        json.dump(machine_info_to_obj(memorymanager.synthetic_machine(2, 64 << 30, hugepages_2mi=0)), fh)
    kubelet = os.path.join(tmp, "kubelet.json")
    with open(kubelet, "w") as fh:
        json.dump({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **KUBELET}, fh)
    sock = os.path.join(tmp, "s", "kubelet.sock")
    proc = subprocess.Popen([sys.executable, "-m", "memorymanager", "serve", "--socket", sock, "--machine", machine,
                             "--kubelet", kubelet, "--state-dir", state, "--no-rate-limit",
                             "--metrics-address", "127.0.0.1:0", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    second = proc.stdout.readline()
    if not first.startswith("serving on") or not second.startswith("metrics on"):
        proc.kill()
        raise RuntimeError(first + second + proc.stderr.read())
    return proc, sock, second.split()[-1], state


def stop_serve(proc: subprocess.Popen) -> float:
    """SIGTERM; the seconds until the process ended."""
    start = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return time.perf_counter() - start


def percentiles(values: list[float]) -> dict[str, float]:
    """p50, p90, p99 and max, in milliseconds."""
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return {"n": len(ordered), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": ordered[-1] * 1000}


def run_load(tmp: str, seconds: Optional[float], clients: int = 8, *, calls: Optional[int] = None,
             costly: bool = False, processes: bool = False,
             largest: tuple[int, int] = (1000, 500)) -> tuple[Tally, dict[str, Any]]:
    """Serve from `tmp`, run the clients (for `seconds`, or `calls` operations each; the costly client
    then makes one loop), and compare PodResources, the pod list and the checkpoint with the tally."""
    from state.checkpoint import read_checkpoint

    proc, sock, metrics_url, state = start_serve(tmp)
    tally = Tally()
    start = time.monotonic()
    try:
        if processes:
            context = multiprocessing.get_context("spawn")
            results = context.Queue()
            workers = [context.Process(target=_client_process, args=(sock, metrics_url, seconds, i, costly and i == 0,
                                                                     costly, results)) for i in range(clients)]
            for w in workers:
                w.start()
            for _ in workers:
                other = Tally()
                other.__dict__.update(results.get(timeout=(seconds or 0.0) + 600))
                other.lock = threading.Lock()
                tally.merge(other)
            for w in workers:
                w.join()
        else:
            threads = [threading.Thread(target=costly_client if costly and i == 0 else client,
                                        args=(sock, seconds, i, tally, largest) if costly and i == 0
                                        else (sock, metrics_url, seconds, i, tally, READER_MIX if costly else MIX,
                                              calls))
                       for i in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        elapsed = time.monotonic() - start
        channel = grpc.insecure_channel("unix:" + sock)
        listed = {p.name: p for p in v1_grpc.PodResourcesListerStub(channel).List(
            v1.ListPodResourcesRequest(), timeout=TIMEOUT).pod_resources}
        pods = [p.name for p in ctl_grpc.NodeControlStub(channel).ListPods(ctl.ListPodsRequest(), timeout=TIMEOUT).pods]
        channel.close()
    finally:
        stop_seconds = stop_serve(proc)
    with open(os.path.join(state, "memory_manager_state"), "rb") as fh:
        by_uid = read_checkpoint(fh.read()).entries or {}
    # the clients' pods are in namespace `load`, so their UIDs are `load/NAME`: compared by name
    entries = {uid[len("load/"):] if uid.startswith("load/") else uid: containers for uid, containers in by_uid.items()}
    with open(os.path.join(state, "served_pods.json")) as fh:
        served = [p["metadata"]["name"] for p in json.load(fh)["pods"]]
    agree = all([(m.memory_type, m.size) for c in listed[name].containers for m in c.memory]
                == [(b.type, b.size) for blocks in entries[name].values() for b in blocks] for name in entries
                if name in listed)
    summary = {"seconds": elapsed, "requests": sum(tally.counts.values()), "errors": tally.counts["error"],
               "stored_pods": sorted(entries), "live": sorted(tally.live), "listed": sorted(listed),
               "pods": sorted(pods), "served": sorted(served), "podresources_equals_checkpoint": agree,
               "stop_seconds": stop_seconds,
               "latency": {kind: percentiles(values) for kind, values in sorted(tally.latency.items())}}
    return tally, summary
