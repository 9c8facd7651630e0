"""Walking a scenario step by step, explaining its `admit` and `hints` steps.

The steps run exactly as `memorymanager run` runs them (`runner.execute.ScenarioRun`), so
expectations are checked too; before an `admit` or `hints` step its pod is explained on
a fork of the node as it is at that moment. After every step the node's machine state
and assignments are kept for the picture.
"""
from __future__ import annotations

import shutil
import tempfile
from typing import Optional

from kubeinputs.limits import DEFAULT_LIMITS, Limits
from memorymanager.explain.build import explain_pod
from memorymanager.explain.model import Explanation, ScenarioView, StepView
from memorymanager.node.simulated_node import NodeError
from memorymanager.runner.execute import ScenarioRun, build_provider, error_message, prepare_state_dir
from memorymanager.runner.scenario import Scenario, Step
from memorymanager.node.render import assignments_to_obj, machine_state_to_obj
from topologymanager.merge import MergeFn

EXPLAINED_OPS = ("admit", "hints")


def step_title(step: Step) -> str:
    """`admit pod db`, `remove web/app`, `restart`, ..."""
    if step.pod is not None:
        return f"{step.op} pod {step.pod.name}"
    if step.op == "remove":
        return f"remove {step.pod_ref}" + (f"/{step.container}" if step.container else "")
    return step.op


def explain_step(run: ScenarioRun, step: Step, what_if: bool = False) -> Explanation:
    """The explanation of one admit or hints step on the run's node as it is now (nothing changes)."""
    try:
        extra = build_provider(step.providers) if step.providers is not None else None
        return explain_pod(run.node, step.pod, extra, step.op, what_if=what_if)
    except Exception as exc:  # explaining must never stop the walk; the step itself reports too
        return Explanation(op=step.op, error=f"cannot explain: {error_message(exc)}")


def walk_scenario(scenario: Scenario, only_step: Optional[int] = None,
                  merge_fn: Optional[MergeFn] = None, what_if: bool = False,
                  limits: Limits = DEFAULT_LIMITS) -> ScenarioView:
    """Run every step; explain admit and hints steps (only step `only_step` when given).
    `merge_fn` is the topology manager merge (None: the production one), as `run --merge` picks it;
    `what_if` adds part 6 to each explained admission; the node reads within `limits`."""
    state_dir = tempfile.mkdtemp(prefix="memorymanager-explain-")
    try:
        prepare_state_dir(scenario, state_dir)
        run = ScenarioRun(scenario, state_dir, merge_fn, limits=limits)
        if scenario.steps[0].op != "start":
            try:
                run.node.start()
            except NodeError:
                pass
        views: list[StepView] = []
        names: dict[str, str] = {}
        for step in scenario.steps:
            explanation = None
            if step.op in EXPLAINED_OPS and (only_step is None or only_step == step.index):
                explanation = explain_step(run, step, what_if)
            if step.pod is not None and step.op == "admit":
                names[step.pod.uid] = step.pod.name
            result = run.run_step(step)
            machine_state = entries = None
            if run.node.running:
                reader = run.node.memory_manager.state()
                machine_state = machine_state_to_obj(reader.get_machine_state())
                entries = assignments_to_obj(reader.get_memory_assignments())
            views.append(StepView(step.index, step.op, step_title(step), result.status,
                                  [f.to_dict() for f in result.failures], explanation, machine_state, entries,
                                  dict(names), result.actual.get("error")))
        return ScenarioView(scenario.path, scenario.name, scenario.description or "", views)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


def walk_paths(paths: list[str], merge_fn: Optional[MergeFn] = None,
               limits: Limits = DEFAULT_LIMITS) -> list[ScenarioView]:
    """Every scenario file named by `paths` (files or folders, as `run` finds them), walked;
    a file that is not a valid scenario becomes a view with its error and no steps."""
    from memorymanager.runner.discover import collect_scenario_files
    from memorymanager.runner.scenario import ScenarioError, load_scenario

    views: list[ScenarioView] = []
    for path, problem in collect_scenario_files(paths):
        if problem is not None:
            views.append(ScenarioView(path, "", "", [], error=f"{path}: {problem}"))
            continue
        try:
            scenario = load_scenario(path, limits)
        except ScenarioError as exc:
            views.append(ScenarioView(path, "", "", [], error=str(exc)))
            continue
        views.append(walk_scenario(scenario, merge_fn=merge_fn, limits=limits))
    return views
