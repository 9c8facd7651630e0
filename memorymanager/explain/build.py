"""Computing the explanation of one pod on a node, from the code that decides.

The parts are built by asked.py, hints_part.py, merge_part.py and outcome.py. The admission
(or the hint query) runs on an in-memory fork of the node (`SimulatedNode.fork`), so the node
itself is untouched; the fork's one observer, `recorder.ExplainRecorder`, records what the
deciding code saw and answered (state and re-usable memory at each hint call of the memory
manager and why it answered without looking, machine state around each Allocate, every
provider's hints at each merge and the merge's result). The parts are then filled in by
calling the same pure functions the managers decide with:

* QoS: `kubeinputs.qos.get_pod_qos_explained`; requests: `memorymanager.requests`;
* hints: `reference_hints.check_mask` / `reference_reference_hints.preferred_width` (the body of calculateHints'
  loop), `hints.regenerate_hints`;
* merge: `filter_providers_hints`, `filter_single_numa_hints`, and the fast merge's
  building blocks (`preferred_candidates`, `produced_masks`,
  `max_of_min_affinity_counts`, `fitter_key_for`, `non_preferred_rank`);
* decision: the policy's `can_admit_pod_result` and the admission result itself;
* allocation: machine-state differences around the real Allocate calls;
* CPU manager: the mask rule of generateCPUTopologyHints (`cpumanager.listed_hints` helpers) and the
  static policy's `plan_cpus` (takeByTopology's stages), `explain/cpu_part.py`;
* device manager: generateDeviceTopologyHints' counts and `filter_by_affinity`, `explain/device_part.py`.

Each recomputed result is compared with the one the managers produced (`consistent`).
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.pod import Pod
from memorymanager.explain.asked import build_asked
from memorymanager.explain.cpu_part import build_cpu_allocation, build_cpu_hints_part, cpu_node_rows
from memorymanager.explain.device_part import build_device_allocations, build_device_hints_parts, device_inventory
from memorymanager.explain.hints_part import build_hints_part
from memorymanager.explain.merge_part import build_merge_part
from memorymanager.explain.model import Explanation
from memorymanager.explain.outcome import build_allocation, build_decision
from memorymanager.explain.recorder import ExplainRecorder
from memorymanager.explain.whatif_part import build_what_if
from memorymanager.machine_state import machine_allocatable_terms
from memorymanager.node.simulated_node import FixedHintProvider, SimulatedNode
from memorymanager.node.render import assignments_to_obj, machine_state_to_obj


def explain_pod(node: SimulatedNode, pod: Pod, extra: Optional[FixedHintProvider] = None, op: str = "admit",
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
    trial = node if disposable and not what_if else node.fork()
    recorder = ExplainRecorder(trial)
    trial.add_observer(recorder)
    before = trial.memory_manager.state().get_machine_state()
    explanation = Explanation(op=op, asked=build_asked(trial, pod), allocatable=machine_allocatable_terms(before))
    explanation.cpu_policy = trial.cpu_manager.policy_name()
    explanation.cpu_options = dict(trial.config.cpu_manager_policy_options)
    explanation.cpu_nodes = cpu_node_rows(trial)
    explanation.devices = device_inventory(trial)
    if op == "hints":
        trial.topology_hints(pod)
    else:
        outcome = trial.admit(pod, extra)
    explanation.hints = [build_hints_part(trial, pod, call) for call in recorder.hint_calls]
    explanation.cpu_hints = [build_cpu_hints_part(trial, pod, call) for call in recorder.cpu_hint_calls]
    explanation.device_hints = [part for call in recorder.device_hint_calls
                                for part in build_device_hints_parts(trial, pod, call)]
    if op == "hints":
        return explanation
    explanation.cpu_allocation = [build_cpu_allocation(trial, pod, call) for call in recorder.cpu_allocate_calls]
    explanation.device_allocation = [part for call in recorder.device_allocate_calls
                                     for part in build_device_allocations(trial, pod, call)]
    policy = trial.topology_manager.get_policy()
    explanation.merges = [build_merge_part(policy, call.target, call) for call in recorder.merge_calls]
    explanation.decision = build_decision(trial, pod, explanation, outcome)
    explanation.allocation = build_allocation(trial, pod, recorder.allocate_calls, before, explanation.merges)
    if what_if:
        explanation.what_if = build_what_if(node, trial, pod, extra, explanation, recorder.hint_calls)
    if keep is not None:
        reader = trial.memory_manager.state()
        keep["machine_state"] = machine_state_to_obj(reader.get_machine_state())
        keep["entries"] = assignments_to_obj(reader.get_memory_assignments())
    return explanation
