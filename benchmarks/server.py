"""B5 and B6: the node's gRPC APIs over a real unix socket, one client.

B5: PodResources `List` on a node holding 500 Guaranteed pods (8 NUMA nodes), calls per
second, kubelet's rate limit switched off (with it on, a client gets 100 calls/s at most).
B6: node-control `Admit` round trips per second (a pod as JSON; each admitted pod is removed
again once 16 are live, off the clock, so every admission sees a similar node).
"""
from __future__ import annotations

import json
import os
import tempfile
import time

import grpc

from benchmarks.machines import numa_machine, static_config
from benchmarks.timing import Row
from memorymanager.node.api import Node
from memorymanager.server.host import NodeHost
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.control import control_pb2_grpc as ctl_grpc
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc
from memorymanager.server.server import NodeServer


def _pod(name: str, memory: str = "1Gi") -> str:
    return json.dumps({"metadata": {"name": name}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "1", "memory": memory}}}]}})


def _serve(folder: str) -> tuple[NodeServer, grpc.Channel]:
    server = NodeServer(NodeHost(Node(numa_machine(8), static_config("restricted"))),
                        os.path.join(folder, "kubelet.sock"), rate_limit=False)
    server.start()
    return server, grpc.insecure_channel("unix:" + server.socket_path)


def run_b5(calls: int, pods: int = 500) -> list[Row]:
    """List calls per second (median of 5 rounds of `calls` calls): on an unchanged node (the
    server answers from its cache) and with the answer rebuilt for every call (as after a change)."""
    with tempfile.TemporaryDirectory() as folder:
        server, channel = _serve(folder)
        try:
            control = ctl_grpc.NodeControlStub(channel)
            for i in range(pods):
                assert control.Admit(ctl.AdmitRequest(pod=_pod(f"p{i}", "512Mi"))).admitted
            lister = v1_grpc.PodResourcesListerStub(channel)
            assert len(lister.List(v1.ListPodResourcesRequest()).pod_resources) == pods
            rows = []
            for variant, rebuild in (("unchanged node", False), ("rebuilt every call", True)):
                rates = []
                for _ in range(5):
                    start = time.perf_counter()
                    for _ in range(calls):
                        if rebuild:
                            server.host.touch()  # as if the node had changed
                        lister.List(v1.ListPodResourcesRequest())
                    rates.append(calls / (time.perf_counter() - start))
                rates.sort()
                rows.append(Row("B5", f"PodResources List, {pods} pods, 8 NUMA", variant, rates[2], "ops/s",
                                "rate limit off"))
        finally:
            channel.close()
            server.stop(0)
    return rows


def run_b6(admissions: int) -> list[Row]:
    """Admit round trips per second (state in memory)."""
    with tempfile.TemporaryDirectory() as folder:
        server, channel = _serve(folder)
        try:
            control = ctl_grpc.NodeControlStub(channel)
            live: list[str] = []
            elapsed = 0.0
            for i in range(admissions):
                request = ctl.AdmitRequest(pod=_pod(f"p{i}"))
                start = time.perf_counter()
                answer = control.Admit(request)
                elapsed += time.perf_counter() - start
                assert answer.admitted
                live.append(f"p{i}")
                if len(live) > 16:
                    control.Remove(ctl.RemoveRequest(pod=live.pop(0)))
        finally:
            channel.close()
            server.stop(0)
    return [Row("B6", f"control Admit round trips, 8 NUMA, {admissions:,} pods", "state in memory",
                admissions / elapsed, "ops/s")]
