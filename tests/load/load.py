"""Eight clients on one `serve` socket: admit, remove, List, Get and metrics scrapes, counted.

Every call's outcome is recorded: `ok`, an expected refusal (a pod that does not fit is admitted:
false, a second remove of a pod gets NOT_FOUND), or an error (any other gRPC status, a metrics
page that is not 200). The property: no errors, and at the end the node's state is exactly the
pods whose admission was acknowledged and not removed.
"""
from __future__ import annotations

import collections
import json
import os
import random
import threading
import time
import urllib.request
from typing import Any, Optional

import grpc

import memorymanager
from memorymanager.server.host import NodeHost
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.control import control_pb2_grpc as ctl_grpc
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc
from memorymanager.server.server import NodeServer

KUBELET = {"memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}


def pod_json(name: str, memory: str = "64Mi") -> str:
    return json.dumps({"metadata": {"name": name, "namespace": "load"},
                       "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": memory}}}]}})


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: collections.Counter = collections.Counter()
        self.errors: list[str] = []
        self.live: set[str] = set()

    def add(self, key: str, error: str = "") -> None:
        with self.lock:
            self.counts[key] += 1
            if error and len(self.errors) < 20:
                self.errors.append(f"{key}: {error}")


def client(socket_path: str, metrics_url: str, seconds: Optional[float], index: int, tally: Tally,
           calls: Optional[int] = None) -> None:
    """One client: random operations for `seconds` (the long run), or exactly `calls` of them (CI:
    the same work on any machine, however busy)."""
    rng = random.Random(index)
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
            op = rng.choice(["admit", "admit", "remove", "list", "get", "metrics"])
            try:
                if op == "admit":
                    name = f"c{index}-p{n}"
                    n += 1
                    answer = control.Admit(ctl.AdmitRequest(pod=pod_json(name)), timeout=30)
                    if answer.admitted:
                        mine.append(name)
                        with tally.lock:
                            tally.live.add(name)
                    tally.add("admit" if answer.admitted else "admit refused")
                elif op == "remove":
                    if not mine:
                        continue
                    name = mine.pop(rng.randrange(len(mine)))
                    control.Remove(ctl.RemoveRequest(pod=name), timeout=30)
                    with tally.lock:
                        tally.live.discard(name)
                    tally.add("remove")
                elif op == "list":
                    lister.List(v1.ListPodResourcesRequest(), timeout=30)
                    tally.add("list")
                elif op == "get":
                    target = mine[-1] if mine else "absent"
                    try:
                        lister.Get(v1.GetPodResourcesRequest(pod_name=target, pod_namespace="load"), timeout=30)
                        tally.add("get")
                    except grpc.RpcError as exc:
                        if target == "absent" and exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNKNOWN):
                            tally.add("get unknown pod")
                        else:
                            raise
                else:
                    with urllib.request.urlopen(metrics_url, timeout=30) as page:
                        if page.status != 200:
                            tally.add("error", f"metrics status {page.status}")
                            continue
                        page.read()
                    tally.add("metrics")
            except grpc.RpcError as exc:
                tally.add("error", f"{op}: {exc.code().name}: {exc.details()}")
            except OSError as exc:
                tally.add("error", f"{op}: {exc}")
    finally:
        channel.close()


def run_load(tmp: str, seconds: Optional[float], clients: int = 8,
             calls: Optional[int] = None) -> tuple[Tally, dict[str, Any]]:
    """Serve a 2-node machine from `tmp`, run the clients (for `seconds`, or `calls` operations each),
    and compare the node with the tally."""
    state = os.path.join(tmp, "state")
    os.makedirs(state, exist_ok=True)
    node = memorymanager.Node(memorymanager.synthetic_machine(2, 64 << 30, hugepages_2mi=0), KUBELET, state_dir=state)
    server = NodeServer(NodeHost(node), os.path.join(tmp, "s", "kubelet.sock"), rate_limit=False,
                        metrics_address=("127.0.0.1", 0))
    server.start()
    host, port = server.metrics.address
    tally = Tally()
    threads = [threading.Thread(target=client, args=(server.socket_path, f"http://{host}:{port}/metrics", seconds, i,
                                                     tally, calls)) for i in range(clients)]
    start = time.monotonic()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - start
        entries = node.simulated_node.state().get_memory_assignments()
    finally:
        server.stop(1.0)
    stored = {uid for uid in entries}
    known = {p.uid: p.name for p in node.simulated_node.active_pods()}
    summary = {"seconds": elapsed, "requests": sum(tally.counts.values()), "errors": tally.counts["error"],
               "stored_pods": sorted(known.get(uid, uid) for uid in stored), "live": sorted(tally.live)}
    return tally, summary
