"""Computing the explanation of one pod on a node, from the code that decides.

The parts are built by asked.py, hints_part.py, merge_part.py and outcome.py; the taps
are in taps.py. The admission (or the hint query) runs on an in-memory fork of the node
(`memorymanager.node.api.fork_in_memory`), so the node itself is untouched. Two taps on
the fork record what the deciding code saw and answered: the memory manager tap (state
and re-usable memory at each hint call, machine state around each Allocate) and the
policy tap (every provider's hints at each merge, and the merge's result). The parts
are then filled in by calling the same pure functions the managers decide with:

* QoS: `kubeinputs.qos.get_pod_qos_explained`; requests: `memorymanager.requests`;
* hints: `reference_hints.check_mask` / `reference_reference_hints.preferred_width` (the body of calculateHints'
  loop), `hints.regenerate_hints`;
* merge: `filter_providers_hints`, `filter_single_numa_hints`, and the fast merge's
  building blocks (`preferred_candidates`, `produced_masks`,
  `max_of_min_affinity_counts`, `fitter_key_for`, `non_preferred_rank`);
* decision: the policy's `can_admit_pod_result` and the admission result itself;
* allocation: machine-state differences around the real Allocate calls.

Each recomputed result is compared with the one the managers produced (`consistent`).
"""
from __future__ import annotations

from typing import Any, Optional

from kubeinputs.pod import Pod
from memorymanager.explain.asked import build_asked
from memorymanager.explain.hints_part import build_hints_part
from memorymanager.explain.merge_part import build_merge_part
from memorymanager.explain.model import Explanation
from memorymanager.explain.outcome import build_allocation, build_decision
from memorymanager.explain.taps import ManagerTap, PolicyTap
from memorymanager.explain.whatif_part import build_what_if
from memorymanager.machine_state import machine_allocatable_terms
from memorymanager.node.api import fork_in_memory
from memorymanager.node.simulated_node import POD_SCOPE, SimulatedNode
from memorymanager.node.render import assignments_to_obj, machine_state_to_obj


def explain_pod(node: SimulatedNode, pod: Pod, extra: Optional[Any] = None, op: str = "admit",
                keep: Optional[dict] = None, what_if: bool = False, *, disposable: bool = False) -> Explanation:
    """The explanation of admitting `pod` (op `admit`) or of its hints (op `hints`) on `node`.

    `extra` is the other providers' hint provider for the admission (as `SimulatedNode.admit`
    takes it). The node is not changed, unless it is `disposable` (built for this one
    explanation and dropped after it: it is then used as it is, without the copy, except under
    `what_if`, whose answers are checked on copies of the node as it was). `keep`, when given,
    receives the copy's machine state and assignments after the admission (`machine_state`,
    `entries`, checkpoint shapes), for drawing it. `what_if` adds part 6 (what would make a
    refused pod fit, or the headroom left), each answer checked on further copies of the node.
    """
    if not node.running:
        why = f" (start failed: {node.start_error})" if node.start_error else ""
        return Explanation(op=op, error=f"the node is not running{why}")
    trial = node if disposable and not what_if else fork_in_memory(node)
    tap = ManagerTap(trial.memory_manager)
    scope = trial.topology_manager.scope
    policy_tap = PolicyTap(scope.policy)
    before = trial.memory_manager.state().get_machine_state()
    explanation = Explanation(op=op, asked=build_asked(trial, pod), allocatable=machine_allocatable_terms(before))
    if op == "hints":
        trial.memory_manager = tap
        trial.topology_hints(pod)
    else:
        trial._recorder.inner = tap
        scope.policy = policy_tap
        outcome = trial.admit(pod, extra)
        trial.memory_manager = tap.inner
        scope.policy = policy_tap.inner
    explanation.hints = [build_hints_part(trial, pod, call) for call in tap.hint_calls]
    if op == "hints":
        return explanation
    targets = [POD_SCOPE] if scope.name == POD_SCOPE else [c.name for c in pod.all_containers()]
    explanation.merges = [
        build_merge_part(policy_tap.inner, target, call) for target, call in zip(targets, policy_tap.calls)
    ]
    explanation.decision = build_decision(trial, pod, explanation, outcome)
    explanation.allocation = build_allocation(trial, pod, tap.allocate_calls, before, explanation.merges)
    if what_if:
        explanation.what_if = build_what_if(node, trial, pod, extra, explanation, tap.hint_calls)
    if keep is not None:
        reader = trial.memory_manager.state()
        keep["machine_state"] = machine_state_to_obj(reader.get_machine_state())
        keep["entries"] = assignments_to_obj(reader.get_memory_assignments())
    return explanation
