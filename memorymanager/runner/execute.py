"""Running scenarios: each on a fresh node with its own checkpoint folder, step by step.

A step that raises is not a crash: its message becomes the step's actual `error`.
If the node cannot start (implicitly before the first step, or at `start`/`restart`),
every later step that needs the node fails with `the node is not running (start failed: ...)`.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Callable, Iterable, Optional, Sequence

from memorymanager.node.simulated_node import FixedHintProvider, SimulatedNode, NodeError
from topologymanager.hint import TopologyHint
from topologymanager.manager import MERGE_FUNCTIONS
from topologymanager.merge import MergeFn
from topologymanager.observer import Observer
from topologymanager.reference_merge import ReferenceRefusal
from kubeinputs.limits import DEFAULT_LIMITS, Limits
from kubeinputs.pod import Pod, default_pod_uid
from cpumanager.state import CHECKPOINT_FILE_NAME as CPU_CHECKPOINT_FILE_NAME
from devicemanager.constants import CHECKPOINT_DIR as DEVICE_CHECKPOINT_DIR
from devicemanager.constants import CHECKPOINT_FILE_NAME as DEVICE_CHECKPOINT_FILE_NAME
from state import CHECKPOINT_FILE_NAME
from state.checkpoint_manager import NoSyncFileOps
from state.types import Block
from memorymanager.runner.discover import collect_scenario_files
from memorymanager.runner.expect import compare
from memorymanager.runner.observe import (cpu_observations, cpu_state_observations, device_observations,
                                          hint_maps_to_obj, pod_observations, state_observations)
from memorymanager.requests import get_container_requested_resources
from memorymanager.runner.results import InitMemory, RunReport, ScenarioResult, StepResult
from memorymanager.runner.scenario import HintSpec, InjectedHints, Scenario, ScenarioError, Step, load_scenario

MERGE_CHOICES = tuple(MERGE_FUNCTIONS)


def merge_function(name: str) -> Optional[MergeFn]:
    """The topology manager merge for `--merge`: None (production) or the reference cross product."""
    if name in MERGE_FUNCTIONS:
        return MERGE_FUNCTIONS[name]
    raise ValueError(f'unknown merge "{name}"; expected one of: {", ".join(MERGE_CHOICES)}')


def error_message(exc: BaseException) -> str:
    """An exception as a one-line message: kubelet-text errors as they are, others with their type."""
    text = str(exc) or type(exc).__name__
    if type(exc).__module__ == "builtins" and not isinstance(exc, NodeError):
        text = f"{type(exc).__name__}: {text}"
    return text.replace("\n", " ")


def to_topology_hints(spec: Optional[dict[str, Optional[list[HintSpec]]]]):
    """Injected hints (scenario form) as a provider's answer (TopologyHint lists)."""
    if spec is None:
        return None
    return {
        res: (None if hints is None else [TopologyHint.of(h.nodes, h.preferred) for h in hints])
        for res, hints in spec.items()
    }


def build_provider(injected: InjectedHints) -> FixedHintProvider:
    """The one extra hint provider of an `admit` step's `providers`."""
    return FixedHintProvider(
        {name: to_topology_hints(spec) for name, spec in injected.containers.items()},
        to_topology_hints(injected.pod),
    )


def init_memory_account(pod: Pod, init_blocks: dict[str, Optional[list[Block]]]) -> dict[str, InitMemory]:
    """Per regular init container that held memory when its pod was admitted: where, how much (its request),
    how much the later containers took over, and whose creation released it."""
    account: dict[str, InitMemory] = {}
    order = [c.name for c in pod.all_containers()]
    for name, blocks in init_blocks.items():
        if not blocks:
            continue
        container = pod.find_container(name)
        requested = get_container_requested_resources(pod, container)
        left = {b.type: b.size for b in blocks}
        nodes = sorted({n for b in blocks for n in (b.numa_affinity or [])})
        account[name] = InitMemory(nodes, requested, {r: size - left.get(r, 0) for r, size in requested.items()
                                                      if size > left.get(r, 0)}, order[order.index(name) + 1])
    return account


class ScenarioRun:
    """The execution of one scenario on one node."""

    def __init__(self, scenario: Scenario, state_dir: str, merge_fn: Optional[MergeFn] = None,
                 observe_all: bool = True, durable: bool = True, observers: Sequence[Observer] = (),
                 limits: Limits = DEFAULT_LIMITS):
        # observe_all off: the whole node state (machineState, entries, podEntries, allocatable) and an
        # admission's hints are rendered only for steps whose expect names one of those keys; rendering the
        # state after every step makes a scenario of n admissions O(n^2). --json and --record need every
        # step's full account.
        self.observe_all = observe_all
        self.scenario = scenario
        self.node = SimulatedNode(scenario.machine, scenario.kubelet, state_dir, merge_fn, observers, limits,
                                  devices=scenario.devices)
        # the 1.2 keys are reported (--json, --record) where the scenario models their manager; elsewhere only
        # when a step expects them, so that a 1.1 scenario's report stays what it was
        self.cpu_reported = scenario.cpu_checkpoint is not None or any(
            config.cpu_manager_policy != "none"
            for config in (scenario.kubelet, *(s.kubelet for s in scenario.steps if s.kubelet is not None)))
        self.devices_reported = bool(scenario.devices) or scenario.device_checkpoint is not None
        self._warnings: list[str] = []  # the last start's warnings, for the next step's notes
        if not durable:  # a temporary folder removed after the scenario: no fsync, and only the restarts read it
            self.node.file_ops = NoSyncFileOps(limits)
            self.node.write_behind = True
        self.context_pod: Optional[Pod] = None
        self._hint_shown: Optional[str] = None  # the start hint already attached to a step
        self._init_memory: dict[str, InitMemory] = {}  # the current admit step's init containers' memory

    def run(self) -> list[StepResult]:
        """Start the node (unless step 0 is `start`), then run every step."""
        if self.scenario.steps[0].op != "start":
            try:
                self.node.start()
            except NodeError:
                pass  # reported by step 0, which cannot run without the node
            self._warnings = list(self.node.start_warnings)
        results: list[StepResult] = []
        for step in self.scenario.steps:
            if results and results[-1].skipped is not None:  # the run left kubelet's path: stop comparing
                results.append(StepResult(step.index, step.op, [], {}, skipped=results[-1].skipped))
                continue
            results.append(self.run_step(step))
        self.node.flush_checkpoint()
        return results

    def run_step(self, step: Step) -> StepResult:
        """One operation, then everything it can report, compared with its `expect`."""
        actual: dict[str, Any] = {"error": None}
        self._init_memory = {}
        try:
            self._execute(step, actual)
        except ReferenceRefusal as exc:  # --merge reference on a large machine: not comparable
            return StepResult(step.index, step.op, [], actual, skipped=error_message(exc))
        except Exception as exc:  # a failing step, never a crash of the runner
            actual["error"] = error_message(exc)
        self._observe(actual, step)
        return StepResult(step.index, step.op, compare(step.expect, actual), actual, self._notes(actual),
                          init_memory=self._init_memory)

    def _notes(self, actual: dict[str, Any]) -> list[str]:
        """The warnings of the start this step made (or of the implicit start before step 0), then the start
        hint of a failed start, on the first failing step after it (not repeated)."""
        notes, self._warnings = self._warnings, []
        hint = self.node.start_hint
        if self.node.running:
            self._hint_shown = None
        if actual.get("error") is None or hint is None or hint == self._hint_shown:
            return notes
        self._hint_shown = hint
        return notes + [hint]

    def _execute(self, step: Step, actual: dict[str, Any]) -> None:
        """Carry out the step's operation, adding what it returns (admission result, hints) to `actual`."""
        node = self.node
        if step.op in ("start", "restart"):
            try:
                node.start() if step.op == "start" else node.restart(step.kubelet)
            finally:
                self._warnings = list(node.start_warnings)
        elif step.op == "admit":
            self.context_pod = step.pod
            extra = build_provider(step.providers) if step.providers is not None else None
            outcome = node.admit(step.pod, extra)
            actual.update(admitted=outcome.admit, reason=outcome.reason, message=outcome.message)
            self._init_memory = init_memory_account(step.pod, outcome.init_blocks)
            if self.observe_all or "hints" in (step.expect or {}):  # 255 hints per resource on 8 NUMA nodes
                actual["hints"] = hint_maps_to_obj(outcome.hints)
        elif step.op == "hints":
            self.context_pod = step.pod
            actual["hints"] = hint_maps_to_obj(node.topology_hints(step.pod))
        elif step.op == "remove":
            pod = node.find_pod(step.pod_ref, step.namespace)
            if pod is None:
                # Never admitted here: kubelet's RemoveContainer of an unknown container ID does nothing.
                ref = step.pod_ref if step.namespace is None else default_pod_uid(step.pod_ref, step.namespace)
                node.remove_container_ids([f"{ref}/{step.container}"] if step.container else [])
            else:
                self.context_pod = pod
                node.remove(pod, step.container)
        else:  # check: nothing happens, but there must be a node to look at
            node.require_running()

    def _observe(self, actual: dict[str, Any], step: Optional[Step] = None) -> None:
        """Add the node's state (and the context pod's) to `actual`; reading problems become the error."""
        if not self.node.running:
            return
        expect = (step.expect or {}) if step is not None else {}
        try:
            if self.observe_all or step is None or any(key in expect for key in STATE_KEYS):
                actual.update(state_observations(self.node))
            if (self.observe_all and self.cpu_reported) or "defaultCpuSet" in expect:
                actual.update(cpu_state_observations(self.node))
            if self.context_pod is not None:
                actual.update(pod_observations(self.node, self.context_pod))
                # cheap (the context pod's containers): also for the `-v` report
                if self.cpu_reported or "cpus" in expect:
                    actual.update(cpu_observations(self.node, self.context_pod))
                if self.devices_reported or "devices" in expect:
                    actual.update(device_observations(self.node, self.context_pod))
        except Exception as exc:
            if actual.get("error") is None:
                actual["error"] = "reading the node state failed: " + error_message(exc)


STATE_KEYS = ("machineState", "entries", "podEntries", "allocatable")


def prepare_state_dir(scenario: Scenario, state_dir: str) -> None:
    """A fresh checkpoint folder: no old checkpoint of any manager, and the scenario's `checkpoint`,
    `cpuCheckpoint` and `deviceCheckpoint` where it has them."""
    os.makedirs(state_dir, exist_ok=True)
    for name, content in ((CHECKPOINT_FILE_NAME, scenario.checkpoint),
                          (CPU_CHECKPOINT_FILE_NAME, scenario.cpu_checkpoint),
                          (os.path.join(DEVICE_CHECKPOINT_DIR, DEVICE_CHECKPOINT_FILE_NAME), scenario.device_checkpoint)):
        path = os.path.join(state_dir, name)
        if os.path.lexists(path):
            os.remove(path)
        if content is not None:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(content)


def run_scenario(
    scenario: Scenario, state_dir: Optional[str] = None, merge_fn: Optional[MergeFn] = None,
    observe_all: bool = True, observers: Sequence[Observer] = (), limits: Limits = DEFAULT_LIMITS,
) -> ScenarioResult:
    """Run one parsed scenario; `state_dir` None = a temporary folder removed afterwards; `observers` hear
    the node's managers (`topologymanager.observer`)."""
    temp = None
    if state_dir is None:
        temp = tempfile.mkdtemp(prefix="memorymanager-")
        state_dir = temp
    run: Optional[ScenarioRun] = None
    try:
        prepare_state_dir(scenario, state_dir)
        run = ScenarioRun(scenario, state_dir, merge_fn, observe_all, durable=temp is None, observers=observers,
                          limits=limits)
        steps = run.run()
    finally:
        try:
            if run is not None:  # also when SIGTERM or Ctrl-C unwinds the run: the held write lands first
                run.node.end_write_behind()
        finally:
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
    return ScenarioResult(scenario.path, scenario.name, steps)


def run_file(
    path: str, state_dir: Optional[str] = None, merge_fn: Optional[MergeFn] = None,
    observe_all: bool = True, observers: Sequence[Observer] = (), limits: Limits = DEFAULT_LIMITS,
) -> tuple[ScenarioResult, Optional[Scenario]]:
    """Load and run one file within `limits`; an invalid file gives an `invalid` result and no scenario."""
    try:
        scenario = load_scenario(path, limits)
    except ScenarioError as exc:
        return ScenarioResult(path, error=str(exc)), None
    except Exception as exc:  # a parser bug must not stop the other files
        return ScenarioResult(path, error=f"{path}: {error_message(exc)}"), None
    try:
        return run_scenario(scenario, state_dir, merge_fn, observe_all, observers, limits), scenario
    except OSError as exc:
        return ScenarioResult(path, scenario.name, error=f"{path}: cannot prepare the state folder: {exc}"), None


def run_paths(
    paths: Iterable[str],
    state_dir: Optional[str] = None,
    merge_fn: Optional[MergeFn] = None,
    on_scenario: Optional[Callable[[ScenarioResult, Optional[Scenario]], None]] = None,
    observe_all: bool = True,
    observers: Sequence[Observer] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> RunReport:
    """Run every scenario file named by `paths` (files or folders), in order, reading within `limits`;
    `observers` hear every node."""
    report = RunReport()
    for path, problem in collect_scenario_files(paths):
        if problem is not None:
            result, scenario = ScenarioResult(path, error=f"{path}: {problem}"), None
        else:
            result, scenario = run_file(path, state_dir, merge_fn, observe_all, observers, limits)
        report.scenarios.append(result)
        if on_scenario is not None:
            on_scenario(result, scenario)
    return report

