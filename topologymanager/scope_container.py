"""The `container` topology manager scope (kubelet's scope_container.go), the default.

Each container (init containers first, then app containers) is merged on its own:
hints from every provider -> policy merge -> reject, or store the hint and allocate
on every provider. A rejection or allocation error for a later container does not
undo what was stored or allocated for earlier ones.
"""
from __future__ import annotations

from kubeinputs.pod import Container, Pod
from topologymanager.admission import PodAdmitResult, TopologyAffinityError, get_pod_admit_result
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import NUMA_NODE
from topologymanager.policy import is_alignment_guaranteed
from topologymanager.scope import CONTAINER_TOPOLOGY_SCOPE, Scope, all_containers


class ContainerScope(Scope):
    """One merge and one stored hint per container."""

    name = CONTAINER_TOPOLOGY_SCOPE

    def accumulate_providers_hints(self, pod: Pod, container: Container) -> list[ProviderHints]:
        """Every provider's hints for the container, in registration order."""
        return [provider.get_topology_hints(pod, container) for provider in self.hint_providers]

    def calculate_affinity(self, pod: Pod, container: Container) -> tuple[TopologyHint, bool]:
        """The policy's merged hint and admit decision for one container (reported: "Best TopologyHint")."""
        providers_hints = self.accumulate_providers_hints(pod, container)
        best, admit = self.policy.merge(providers_hints)
        self.observer.hints_merged(pod, container, providers_hints, best, admit)
        return best, admit

    def admit(self, pod: Pod) -> PodAdmitResult:
        """Merge, store and allocate container by container; under a policy that guarantees alignment,
        each container's alignment (or the refusal) is reported where kubelet counts it."""
        aligned = is_alignment_guaranteed(self.policy)
        for container in all_containers(pod):
            best, admit = self.calculate_affinity(pod, container)
            if not admit:
                if aligned:
                    self.observer.alignment(self.name, NUMA_NODE, False)
                return get_pod_admit_result(TopologyAffinityError())
            self.set_topology_hint(str(pod.uid), container.name, best)
            err = self.allocate_aligned_resources(pod, container)
            if err is not None:
                return get_pod_admit_result(err)
            if aligned:
                self.observer.alignment(self.name, NUMA_NODE, True)
        return get_pod_admit_result(None)
