"""The `pod` topology manager scope (kubelet's scope_pod.go).

One merge for the whole pod from every provider's pod-level hints; the same hint is
stored for every container, then every provider allocates container by container.

With the `PodLevelResourceManagers` feature gate on and pod-level resources set
(KEP-5526), the hint is stored for every container and then each provider that can
(`allocate_pod`) allocates the whole pod once instead; providers without
`allocate_pod` are skipped. A rejection on that path is a PodLevelTopologyAffinityError
(`Pod Scope pod with pod-level resources failed admission under pod-scope topology manager`).
"""
from __future__ import annotations

from typing import Optional

from kubeinputs.pod import Pod
from topologymanager.admission import (
    POD_SCOPE_POD_LEVEL_REJECTION,
    PodAdmitResult,
    PodLevelTopologyAffinityError,
    TopologyAffinityError,
    get_pod_admit_result,
)
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.observer import NUMA_NODE
from topologymanager.policy import is_alignment_guaranteed
from topologymanager.scope import POD_TOPOLOGY_SCOPE, Scope, all_containers


class PodScope(Scope):
    """One merge per pod; the same hint for all its containers."""

    name = POD_TOPOLOGY_SCOPE

    def accumulate_providers_hints(self, pod: Pod) -> list[ProviderHints]:
        """Every provider's pod-level hints, in registration order."""
        return [provider.get_pod_topology_hints(pod) for provider in self.hint_providers]

    def calculate_affinity(self, pod: Pod) -> tuple[TopologyHint, bool]:
        """The policy's merged hint and admit decision for the whole pod (reported: "Best TopologyHint")."""
        providers_hints = self.accumulate_providers_hints(pod)
        best, admit = self.policy.merge(providers_hints)
        self.observer.hints_merged(pod, None, providers_hints, best, admit)
        return best, admit

    def admit(self, pod: Pod) -> PodAdmitResult:
        """One merge; then store the hint for every container and allocate; under a policy that
        guarantees alignment, the pod's alignment (or the refusal) is reported where kubelet counts it."""
        best, admit = self.calculate_affinity(pod)
        pod_level = self.uses_pod_level_allocation(pod)
        aligned = is_alignment_guaranteed(self.policy)
        if not admit:
            if aligned:
                self.observer.alignment(self.name, NUMA_NODE, False)
            if pod_level:
                return get_pod_admit_result(PodLevelTopologyAffinityError(POD_SCOPE_POD_LEVEL_REJECTION))
            return get_pod_admit_result(TopologyAffinityError())
        for container in all_containers(pod):
            self.set_topology_hint(str(pod.uid), container.name, best)
            if pod_level:
                continue
            err = self.allocate_aligned_resources(pod, container)
            if err is not None:
                return get_pod_admit_result(err)
        if pod_level:
            err = self.allocate_pod_aligned_resources(pod)
            if err is not None:
                return get_pod_admit_result(err)
        if aligned:
            self.observer.alignment(self.name, NUMA_NODE, True)
        return get_pod_admit_result(None)

    def allocate_pod_aligned_resources(self, pod: Pod) -> Optional[Exception]:
        """Call allocate_pod on every provider that has it, in order; the first error is returned."""
        for provider in self.hint_providers:
            allocate_pod = getattr(provider, "allocate_pod", None)
            if allocate_pod is None:
                continue
            try:
                allocate_pod(pod)
            except Exception as err:  # a provider refuses by raising
                return err
        return None
