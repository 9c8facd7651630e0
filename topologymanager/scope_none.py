"""The scope used with the `none` policy (kubelet's scope_none.go).

No hints are asked for or stored; every provider still allocates every container
(init containers first), and an allocation error still rejects the pod.
"""
from __future__ import annotations

from typing import Optional

from topologymanager.admission import PodAdmitResult, get_pod_admit_result
from kubeinputs.features import FeatureGates
from kubeinputs.pod import Pod
from topologymanager.observer import NO_OBSERVER, Observer
from topologymanager.policy_none import NonePolicy
from topologymanager.scope import NONE_TOPOLOGY_SCOPE, Scope, all_containers


class NoneScope(Scope):
    """Allocate only; get_affinity always returns the zero hint."""

    name = NONE_TOPOLOGY_SCOPE

    def __init__(self, feature_gates: Optional[FeatureGates] = None, observer: Observer = NO_OBSERVER) -> None:
        """The none scope always uses the none policy."""
        super().__init__(NonePolicy(), feature_gates, observer)

    def admit(self, pod: Pod) -> PodAdmitResult:
        """Allocate each container on every provider; the first error rejects."""
        for container in all_containers(pod):
            err = self.allocate_aligned_resources(pod, container)
            if err is not None:
                return get_pod_admit_result(err)
        return get_pod_admit_result(None)
