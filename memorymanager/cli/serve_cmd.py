"""`memorymanager serve`: a simulated kubelet node behind PodResources and node-control gRPC on a
unix socket, with `/metrics` over HTTP if asked.

    memorymanager serve --socket PATH (--machine M [--kubelet K] [--devices FILE] | --scenario S)
                        [--state-dir D] [--metrics-address HOST:PORT] [--providers FILE] [--no-rate-limit]

`--devices FILE` declares the node's device plugins (the `devices` map of a scenario: resource ->
devices with `id`, `numaNodes`, `healthy`), which register at every (re)start.

The node is restored from `D` when it holds a checkpoint. `--scenario` first runs the
scenario's steps (in `D`, whose old checkpoint is replaced as `run` replaces it, or in a
temporary folder) and then serves the node it left; `--machine`/`--kubelet` may then be
left out, and when given must describe the same node. The node runs in its own process and
costly control requests in forks of it (`memorymanager.server.node_process`). SIGTERM or SIGINT
stops the server at once: a control request in flight is abandoned (nothing of it applied unless
it was already writing), PodResources calls get half a second, the socket file is removed, the
checkpoint and the pod list stay consistent.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import tempfile
import threading
from typing import Optional, TextIO


# After SIGTERM the node process is stopped at once (its work abandoned unless it was writing); the
# PodResources calls still in flight get this long.
STOP_GRACE_SECONDS = 0.5


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register `serve`."""
    serve = commands.add_parser("serve", help="serve a simulated node over PodResources and node-control gRPC")
    serve.add_argument("--socket", required=True, metavar="PATH", help="the unix socket to serve on")
    serve.add_argument("--machine", metavar="M", help="cadvisor MachineInfo file (JSON or YAML)")
    serve.add_argument("--kubelet", metavar="K", help="KubeletConfiguration file (default: kubelet's defaults)")
    serve.add_argument("--state-dir", metavar="D", help="folder of the memory_manager_state checkpoint "
                       "(default: state in memory, or a temporary folder with --scenario)")
    serve.add_argument("--devices", metavar="FILE",
                       help="the node's device plugins, YAML/JSON {resource: [{id, numaNodes, healthy}]} "
                       "(a scenario's `devices`)")
    serve.add_argument("--scenario", metavar="S", help="run this scenario's steps first, then serve its node")
    serve.add_argument("--metrics-address", metavar="HOST:PORT", help="serve Prometheus /metrics here")
    serve.add_argument("--providers", metavar="FILE",
                       help="CPU ids and devices PodResources reports (YAML/JSON; see docs/grpc.md)")
    serve.add_argument("--no-rate-limit", action="store_true",
                       help="switch off kubelet's PodResources rate limit (100 calls/s, burst 10)")
    serve.set_defaults(handler=run)


def _devices_path(path: Optional[str]) -> Optional[str]:
    """The `--devices` file, refused with a clear message when it is no file (the reader names the file
    in every other error)."""
    from memorymanager.cli.common import UsageError

    if path is not None and not os.path.isfile(path):
        raise UsageError(f"--devices: {path}: no such file" if not os.path.exists(path)
                         else f"--devices: {path} is not a file")
    return path


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Build the node, serve until SIGTERM/SIGINT, stop cleanly."""
    from memorymanager.cli.common import UsageError, limits_of, scenario_node
    from memorymanager.node.api import Node
    from memorymanager.server.host import PODS_FILE_NAME, NodeHost
    from memorymanager.server.node_process import GatedFileOps
    from memorymanager.server.podresources import parse_provider_data
    from memorymanager.server.server import NodeServer, parse_address

    if args.scenario is None and args.machine is None:
        raise UsageError("serve needs --machine (or --scenario)")
    try:
        metrics_address = parse_address(args.metrics_address) if args.metrics_address else None
    except ValueError as exc:
        raise UsageError(f"--metrics-address: {exc}") from None
    limits = limits_of(args)
    providers = None
    if args.providers:
        from kubeinputs.reader import load_file

        providers = parse_provider_data(load_file(args.providers, limits), args.providers)

    temp: Optional[str] = None
    try:
        if args.scenario is not None:
            state_dir = args.state_dir or tempfile.mkdtemp(prefix="memorymanager-serve-")
            temp = None if args.state_dir else state_dir
            node, steps, failed = scenario_node(args, state_dir)
            print(f"scenario {args.scenario}: {steps} steps run, {failed} with unmet expectations", file=out)
            host = NodeHost(node, already_started=True)
        else:
            node = Node(args.machine, args.kubelet, state_dir=args.state_dir, limits=limits,
                        devices=_devices_path(args.devices))
            host = NodeHost(node, pods_file=os.path.join(args.state_dir, PODS_FILE_NAME) if args.state_dir else None,
                            file_ops=GatedFileOps(limits))
        # the node runs in its own process, control requests in forks of it (docs/grpc.md)
        server = NodeServer(host, args.socket, providers=providers, rate_limit=not args.no_rate_limit,
                            metrics_address=metrics_address, isolate=True)
        stop = threading.Event()
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            server.start()
            print(f"serving on unix:{server.socket_path}", file=out)
            if server.metrics is not None:
                h, p = server.metrics.address
                print(f"metrics on http://{h}:{p}/metrics", file=out)
            out.flush()
            while not stop.wait(0.1):
                pass
        finally:
            server.stop(STOP_GRACE_SECONDS)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        print("stopped", file=out)
        return 0
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
