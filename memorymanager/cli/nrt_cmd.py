"""`memorymanager nrt`: print the NodeResourceTopology NFD's topology-updater would publish.

    memorymanager nrt --scenario S [--node-name N] [--watch-namespace NS] [--no-pods-fingerprint] [--json]
    memorymanager nrt --socket PATH [--machine M | --sysfs-root DIR] [--kubelet K] [--node-name N]
                      [--watch-namespace NS] [--no-pods-fingerprint] [--json]

With `--scenario` the scenario's steps run in-process and the node they leave is read through
the same PodResources messages a server answers. With `--socket` the PodResources server
(ours or a kubelet's) is asked over gRPC, and, as the updater does, the NUMA layout comes from
this host's sysfs (or `--machine`) and the topology manager attributes from the kubelet
configuration (`--kubelet`, default kubelet's defaults): give both when the server describes
another machine (a `memorymanager serve` of a machine file); a server reporting NUMA nodes the
machine info lacks is refused. The node name defaults to
`$NODE_NAME`, else this host's name. YAML by default. `--watch-namespace` and
`--no-pods-fingerprint` are the updater's `-watch-namespace` and `-pods-fingerprint=false`.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import tempfile
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from memorymanager.server.nrt import NRTOptions


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register `nrt`."""
    nrt = commands.add_parser("nrt", help="the NodeResourceTopology (v1alpha2) NFD's topology-updater would publish")
    source = nrt.add_mutually_exclusive_group(required=True)
    source.add_argument("--scenario", metavar="S", help="run this scenario and describe the node it leaves")
    source.add_argument("--socket", metavar="PATH", help="ask this PodResources socket")
    nrt.add_argument("--machine", metavar="M", help="with --socket: cadvisor MachineInfo file instead of sysfs")
    nrt.add_argument("--sysfs-root", metavar="DIR", default="/sys", help="with --socket: sysfs root (default /sys)")
    nrt.add_argument("--kubelet", metavar="K", help="with --socket: the node's KubeletConfiguration file")
    nrt.add_argument("--node-name", metavar="N", help="metadata.name (default $NODE_NAME or the host name)")
    nrt.add_argument("--watch-namespace", metavar="NS", default="*",
                     help="count only the pods of this namespace (NFD's -watch-namespace; default * = all)")
    nrt.add_argument("--no-pods-fingerprint", action="store_true",
                     help="leave out nodeTopologyPodsFingerprint (NFD's -pods-fingerprint=false)")
    nrt.add_argument("--json", action="store_true", help="print JSON instead of YAML")
    nrt.set_defaults(handler=run)


def _options(args: argparse.Namespace) -> "NRTOptions":
    """The updater's flags as `NRTOptions`."""
    from memorymanager.server.nrt import NRTOptions

    return NRTOptions(watch_namespace=args.watch_namespace, pods_fingerprint=not args.no_pods_fingerprint)


def _from_scenario(args: argparse.Namespace, name: str) -> dict:
    from memorymanager.cli.common import scenario_node
    from memorymanager.server.host import NodeHost
    from memorymanager.server.nrt import from_host

    with tempfile.TemporaryDirectory(prefix="memorymanager-nrt-") as state_dir:
        args.machine = args.kubelet = None
        node, _, _ = scenario_node(args, state_dir)
        return from_host(NodeHost(node, already_started=True), name, options=_options(args))


def _from_socket(args: argparse.Namespace, name: str) -> dict:
    import grpc

    from memorymanager.cli.common import CallError
    from kubeinputs.sysfs import read_machine_info
    from memorymanager.node.api import read_kubelet, read_machine
    from memorymanager.server.nrt import node_resource_topology
    from memorymanager.server.protos.v1 import api_pb2 as v1
    from memorymanager.server.protos.v1 import api_pb2_grpc as v1_grpc

    machine = read_machine(args.machine) if args.machine else read_machine_info(args.sysfs_root)
    config = read_kubelet(args.kubelet)  # nrt has no --limit: the readers keep their defaults
    with grpc.insecure_channel("unix:" + args.socket) as channel:
        stub = v1_grpc.PodResourcesListerStub(channel)
        try:
            allocatable = stub.GetAllocatableResources(v1.AllocatableResourcesRequest(), timeout=10)
            listing = stub.List(v1.ListPodResourcesRequest(), timeout=10)
        except grpc.RpcError as exc:
            raise CallError(f"PodResources on unix:{args.socket}: {exc.code().name}: {exc.details()}") from None
    _check_same_node(machine, allocatable, args)
    return node_resource_topology(name, machine, config, allocatable, listing, options=_options(args))


def _check_same_node(machine, allocatable, args: argparse.Namespace) -> None:
    """Refuse to describe a node whose PodResources server reports NUMA nodes this machine info
    lacks (e.g. `memorymanager serve` of another machine, asked without its --machine)."""
    from memorymanager.cli.common import CallError

    known = {n.node_id for n in machine.topology}
    reported = {int(numa.ID) for block in allocatable.memory for numa in block.topology.nodes}
    reported |= {int(numa.ID) for device in allocatable.devices for numa in device.topology.nodes}
    unknown = sorted(reported - known)
    if unknown:
        source = f"--machine {args.machine}" if args.machine else f"sysfs under {args.sysfs_root}"
        raise CallError(f"PodResources on unix:{args.socket} reports NUMA node(s) {unknown} that the machine info "
                        f"({source}) does not have; give the served node's --machine and --kubelet")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Build the object and print it."""
    import yaml

    name = args.node_name or os.environ.get("NODE_NAME") or socket.gethostname()
    obj = _from_scenario(args, name) if args.scenario else _from_socket(args, name)
    if args.json:
        json.dump(obj, out, indent=2)
        out.write("\n")
    else:
        yaml.safe_dump(obj, out, sort_keys=False, default_flow_style=False)
    return 0
