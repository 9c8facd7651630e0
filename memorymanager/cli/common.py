"""What the command's modules share: the usage error, byte counts for people, the `--limit` flag,
a failed gRPC call, and the node a scenario leaves (`serve --scenario`, `nrt --scenario`)."""
from __future__ import annotations

import argparse
from kubeinputs.errors import InputError
from kubeinputs.limits import DEFAULT_LIMITS, Limits


class UsageError(Exception):
    """Arguments that parse but do not make sense together."""


class CallError(Exception):
    """A PodResources call that failed; str() names the method, socket, code and message."""


def human_bytes(n: int) -> str:
    """A byte count with a binary unit (`64Gi`, `1.5Gi`, `512`)."""
    for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return str(n)


def add_limit_flag(parser: argparse.ArgumentParser) -> None:
    """`--limit NAME=N`, repeatable: raise one of the readers' work limits (docs/limits.md)."""
    parser.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                        help="raise a work limit (max-file-bytes, max-checkpoint-bytes, max-sysfs-bytes, max-depth, "
                             "max-yaml-nodes, max-number-digits; for serve also max-request-containers, "
                             "max-request-init-containers, max-explain-containers, max-request-hints, "
                             "max-control-queue); see docs/limits.md")


def limits_of(args: argparse.Namespace) -> Limits:
    """The readers' limits of this command line: the defaults raised by each `--limit NAME=N` (a bad one is
    a UsageError)."""
    try:
        return DEFAULT_LIMITS.raised(args.limit)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def scenario_node(args: argparse.Namespace, state_dir: str):
    """Run the scenario's steps on a fresh node in `state_dir`; the started Node it leaves."""
    from memorymanager.node.api import Node, read_devices, read_kubelet, read_machine
    from memorymanager.runner.execute import ScenarioRun, prepare_state_dir
    from memorymanager.runner.scenario import load_scenario

    limits = limits_of(args)
    scenario = load_scenario(args.scenario, limits)
    if args.machine is not None and read_machine(args.machine, limits) != scenario.machine:
        raise InputError("--machine", f"describes another machine than the scenario {args.scenario}")
    if args.kubelet is not None and read_kubelet(args.kubelet, limits) != scenario.kubelet:
        raise InputError("--kubelet", f"describes another kubelet configuration than the scenario {args.scenario}")
    devices = getattr(args, "devices", None)
    if devices is not None and read_devices(devices, scenario.machine, limits) != scenario.devices:
        raise InputError("--devices", f"declares other devices than the scenario {args.scenario}")
    prepare_state_dir(scenario, state_dir)
    steps = ScenarioRun(scenario, state_dir, limits=limits)
    results = steps.run()
    failed = sum(1 for r in results if r.failures)
    return Node.over(steps.node), len(results), failed  # started by the runner: serving it is no restart
