"""What every topology manager scope shares (kubelet's scope.go).

A scope owns the hint providers, the policy, the affinity store (pod UID ->
container name -> TopologyHint) and the container-ID map used to forget hints when
containers are removed. The container, pod and none scopes differ only in how they
admit a pod (scope_container.py, scope_pod.py, scope_none.py).

Pods are duck-typed: `pod.uid`, `pod.init_containers`, `pod.containers`,
`pod.resources` (None or an object with `requests`/`limits` maps) and `container.name`.
"""
from __future__ import annotations

from typing import Optional

from topologymanager.admission import PodAdmitResult
from kubeinputs.features import POD_LEVEL_RESOURCE_MANAGERS_GATE, FeatureGates
from kubeinputs.limits import WorkLimitError
from kubeinputs.pod import Container, Pod, is_pod_level_resources_set
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import HintProvider
from topologymanager.observer import NO_OBSERVER, Observer
from topologymanager.policy import Policy

CONTAINER_TOPOLOGY_SCOPE = "container"
POD_TOPOLOGY_SCOPE = "pod"
NONE_TOPOLOGY_SCOPE = "none"


def all_containers(pod: Pod) -> list[Container]:
    """Init containers, then app containers, in spec order (kubelet's admission order)."""
    return [*(pod.init_containers or []), *(pod.containers or [])]


class Scope:
    """Shared state and bookkeeping of a scope; subclasses implement `admit`."""

    name: str = ""

    def __init__(self, policy: Policy, feature_gates: Optional[FeatureGates] = None,
                 observer: Observer = NO_OBSERVER) -> None:
        """A scope merging with `policy`; `feature_gates` decide the pod-level path (v1.37 defaults if None);
        `observer` hears each merge and alignment."""
        self.policy = policy
        self.observer = observer
        self.feature_gates = feature_gates if feature_gates is not None else FeatureGates()
        self.hint_providers: list[HintProvider] = []
        self.pod_topology_hints: dict[str, dict[str, TopologyHint]] = {}
        # container ID -> (pod UID, container name): kubelet's ContainerMap
        self.container_map: dict[str, tuple[str, str]] = {}

    # --- store -------------------------------------------------------------------------
    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint, or the zero hint `{nil, false}` for an unknown pod or container."""
        return self.pod_topology_hints.get(pod_uid, {}).get(container_name, TopologyHint())

    def set_topology_hint(self, pod_uid: str, container_name: str, hint: TopologyHint) -> None:
        """Store the hint for one container."""
        self.pod_topology_hints.setdefault(pod_uid, {})[container_name] = hint

    def get_policy(self) -> Policy:
        """The policy this scope merges with."""
        return self.policy

    def uses_pod_level_allocation(self, pod: Pod) -> bool:
        """Whether this pod takes the KEP-5526 path (PodLevelResourceManagers gate on and pod-level resources set)."""
        return self.feature_gates.enabled(POD_LEVEL_RESOURCE_MANAGERS_GATE) and is_pod_level_resources_set(pod)

    # --- providers ---------------------------------------------------------------------
    def add_hint_provider(self, provider: HintProvider) -> None:
        """Register a provider; providers are consulted in registration order."""
        self.hint_providers.append(provider)

    # --- container bookkeeping ------------------------------------------------------------
    def add_container(self, pod: Pod, container: Container, container_id: str) -> None:
        """Remember which (pod, container) a container ID belongs to."""
        self.container_map[container_id] = (str(pod.uid), container.name)

    def remove_container(self, container_id: str) -> None:
        """Forget a container ID; drop its hint unless another ID still maps to the same
        (pod, container); drop the pod entry when empty. An unknown ID is not an error."""
        ref = self.container_map.pop(container_id, None)
        if ref is None:
            return
        if ref in self.container_map.values():
            return  # the container was restarted under a new ID; keep its hint
        pod_uid, container_name = ref
        hints = self.pod_topology_hints.get(pod_uid)
        if hints is None:
            return
        hints.pop(container_name, None)
        if not hints:
            del self.pod_topology_hints[pod_uid]

    # --- allocation ------------------------------------------------------------------------
    def allocate_aligned_resources(self, pod: Pod, container: Container) -> Optional[Exception]:
        """Call allocate on every provider in order; the first error is returned (not raised)."""
        for provider in self.hint_providers:
            try:
                provider.allocate(pod, container)
            except WorkLimitError:
                raise  # not kubelet's answer: the simulation stopped (kubeinputs/limits.py)
            except Exception as err:  # a provider refuses by raising (kubelet: returns an error)
                return err
        return None

    def admit(self, pod: Pod) -> PodAdmitResult:
        """Admit or reject `pod`; allocations already made are not rolled back on rejection."""
        raise NotImplementedError
