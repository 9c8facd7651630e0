"""What-ifs for the CPU manager on copies of a node: the largest CPU request admitted now, and configuration
changes of the CPU manager that admit a refused pod.

Every answer is checked by admitting the pod on a copy of the node with the change made:

* `largest_cpu_request`: the refused container (in pod scope: the container asking the most exclusive CPUs)
  with a smaller integral `cpu` request and limit, from one below the request down (in whole cores under
  `full-pcpus-only`, whose requests must be a multiple of the CPUs per core), each admitted on a fork; the
  first admitted is the answer, with the next larger count tried (refused).
* `cpu_config_changes`: a kubelet restart (on a copy of the node's state, as `whatif.restarted_with`) with
  fewer reserved CPUs (`reservedSystemCPUs` naming the lowest reserved CPU alone: the static policy needs one)
  or, for an `SMTAlignmentError`, without `full-pcpus-only`; then the pod is admitted there.

Cost: one fork and one admission per check, at most `MAX_CHECKS` for the search.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from typing import Mapping, Optional

from cpumanager.policy_options import FULL_PCPUS_ONLY_OPTION
from cpumanager.policy_static import StaticPolicy
from cpumanager.requests import guaranteed_cpus
from kubeinputs.pod import Container, Pod, ResourceRequirements
from kubeinputs.quantity import Quantity
from memorymanager.node.answers import Admission, admission_of
from memorymanager.node.simulated_node import KubeletStartError, SimulatedNode
from memorymanager.node.whatif import MAX_CHECKS, Extra, restarted_with

SMT_ALIGNMENT_ERROR = "SMTAlignmentError"
NO_EXCLUSIVE_CPUS = "no container asks for exclusive CPUs"


@dataclass(frozen=True)
class CPUFit:
    """The largest CPU request of one container admitted now (checked): the container, what it asked, the CPUs
    admitted and the admission, the next larger count tried and refused, the step between counts tried (the
    CPUs per core under full-pcpus-only, else 1) and the admissions the search ran."""

    container: str
    requested: int
    cpus: int
    admission: Admission
    refused_above: int
    step: int
    checks: int


@dataclass(frozen=True)
class ConfigTry:
    """The pod admitted after a kubelet restart with a CPU manager setting changed (checked): the
    KubeletConfiguration `fields`, a phrase saying what changes, and the admission (None with kubelet's start
    `error` when it would not start so)."""

    fields: Mapping[str, object]
    change: str
    admission: Optional[Admission]
    error: str = ""


def static_policy(node: SimulatedNode) -> Optional[StaticPolicy]:
    """The node's static CPU policy, None under `none`."""
    policy = node.cpu_manager.policy if node.cpu_manager is not None else None
    return policy if isinstance(policy, StaticPolicy) else None


def _widest_container(node: SimulatedNode, pod: Pod, target: Optional[str]) -> Optional[tuple[Container, int]]:
    """The container whose CPU request is shrunk (the target, else the one asking most) and its exclusive CPUs."""
    policy = static_policy(node)
    if policy is None:
        return None
    asks = [(c, guaranteed_cpus(pod, c, policy.feature_gates)) for c in pod.all_containers()]
    asks = [(c, n) for c, n in asks if n > 0]
    named = [(c, n) for c, n in asks if c.name == target]
    if named:
        return named[0]
    return max(asks, key=lambda a: a[1]) if asks else None


def _with_cpus(pod: Pod, name: str, cpus: int, uid: str) -> Pod:
    """The pod with container `name`'s cpu request and limit set to `cpus`."""
    def one(c: Container) -> Container:
        if c.name != name:
            return c
        requests = {**(c.resources.requests or {}), "cpu": Quantity.from_int(cpus)}
        limits = {**(c.resources.limits or {}), "cpu": Quantity.from_int(cpus)}
        return replace(c, resources=ResourceRequirements(requests, limits))

    return replace(pod, uid=uid, init_containers=[one(c) for c in pod.init_containers],
                   containers=[one(c) for c in pod.containers])


def largest_cpu_request(node: SimulatedNode, pod: Pod, target: Optional[str], extra: Extra = None,
                        max_checks: int = MAX_CHECKS) -> tuple[Optional[CPUFit], int, str]:
    """(the largest CPU request admitted now, admissions checked, why there is none); see the module's docstring."""
    found = _widest_container(node, pod, target)
    if found is None:
        return None, 0, NO_EXCLUSIVE_CPUS
    container, request = found
    policy = static_policy(node)
    step = policy.topology.cpus_per_core() if policy.options.full_physical_cpus_only else 1
    uid = pod.uid if pod.uid not in {p.uid for p in node.active_pods()} else pod.uid + "-what-if"
    top = min(request - 1, node.cpu_manager.get_all_cpus().size()) // step * step
    refused_above, checks = request, 0
    for cpus in range(top, 0, -step):
        if checks >= max_checks:
            return None, checks, f"none found within {checks} checks (down to {refused_above} CPUs)"
        trial = node.fork()
        smaller = _with_cpus(pod, container.name, cpus, uid)
        outcome = trial.admit(smaller, extra)
        checks += 1
        if outcome.admit:
            return CPUFit(container.name, request, cpus, admission_of(trial, smaller, outcome), refused_above, step,
                          checks), checks, ""
        refused_above = cpus
    return None, checks, f"no smaller CPU request of {container.name} is admitted ({checks} checked)"


def _tries(node: SimulatedNode, reason: str) -> list[tuple[dict[str, object], str]]:
    """The CPU manager settings worth a restart for this refusal."""
    policy = static_policy(node)
    if policy is None:
        return []
    tries: list[tuple[dict[str, object], str]] = []
    reserved = node.cpu_manager.reserved_cpus()
    if reserved.size() > 1:
        lowest = str(min(reserved.list()))
        tries.append(({"reservedSystemCPUs": lowest},
                      f"reserving CPU {lowest} only (now {reserved.size()} reserved: {reserved})"))
    options = dict(node.config.cpu_manager_policy_options)
    if reason == SMT_ALIGNMENT_ERROR and FULL_PCPUS_ONLY_OPTION in options:
        rest = {k: v for k, v in options.items() if k != FULL_PCPUS_ONLY_OPTION}
        tries.append(({"cpuManagerPolicyOptions": rest}, f"without the CPU manager option {FULL_PCPUS_ONLY_OPTION}"))
    return tries


def cpu_config_changes(node: SimulatedNode, pod: Pod, reason: str, extra: Extra = None) -> list[ConfigTry]:
    """The pod's admission after a restart with each CPU manager setting of `_tries` (one restart each)."""
    out: list[ConfigTry] = []
    for fields, change in _tries(node, reason):
        with tempfile.TemporaryDirectory(prefix="memorymanager-whatif-") as folder:
            try:
                restarted = restarted_with(node, fields, folder)
            except KubeletStartError as exc:
                out.append(ConfigTry(fields, change, None, str(exc)))
                continue
            out.append(ConfigTry(fields, change, admission_of(restarted, pod, restarted.admit(pod, extra))))
    return out

