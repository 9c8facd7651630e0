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

from typing import Any, Optional

from topologymanager.admission import (
    POD_SCOPE_POD_LEVEL_REJECTION,
    PodAdmitResult,
    PodLevelTopologyAffinityError,
    TopologyAffinityError,
    get_pod_admit_result,
)
from topologymanager.hint import TopologyHint
from topologymanager.hint_provider import ProviderHints
from topologymanager.scope import POD_TOPOLOGY_SCOPE, Scope, all_containers


class PodScope(Scope):
    """One merge per pod; the same hint for all its containers."""

    name = POD_TOPOLOGY_SCOPE

    def accumulate_providers_hints(self, pod: Any) -> list[ProviderHints]:
        """Every provider's pod-level hints, in registration order."""
        return [provider.get_pod_topology_hints(pod) for provider in self.hint_providers]

    def calculate_affinity(self, pod: Any) -> tuple[TopologyHint, bool]:
        """The policy's merged hint and admit decision for the whole pod."""
        return self.policy.merge(self.accumulate_providers_hints(pod))

    def admit(self, pod: Any) -> PodAdmitResult:
        """One merge; then store the hint for every container and allocate."""
        best, admit = self.calculate_affinity(pod)
        pod_level = self.uses_pod_level_allocation(pod)
        if not admit:
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
        return get_pod_admit_result(None)

    def allocate_pod_aligned_resources(self, pod: Any) -> Optional[Exception]:
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
