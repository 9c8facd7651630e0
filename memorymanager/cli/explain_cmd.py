"""`memorymanager explain`: why a pod lands where it does, or is refused.

    memorymanager explain SCENARIO [--step N] [--what-if] [--format text|json|html] [-o FILE]
    memorymanager explain --node ROOT POD [--kubelet-config FILE] [--devices FILE] [--hints FILE] [--what-if]
                          [--format ...] [-o FILE]
    memorymanager explain --start SCENARIO | --start --node ROOT [--kubelet-config FILE] [--devices FILE]
                          | --start --kubelet-config FILE --machine FILE [--checkpoint FILE] [--cpu-checkpoint FILE]
                            [--device-checkpoint FILE] [--devices FILE]   [--format ...] [-o FILE]

The first form explains every `admit` and `hints` step of a scenario (or step N); the
second explains one pod on a live node, read-only (see memorymanager/explain/live.py);
`--what-if` adds what would make a refused pod fit (or an admitted pod's headroom), each answer
checked on a copy of the node. `--start` explains why kubelet will not start, read-only
(see memorymanager/explain/start.py).
Exit 0 on success; 2 on bad input (the message names the file, the path and the reason).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, TextIO

from memorymanager.cli.common import limits_of

FORMATS = ("text", "json", "html")


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Register `explain` with the top-level command parser."""
    p = commands.add_parser("explain", help="explain why kubelet admits a pod where it does, or refuses it")
    p.add_argument("path", metavar="SCENARIO_OR_POD", nargs="?",
                   help="a scenario file; with --node, a v1 Pod manifest (YAML or JSON)")
    p.add_argument("--step", type=int, metavar="N", help="explain only step N (an admit or hints step)")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default), json or html")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("--node", metavar="ROOT",
                   help="explain the pod on a live node under ROOT (/ for this machine), read-only")
    p.add_argument("--kubelet-config", metavar="FILE",
                   help="with --node: the KubeletConfiguration (default ROOT/var/lib/kubelet/config.yaml)")
    p.add_argument("--hints", metavar="FILE",
                   help="with --node: other providers' hints, {container: {resource: [hint]}} or {resource: [hint]}")
    p.add_argument("--devices", metavar="FILE",
                   help="with --node (or --start --machine): the device plugins' devices, {resource: [{id, numaNodes, "
                   "healthy}]} (sysfs does not list them; without it the device checkpoint's devices show as "
                   "allocated, with no plugin)")
    p.add_argument("--what-if", action="store_true",
                   help="also what would make a refused pod fit (or an admitted pod's headroom), each answer checked "
                   "by admitting on a copy of the node")
    p.add_argument("--start", action="store_true",
                   help="explain kubelet's start instead (of a scenario, of --node ROOT, or of --kubelet-config with "
                   "--machine): its error, the arithmetic behind it, and checked fixes")
    p.add_argument("--machine", metavar="FILE", help="with --start: the cadvisor machine (JSON or YAML)")
    p.add_argument("--checkpoint", metavar="FILE", help="with --start --machine: the memory_manager_state file")
    p.add_argument("--cpu-checkpoint", metavar="FILE", help="with --start --machine: the cpu_manager_state file")
    p.add_argument("--device-checkpoint", metavar="FILE",
                   help="with --start --machine: the device manager's kubelet_internal_checkpoint file")


class ExplainError(Exception):
    """Bad arguments or input for explain; str() names what and why."""


def _render_scenario(args: argparse.Namespace, color: bool) -> str:
    """The scenario form's output in the chosen format."""
    from memorymanager.explain.jsondoc import dumps, scenario_document
    from memorymanager.explain.walk import EXPLAINED_OPS, walk_scenario
    from memorymanager.runner.scenario import load_scenario

    limits = limits_of(args)
    scenario = load_scenario(args.path, limits)  # ScenarioError: file: path: reason
    if args.step is not None:
        steps = {s.index: s for s in scenario.steps}
        if args.step not in steps:
            raise ExplainError(f"{args.path}: --step {args.step}: the scenario has steps 0 to {len(scenario.steps) - 1}")
        if steps[args.step].op not in EXPLAINED_OPS:
            raise ExplainError(f"{args.path}: steps[{args.step}]: a {steps[args.step].op} step; "
                               "only admit and hints steps are explained")
    view = walk_scenario(scenario, args.step, what_if=args.what_if, limits=limits)
    if args.format == "json":
        return dumps(scenario_document(view, args.step))
    if args.format == "html":
        from memorymanager.explain.html import render_report

        if args.step is not None:
            view.steps = [s for s in view.steps if s.index == args.step]
        return render_report([view], title=f"memorymanager explain {args.path}")
    from memorymanager.explain.text import scenario_text, step_lines

    if args.step is not None:
        return "\n".join(step_lines(next(s for s in view.steps if s.index == args.step), color)) + "\n"
    return scenario_text(view, color)


def _start_usage(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the arguments of `explain --start`, or None."""
    if args.step is not None or args.hints or args.what_if:
        return "--step, --hints and --what-if do not apply to --start"
    loose = args.checkpoint or args.cpu_checkpoint or args.device_checkpoint
    if args.devices and args.node is None and args.machine is None:
        return "--start takes --devices with --node ROOT or --machine FILE only"
    if args.node is not None:
        if args.path or args.machine or loose:
            return ("--start --node ROOT takes no scenario, --machine, --checkpoint, --cpu-checkpoint or "
                    "--device-checkpoint (it reads the node's own)")
    elif args.machine is not None:
        if args.path or not args.kubelet_config:
            return "--start --machine FILE needs --kubelet-config FILE and takes no scenario"
    elif not args.path or args.kubelet_config or loose:
        return ("--start takes a scenario, --node ROOT, or --kubelet-config FILE with --machine FILE (and its "
                "--checkpoint, --cpu-checkpoint, --device-checkpoint)")
    return None


def _render_start(args: argparse.Namespace) -> str:
    """The start form's output in the chosen format."""
    from memorymanager.explain import start

    limits = limits_of(args)
    if args.node is not None:
        diagnosis, source = start.start_of_node(args.node, args.kubelet_config, limits, args.devices), {"node": args.node}
    elif args.machine is not None:
        diagnosis = start.start_of_files(args.kubelet_config, args.machine, args.checkpoint, limits,
                                         args.cpu_checkpoint, args.device_checkpoint, args.devices)
        source = {"kubelet_config": args.kubelet_config, "machine": args.machine, "checkpoint": args.checkpoint,
                  "cpu_checkpoint": args.cpu_checkpoint, "device_checkpoint": args.device_checkpoint,
                  "devices": args.devices}
    else:
        diagnosis, source = start.start_of_scenario(args.path, limits), {"scenario": args.path}
    if args.format == "json":
        from memorymanager.explain.jsondoc import dumps, start_document

        return dumps(start_document(source, diagnosis))
    if args.format == "html":
        from memorymanager.explain.html import render_start_page

        return render_start_page(diagnosis, "memorymanager explain --start " + " ".join(
            f"{key} {value}" for key, value in source.items() if value))
    from memorymanager.explain.start_text import start_text

    return start_text(diagnosis)


def _render_node(args: argparse.Namespace, color: bool) -> str:
    """The live-node form's output in the chosen format."""
    from memorymanager.explain.live import explain_on_node

    kept: dict = {}
    explanation = explain_on_node(args.node, args.path, args.kubelet_config, args.hints, kept, args.what_if,
                                  limits_of(args), args.devices)
    if args.format == "json":
        from memorymanager.explain.jsondoc import dumps, node_document

        return dumps(node_document(args.node, explanation))
    if args.format == "html":
        from memorymanager.explain.html import render_explanation_page

        return render_explanation_page(explanation, f"memorymanager explain --node {args.node} {args.path}",
                                       kept.get("machine_state"), kept.get("entries"), kept.get("names"))
    from memorymanager.explain.text import explanation_lines

    return "\n".join(explanation_lines(explanation, color)) + "\n"


def _usage(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the arguments of the scenario and node forms, or None."""
    if args.machine or args.checkpoint or args.cpu_checkpoint or args.device_checkpoint:
        return "--machine, --checkpoint, --cpu-checkpoint and --device-checkpoint need --start"
    if not args.path:
        return "give a scenario file (or, with --node ROOT, a pod manifest), or --start"
    if args.node is None and (args.kubelet_config or args.hints or args.devices):
        return "--kubelet-config, --devices and --hints need --node"
    if args.node is not None and args.step is not None:
        return "--step applies to scenarios, not to --node"
    return None


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it (both already resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def output_reads_back(args: argparse.Namespace) -> Optional[str]:
    """Why `-o` may not be written with `--node` (None when it may): explain --node never writes
    under the root it reads. Under `--node /` (this machine) that is what is read there: the
    sysfs tree, kubelet's folder, and the configuration, pod and hints files."""
    if args.node is None or args.output is None:
        return None
    target = os.path.realpath(args.output)
    root = os.path.realpath(args.node)
    if root != os.path.realpath(os.sep):
        return f"it is under the node root {args.node} being read" if _inside(target, root) else None
    read = [os.path.join(root, "sys"), os.path.join(root, "var", "lib", "kubelet")]
    read += [os.path.realpath(p) for p in (args.path, args.kubelet_config, args.hints, args.devices) if p]
    for folder in read:
        if _inside(target, folder):
            return f"it is under {folder}, which is read"
    return None


def run(args: argparse.Namespace, out: TextIO, err: Optional[TextIO] = None) -> int:
    """Carry out `explain`; bad input prints one line and exits 2."""
    from kubeinputs.errors import InputError

    err = err or sys.stderr
    problem = _start_usage(args) if args.start else _usage(args)
    if problem is not None:
        print(f"memorymanager: error: {problem}", file=err)
        return 2
    refused = output_reads_back(args)
    if refused is not None:
        print(f"memorymanager: error: -o {args.output}: not written: {refused}", file=err)
        return 2
    color = args.output is None and args.format == "text" and hasattr(out, "isatty") and out.isatty()
    try:
        if args.start:
            text = _render_start(args)
        else:
            text = _render_node(args, color) if args.node is not None else _render_scenario(args, color)
    except (ExplainError, InputError) as exc:
        print(f"memorymanager: error: {exc}", file=err)
        return 2
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"memorymanager: error: {args.output}: cannot write: {exc.strerror}", file=err)
            return 2
    else:
        out.write(text)
    return 0
