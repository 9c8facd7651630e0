"""The topology manager (kubelet's topology_manager.go): NewManager and the Manager facade.

`new_manager` checks the configuration in kubelet's order and raises
TopologyManagerError with kubelet's message:

1. policy `none` -> a manager with the none scope; options and NUMA are not looked at;
2. policy options (`unknown Topology Manager Policy option: "x"`, bad values, ...);
3. NUMA info (`cannot discover NUMA topology: error getting NUMA distances from cadvisor`);
4. NUMA node count > max-allowable-numa-nodes (`unsupported on machines with more than 8 NUMA Nodes`);
5. policy name (`unknown policy: "x"`);
6. scope name (`unknown scope: "x"`).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

from topologymanager.admission import PodAdmitResult
from topologymanager.errors import NUMAInfoError, TopologyManagerError
from kubeinputs.features import FeatureGates
from kubeinputs.machine import Node
from kubeinputs.pod import Container, Pod
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import HintProvider
from topologymanager.fast_merge import fast_merge_hints
from topologymanager.merge import MergeFn
from topologymanager.numa_info import NUMAInfo, new_numa_info
from topologymanager.observer import NO_OBSERVER, Observer
from topologymanager.policy import POLICY_BEST_EFFORT, POLICY_NONE, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE, Policy
from topologymanager.policy_best_effort import BestEffortPolicy
from topologymanager.policy_options import PolicyOptions, new_policy_options
from topologymanager.policy_restricted import RestrictedPolicy
from topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from topologymanager.reference_merge import reference_merge_hints
from topologymanager.scope import CONTAINER_TOPOLOGY_SCOPE, POD_TOPOLOGY_SCOPE, Scope
from topologymanager.scope_container import ContainerScope
from topologymanager.scope_none import NoneScope
from topologymanager.scope_pod import PodScope

# The merges a caller may choose by name: None is the production merge (fast_merge), the
# reference is kubelet's literal cross product (same answers, exponentially slower).
MERGE_FUNCTIONS: dict[str, Optional[MergeFn]] = {"fast": None, "reference": reference_merge_hints}


class Manager:
    """kubelet's topologymanager.Manager: admit pods, track containers, answer affinities.

    Every call is delegated to the scope; `numa_info` and `policy_options` are what the
    manager was built with (None for the `none` policy, which never reads them).
    """

    def __init__(self, scope: Scope, numa_info: Optional[NUMAInfo] = None,
                 policy_options: Optional[PolicyOptions] = None) -> None:
        """Wrap a scope (use new_manager to build one from configuration); it reports to the scope's observer."""
        self.scope = scope
        self.numa_info = numa_info
        self.policy_options = policy_options
        self.observer = scope.observer

    @property
    def scope_name(self) -> str:
        """`container`, `pod`, or `none` (the scope of the none policy)."""
        return self.scope.name

    def get_policy(self) -> Policy:
        """The policy in use."""
        return self.scope.get_policy()

    def add_hint_provider(self, provider: HintProvider) -> None:
        """Register a hint provider (consulted in registration order)."""
        self.scope.add_hint_provider(provider)

    def admit(self, pod: Pod) -> PodAdmitResult:
        """kubelet's Admit: merge, store and allocate per the scope; the admission result (reported to
        the observer before and after, where kubelet counts the request and times it)."""
        self.observer.admission_started(pod)
        result = self.scope.admit(pod)
        self.observer.admission_done(pod, result)
        return result

    def add_container(self, pod: Pod, container: Container, container_id: str) -> None:
        """Record the container ID of an admitted container."""
        self.scope.add_container(pod, container, container_id)

    def remove_container(self, container_id: str) -> None:
        """Forget a container ID and, if it was the last for its container, the stored hint."""
        self.scope.remove_container(container_id)

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint for a container, or the zero hint `{nil, false}`."""
        return self.scope.get_affinity(pod_uid, container_name)


def new_policy(name: str, numa_info: NUMAInfo, opts: PolicyOptions, merge_fn: Optional[MergeFn] = None) -> Policy:
    """The merging policy called `name`; `unknown policy: "x"` otherwise (none is handled by new_manager)."""
    fn = merge_fn if merge_fn is not None else fast_merge_hints
    if name == POLICY_BEST_EFFORT:
        return BestEffortPolicy(numa_info, opts, fn)
    if name == POLICY_RESTRICTED:
        return RestrictedPolicy(numa_info, opts, fn)
    if name == POLICY_SINGLE_NUMA_NODE:
        return SingleNumaNodePolicy(numa_info, opts, fn)
    raise TopologyManagerError(f'unknown policy: "{name}"')


def new_scope(name: str, policy: Policy, feature_gates: FeatureGates, observer: Observer = NO_OBSERVER) -> Scope:
    """The scope called `name`; `unknown scope: "x"` otherwise."""
    if name == CONTAINER_TOPOLOGY_SCOPE:
        return ContainerScope(policy, feature_gates, observer)
    if name == POD_TOPOLOGY_SCOPE:
        return PodScope(policy, feature_gates, observer)
    raise TopologyManagerError(f'unknown scope: "{name}"')


def new_manager(
    topology: Optional[Iterable[Node]],
    policy_name: str,
    scope_name: str,
    policy_options: Optional[Mapping[str, str]] = None,
    feature_gates: Optional[FeatureGates] = None,
    merge_fn: Optional[MergeFn] = None,
    observer: Observer = NO_OBSERVER,
) -> Manager:
    """kubelet's NewManager. `topology`: cadvisor nodes (objects with `.node_id`, `.distances`);
    `observer` hears what the manager decides (`topologymanager.observer`)."""
    gates = feature_gates if feature_gates is not None else FeatureGates()
    if policy_name == POLICY_NONE:
        return Manager(NoneScope(gates, observer))
    opts = new_policy_options(policy_options, gates)
    try:
        numa_info = new_numa_info(topology or [], opts.prefer_closest_numa)
    except NUMAInfoError as err:
        raise TopologyManagerError(f"cannot discover NUMA topology: {err}") from err
    if len(numa_info.nodes) > opts.max_allowable_numa_nodes:
        raise TopologyManagerError(f"unsupported on machines with more than {opts.max_allowable_numa_nodes} NUMA Nodes")
    policy = new_policy(policy_name, numa_info, opts, merge_fn)
    scope = new_scope(scope_name, policy, gates, observer)
    return Manager(scope, numa_info, opts)
