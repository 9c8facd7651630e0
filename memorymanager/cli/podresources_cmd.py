"""`memorymanager podresources list|allocatable|get`: ask a PodResources server, ours or a real
kubelet's (same wire), and print its answer.

    memorymanager podresources list [--socket PATH] [--json]
    memorymanager podresources allocatable [--socket PATH] [--json]
    memorymanager podresources get NAME [--namespace NS] [--socket PATH] [--json]

`--socket` defaults to kubelet's `/var/lib/kubelet/pod-resources/kubelet.sock`. `--json`
prints the response in protobuf's JSON mapping with the proto field names and every field,
zeros and empty lists included (64-bit integers are strings there, as the mapping says). A failed call
prints `memorymanager: error: <Method> on unix:<socket>: <gRPC code>: <message>` and exits 2.
"""
from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

from memorymanager.cli.common import CallError

if TYPE_CHECKING:  # grpc and the messages are imported when a call is made
    from memorymanager.server.protos.v1 import api_pb2 as v1

TIMEOUT_SECONDS = 10.0


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register `podresources`."""
    from memorymanager.server import DEFAULT_SOCKET  # no grpc import while building the parser

    pr = commands.add_parser("podresources", help="query a PodResources gRPC server (ours or a kubelet's)")
    actions = pr.add_subparsers(dest="podresources_command", metavar="ACTION")
    actions.required = True
    for name, text in (("list", "the pods' resources (List)"),
                       ("allocatable", "the node's allocatable resources (GetAllocatableResources)"),
                       ("get", "one pod's resources (Get)")):
        sub = actions.add_parser(name, help=text)
        if name == "get":
            sub.add_argument("name", metavar="NAME")
            sub.add_argument("--namespace", default="default", metavar="NS", help="(default: default)")
        sub.add_argument("--socket", default=DEFAULT_SOCKET, metavar="PATH", help=f"(default: {DEFAULT_SOCKET})")
        sub.add_argument("--json", action="store_true", help="print the response as JSON")
    pr.set_defaults(handler=run)


def _bytes(n: int) -> str:
    from memorymanager.cli.common import human_bytes

    return human_bytes(n)


def _memory(items: Any) -> str:
    parts = [f"{m.memory_type} {_bytes(m.size)} on [{','.join(str(n.ID) for n in m.topology.nodes)}]" for m in items]
    return "; ".join(parts) or "-"


def _devices(items: Any) -> str:
    parts = [f"{d.resource_name} {','.join(d.device_ids)}"
             + (f" on [{','.join(str(n.ID) for n in d.topology.nodes)}]" if d.HasField("topology") else "")
             for d in items]
    return "; ".join(parts) or "-"


def _ids(ids: Any) -> str:
    from kubeinputs.cpuset import cpuset_string

    return cpuset_string(list(ids)) or "-"


def pod_lines(pod: "v1.PodResources") -> list[str]:
    """One pod: `namespace/name`, then a line per container."""
    lines = [f"{pod.namespace}/{pod.name}"]
    if len(pod.memory) or len(pod.cpu_ids):
        lines.append(f"  (pod)  cpus: {_ids(pod.cpu_ids)}  memory: {_memory(pod.memory)}")
    for c in pod.containers:
        lines.append(f"  {c.name}  cpus: {_ids(c.cpu_ids)}  devices: {_devices(c.devices)}  memory: {_memory(c.memory)}")
    return lines


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Call the server and print."""
    import grpc
    from google.protobuf.json_format import MessageToDict

    from memorymanager.server.protos.v1 import api_pb2 as v1
    from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc

    with grpc.insecure_channel("unix:" + args.socket) as channel:
        stub = v1_grpc.PodResourcesListerStub(channel)
        try:
            if args.podresources_command == "list":
                method, response = "List", stub.List(v1.ListPodResourcesRequest(), timeout=TIMEOUT_SECONDS)
            elif args.podresources_command == "allocatable":
                method, response = "GetAllocatableResources", stub.GetAllocatableResources(
                    v1.AllocatableResourcesRequest(), timeout=TIMEOUT_SECONDS)
            else:
                method, response = "Get", stub.Get(
                    v1.GetPodResourcesRequest(pod_name=args.name, pod_namespace=args.namespace),
                    timeout=TIMEOUT_SECONDS)
        except grpc.RpcError as exc:
            name = {"list": "List", "allocatable": "GetAllocatableResources", "get": "Get"}[args.podresources_command]
            raise CallError(f"{name} on unix:{args.socket}: {exc.code().name}: {exc.details()}") from None
    if args.json:
        json.dump(MessageToDict(response, preserving_proto_field_name=True, always_print_fields_with_no_presence=True),
                  out, indent=2)
        out.write("\n")
        return 0
    if method == "List":
        for pod in response.pod_resources:
            for line in pod_lines(pod):
                print(line, file=out)
        if not response.pod_resources:
            print("no pods", file=out)
    elif method == "Get":
        for line in pod_lines(response.pod_resources):
            print(line, file=out)
    else:
        print(f"cpus: {_ids(response.cpu_ids)}", file=out)
        print(f"devices: {_devices(response.devices)}", file=out)
        print(f"memory: {_memory(response.memory)}", file=out)
    return 0
