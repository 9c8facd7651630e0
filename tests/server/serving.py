"""A real server on a real unix socket in a temp folder, and real gRPC clients for it."""
from __future__ import annotations

import contextlib
import json
import os
from typing import Any, Iterator, Optional

import grpc

from kubeinputs.limits import DEFAULT_LIMITS, Limits
import memorymanager
from memorymanager.server.host import NodeHost
from memorymanager.server.podresources import ProviderData
from memorymanager.server.protos.control import control_pb2 as ctl
from memorymanager.server.protos.control import control_pb2_grpc as ctl_grpc
from memorymanager.server.protos.v1 import api_pb2 as v1
from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc
from memorymanager.server.protos.v1alpha1 import api_pb2 as v1alpha1
from memorymanager.server.protos.v1alpha1 import api_pb2_grpc as v1alpha1_grpc
from memorymanager.server.server import NodeServer

# A hang guard for every call (a loaded machine may be slow; a call is never expected to take long).
TIMEOUT = 120

STATIC = {
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "single-numa-node",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
}


def machine(nodes: int = 2, per_node: int = 16 << 30, hugepages_2mi: int = 1024) -> Any:
    return memorymanager.synthetic_machine(nodes, per_node, hugepages_2mi=hugepages_2mi)


def pod(name: str, memory: str = "1Gi", cpu: str = "1", hugepages: Optional[str] = None, namespace: str = "default",
        sidecar: Optional[str] = None, init: Optional[str] = None) -> str:
    """A Guaranteed pod as JSON text."""
    limits: dict[str, str] = {"cpu": cpu, "memory": memory}
    if hugepages:
        limits["hugepages-2Mi"] = hugepages
    spec: dict[str, Any] = {"containers": [{"name": "app", "resources": {"limits": limits}}]}
    inits = []
    if init:
        inits.append({"name": init, "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
    if sidecar:
        inits.append({"name": sidecar, "restartPolicy": "Always", "resources": {"limits": {"cpu": "1", "memory": "512Mi"}}})
    if inits:
        spec["initContainers"] = inits
    return json.dumps({"metadata": {"name": name, "namespace": namespace}, "spec": spec})


class Clients:
    """Stubs of the three services on one channel."""

    def __init__(self, socket_path: str) -> None:
        self.channel = grpc.insecure_channel("unix:" + socket_path)
        self.v1 = v1_grpc.PodResourcesListerStub(self.channel)
        self.v1alpha1 = v1alpha1_grpc.PodResourcesListerStub(self.channel)
        self.control = ctl_grpc.NodeControlStub(self.channel)

    def admit(self, text: str, hints: str = "") -> Any:
        return self.control.Admit(ctl.AdmitRequest(pod=text, hints=hints), timeout=TIMEOUT)

    def list(self) -> Any:
        return self.v1.List(v1.ListPodResourcesRequest(), timeout=TIMEOUT)

    def allocatable(self) -> Any:
        return self.v1.GetAllocatableResources(v1.AllocatableResourcesRequest(), timeout=TIMEOUT)

    def get(self, name: str, namespace: str = "default") -> Any:
        return self.v1.Get(v1.GetPodResourcesRequest(pod_name=name, pod_namespace=namespace), timeout=TIMEOUT)

    def list_alpha(self) -> Any:
        return self.v1alpha1.List(v1alpha1.ListPodResourcesRequest(), timeout=TIMEOUT)


@contextlib.contextmanager
def serving(tmp_path: Any, kubelet: Optional[dict] = None, *, rate_limit: Any = False, nodes: int = 2,
            providers: Optional[ProviderData] = None, metrics: bool = False,
            state_dir: Any = None, isolate: bool = False,
            pods_file: bool = False, limits: Limits = DEFAULT_LIMITS, machine_info: Any = None,
            devices: Any = None) -> Iterator[tuple[NodeServer, Clients]]:
    """A started server (state in `tmp_path/state`) and clients; stopped afterwards. `isolate`: the node
    in its own process, as `memorymanager serve` runs it (with its pod list when `pods_file`); `limits`:
    the readers' and the control requests' work limits; `machine_info` (default: a synthetic machine of
    `nodes` nodes) and `devices`: the node's machine and device plugins."""
    from memorymanager.server.host import PODS_FILE_NAME
    from memorymanager.server.node_process import GatedFileOps

    state = state_dir or (tmp_path / "state")
    os.makedirs(state, exist_ok=True)
    node = memorymanager.Node(machine(nodes) if machine_info is None else machine_info,
                              STATIC if kubelet is None else kubelet, state_dir=state, limits=limits, devices=devices)
    host = NodeHost(node, pods_file=os.path.join(state, PODS_FILE_NAME) if pods_file else None,
                    file_ops=GatedFileOps(limits) if isolate else None)
    server = NodeServer(host, str(tmp_path / "pr" / "kubelet.sock"), providers=providers,
                        rate_limit=rate_limit, metrics_address=("127.0.0.1", 0) if metrics else None,
                        isolate=isolate)
    server.start()
    clients = Clients(server.socket_path)
    try:
        yield server, clients
    finally:
        clients.channel.close()
        server.stop(0.5)


def memory_of(container: Any) -> list[tuple[str, int, list[int]]]:
    """A ContainerMemory list as (type, size, NUMA ids)."""
    return [(m.memory_type, m.size, [n.ID for n in m.topology.nodes]) for m in container.memory]
