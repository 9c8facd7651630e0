"""The `memorymanager` command: run scenarios, inspect or verify checkpoints, show this machine.

    memorymanager run PATH... [-v] [--json] [--state-dir DIR] [--record [--in-place]] [--merge fast|reference]
    memorymanager checkpoint inspect PATH [--json] [--kind memory|cpu|device]
    memorymanager checkpoint verify PATH [--policy NAME] [--kind K] [--machine FILE] [--devices FILE]
    memorymanager machine [--sysfs-root DIR] [--table]

Exit codes of `run`: 0 every expectation held, 1 some failed, 2 some file is not a valid
scenario. Any other problem prints one line on stderr and exits 2, never a traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from importlib.metadata import version
from typing import Iterator, Optional, Sequence, TextIO

from memorymanager.cli.common import UsageError, add_limit_flag, human_bytes, limits_of

PROG = "memorymanager"


def _version() -> str:
    """The installed package version."""
    try:
        return version("memorymanager")
    except Exception:  # not installed as a distribution
        return "unknown"


class _VersionAction(argparse.Action):
    """`--version`: looks the version up only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{PROG} {_version()}", file=sys.stdout)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its three commands."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="The kubelet's memory manager and topology manager, simulated: "
        "scenarios, checkpoints, machine info.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.set_defaults(limit=[])  # the commands without --limit read with the default limits
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    run = commands.add_parser(
        "run", help="run scenario files or folders and check their expectations",
        description="Run scenario files and check their expectations. A folder runs every *.yaml, *.yml and *.json "
        "file below it (names starting with '.' skipped), in path order: that includes the *.recorded.yaml "
        "copies --record leaves next to the scenarios, so a folder run after --record runs each scenario "
        "twice, once as written and once as recorded (move or delete the copies, or record with --in-place).",
    )
    run.add_argument("paths", nargs="+", metavar="PATH",
                     help="a scenario file, or a folder: every *.yaml/*.yml/*.json below it, *.recorded.yaml copies too")
    run.add_argument("--json", action="store_true", help="print one JSON document instead of the human report")
    run.add_argument(
        "-v", "--verbose", action="store_true",
        help="human report: under each scenario, every step's decision (admitted, or refused with the reason) "
        "and each container's NUMA nodes and memory",
    )
    run.add_argument(
        "--state-dir", metavar="DIR",
        help="folder of the checkpoint files (memory_manager_state, cpu_manager_state, "
        "device-plugins/kubelet_internal_checkpoint); old ones are removed before each scenario "
        "(default: a temporary folder per scenario)",
    )
    run.add_argument(
        "--record", action="store_true",
        help="write the actual results into each step's expect, to NAME.recorded.yaml next to NAME.yaml "
        "(replaced when it exists; recording a NAME.recorded.yaml rewrites that copy itself). YAML comments "
        "are lost except the block at the top of the file; the description stays a folded block",
    )
    run.add_argument("--in-place", action="store_true", help="with --record: overwrite the scenario files")
    run.add_argument("--html", metavar="REPORT", help="also write a self-contained HTML picture of every step")
    run.add_argument("--metrics", metavar="FILE", help="write the last scenario's final metrics (Prometheus text)")
    run.add_argument(
        "--merge", choices=("fast", "reference"), default="fast",
        help="topology manager merge: the production one (fast) or the plain cross product (reference)",
    )

    checkpoint = commands.add_parser(
        "checkpoint", help="read a kubelet checkpoint: memory_manager_state, cpu_manager_state or kubelet_internal_checkpoint")
    cp_commands = checkpoint.add_subparsers(dest="checkpoint_command", metavar="ACTION")
    cp_commands.required = True
    inspect = cp_commands.add_parser("inspect", help="show the checkpoint's content and checksum verdict")
    inspect.add_argument("path", metavar="PATH")
    inspect.add_argument("--json", action="store_true", help="print JSON")
    verify = cp_commands.add_parser("verify", help="exit 0 when kubelet would load the checkpoint, 1 otherwise")
    verify.add_argument("path", metavar="PATH")
    verify.add_argument("--policy", metavar="NAME",
                        help="the configured policy of the file's manager (memory: None, Static; CPU: none, static)")
    verify.add_argument("--machine", metavar="FILE",
                        help="cadvisor MachineInfo: check a CPU checkpoint's CPUs, a device checkpoint's NUMA nodes")
    verify.add_argument("--devices", metavar="FILE",
                        help="the node's devices ({resource: [{id, numaNodes, healthy}]}): refuse a device checkpoint "
                        "entry the node cannot account for (kubelet restores it silently)")
    for sub in (inspect, verify):
        sub.add_argument("--kind", choices=("memory", "cpu", "device"),
                         help="which manager's checkpoint (default: from the file name, else the content)")

    machine = commands.add_parser(
        "machine", help="this machine's NUMA and CPU topology as cadvisor reports it: MachineInfo JSON for a "
        "scenario's machine"
    )
    machine.add_argument("--sysfs-root", metavar="DIR", default="/sys", help="sysfs root (default /sys)")
    shape = machine.add_mutually_exclusive_group()
    shape.add_argument("--table", action="store_true", help="print a readable table instead of JSON")
    shape.add_argument("--json", action="store_true", help="print cadvisor MachineInfo JSON (the default)")

    from memorymanager.cli import explain_cmd, fleet_cmd, nrt_cmd, podresources_cmd, serve_cmd  # commands with their own modules

    for module in (explain_cmd, serve_cmd, podresources_cmd, nrt_cmd, fleet_cmd):
        module.add_parser(commands)
    for sub in (run, inspect, verify, machine, *(commands.choices[name] for name in ("explain", "serve"))):
        add_limit_flag(sub)
    return parser


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """`memorymanager run`: run, report, and optionally record."""
    from memorymanager.runner.execute import merge_function, run_paths
    from memorymanager.runner.report import scenario_lines, summary_line, write_json

    if args.in_place and not args.record:
        raise UsageError("--in-place only makes sense with --record")
    limits = limits_of(args)
    merge_fn = merge_function(args.merge)
    observe_all = bool(args.json or args.record)  # else only what each step's expect names
    written: list[str] = []

    def on_scenario(result, scenario) -> None:
        if args.record and scenario is not None:
            from memorymanager.runner.record import write_recorded

            written.append(write_recorded(scenario, result, in_place=args.in_place))
        if not args.json:
            for line in scenario_lines(result, scenario, verbose=args.verbose):
                print(line, file=out)
            out.flush()

    if args.metrics:
        from memorymanager.server.metrics import write_scenario_metrics

        report = write_scenario_metrics(args.metrics, lambda observers: run_paths(
            args.paths, state_dir=args.state_dir, merge_fn=merge_fn, on_scenario=on_scenario, observe_all=observe_all,
            observers=observers, limits=limits))
    else:
        report = run_paths(args.paths, state_dir=args.state_dir, merge_fn=merge_fn, on_scenario=on_scenario,
                           observe_all=observe_all, limits=limits)
    if args.html:
        from memorymanager.explain.html import write_report

        write_report(args.paths, args.html, merge_fn, limits)
    if args.json:
        write_json(report, out)
    else:
        for path in written:
            print(f"recorded {path}", file=out)
        print(summary_line(report), file=out)
    return report.exit_code


def cmd_checkpoint(args: argparse.Namespace, out: TextIO) -> int:
    """`memorymanager checkpoint inspect|verify`."""
    from memorymanager.cli import checkpoint_cmd as checkpoint_cli

    if args.checkpoint_command == "inspect":
        return checkpoint_cli.inspect(args.path, args.json, out, args.kind, limits_of(args))
    return checkpoint_cli.verify(args.path, args.policy, out, args.kind, args.machine, args.devices, limits_of(args))


def machine_table(obj: dict) -> list[str]:
    """A readable table of a cadvisor MachineInfo object (as `machine_info_to_obj` gives it)."""
    lines = [
        f"cores: {obj.get('num_cores', 0)}   memory: {human_bytes(int(obj.get('memory_capacity') or 0))}"
        f" ({obj.get('memory_capacity', 0)} bytes)   NUMA nodes: {len(obj.get('topology') or [])}",
        "",
        f"{'node':>4}  {'memory':>10}  {'bytes':>14}  {'cpus':>4}  {'hugepages':<28}  distances",
    ]
    for node in obj.get("topology") or []:
        cores = node.get("cores")
        cpus = "-" if cores is None else str(sum(len(c.get("thread_ids") or []) for c in cores))
        pages = ", ".join(
            f"{human_bytes(int(h['page_size']) * 1024)} x {h['num_pages']}" for h in node.get("hugepages") or []
        ) or "-"
        distances = node.get("distances")
        dist = "-" if distances is None else " ".join(str(d) for d in distances)
        memory = int(node.get("memory") or 0)
        lines.append(
            f"{node.get('node_id', '?'):>4}  {human_bytes(memory):>10}  {memory:>14}  {cpus:>4}  {pages:<28}  {dist}"
        )
    return lines + cpu_topology_lines(obj)


def cpu_topology_lines(obj: dict) -> list[str]:
    """The CPU topology the CPU manager reads (sockets, cores, threads, uncore caches) per NUMA node, as
    lines under the machine table; none when no node lists its cores."""
    from kubeinputs.cpuset import CPUSet

    nodes = [n for n in obj.get("topology") or [] if n.get("cores")]
    if not nodes:
        return []
    cores = [c for n in nodes for c in n["cores"]]
    sockets = sorted({c.get("socket_id", 0) for c in cores})
    threads = sorted({len(c.get("thread_ids") or []) for c in cores})
    cpus = sum(len(c.get("thread_ids") or []) for c in cores)
    per_core = "/".join(map(str, threads))
    lines = ["", f"CPUs: {cpus} in {len(cores)} cores ({per_core} thread{'s' if threads != [1] else ''} per core), "
                 f"{len(sockets)} socket{'s' if len(sockets) != 1 else ''}",
             f"{'node':>4}  {'sockets':<8}  {'cores':>5}  {'cpus':<24}  uncore caches (L3: id size cpus)"]
    for node in nodes:
        node_cores = node["cores"]
        uncore: dict[tuple[int, int], set[int]] = {}
        for core in node_cores:
            for cache in core.get("uncore_caches") or []:
                uncore.setdefault((cache.get("id", 0), cache.get("size", 0)), set()).update(core.get("thread_ids") or [])
        caches = [f"{cid} {human_bytes(size)} {CPUSet.new(*members)}" for (cid, size), members in sorted(uncore.items())]
        caches += [f"{c.get('id', 0)} {human_bytes(c.get('size', 0))} node" for c in node.get("caches") or []
                   if c.get("level", 0) > 2]
        node_sockets = ",".join(str(x) for x in sorted({c.get("socket_id", 0) for c in node_cores}))
        node_cpus = CPUSet.new(*(t for c in node_cores for t in c.get("thread_ids") or []))
        lines.append(f"{node.get('node_id', '?'):>4}  {node_sockets:<8}  {len(node_cores):>5}  {str(node_cpus):<24}  "
                     f"{'; '.join(caches) or '-'}")
    return lines


def cmd_machine(args: argparse.Namespace, out: TextIO) -> int:
    """`memorymanager machine`: read sysfs like cadvisor; print the MachineInfo JSON a scenario's `machine`
    accepts (ready to paste), or with `--table` a readable table."""
    from kubeinputs.machine import machine_info_to_obj
    from kubeinputs.sysfs import read_machine_info

    obj = machine_info_to_obj(read_machine_info(args.sysfs_root, limits_of(args)))
    if args.table:
        for line in machine_table(obj):
            print(line, file=out)
    else:
        json.dump(obj, out, indent=2)
        out.write("\n")
    return 0


def _safe_stream(stream: TextIO) -> TextIO:
    """The stream, writing what its encoding cannot hold (a lone surrogate in a name) as a backslash
    escape instead of raising UnicodeEncodeError."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass
    return stream


class Terminated(BaseException):
    """SIGTERM arrived: raised where the command is, so that its cleanup (a temporary state folder,
    a temporary checkpoint file) runs before the command exits 143, as for Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the command runs, SIGTERM unwinds it (its `finally` blocks run) instead of ending the
    process at once; only the main thread can take signals, elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Entry point; returns the exit code."""
    out = out or _safe_stream(sys.stdout)
    err = err or _safe_stream(sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    try:
        with _sigterm_unwinds():
            return _dispatch(args, out, err)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=err)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=err)
        return 130
    except Terminated:
        print(f"{PROG}: terminated", file=err)
        return 143
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback
        from memorymanager.node.simulated_node import KubeletStartError
        from memorymanager.runner.execute import error_message

        print(f"{PROG}: error: {error_message(exc)}", file=err)
        if isinstance(exc, KubeletStartError) and exc.hint:
            print(exc.hint, file=err)  # kubelet's message stays as it is; the hint is a line of its own
        return 2


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the parsed command."""
    if hasattr(args, "handler"):  # commands registered by their own modules
        return args.handler(args, out)
    if args.command == "run":
        return cmd_run(args, out)
    if args.command == "checkpoint":
        return cmd_checkpoint(args, out)
    if args.command == "explain":
        from memorymanager.cli import explain_cmd

        return explain_cmd.run(args, out, err)
    return cmd_machine(args, out)
