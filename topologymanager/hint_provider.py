"""The HintProvider interface: what the CPU, memory and device managers offer the topology manager.

Hints come as a map resource name -> list of hints. The map and its lists carry
meaning in kubelet by being nil or empty (see `merge.filter_providers_hints`):

* map None or {}          -> the provider has no preference at all;
* a resource's list None  -> no preference for that resource;
* a resource's list []    -> no NUMA placement is possible for that resource.
"""
from __future__ import annotations

from typing import Optional, Protocol, runtime_checkable

from kubeinputs.pod import Container, Pod
from topologymanager.hint import TopologyHint

# One provider's answer: resource name -> hints (None = no preference).
ProviderHints = Optional[dict[str, Optional[list[TopologyHint]]]]


@runtime_checkable
class HintProvider(Protocol):
    """kubelet's `topologymanager.HintProvider`. `pod` and `container` are the caller's
    pod objects; the topology manager reads only `pod.uid`, `pod.init_containers`,
    `pod.containers`, `pod.resources` and `container.name`."""

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Hints for one container (container scope)."""

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Hints for the whole pod (pod scope)."""

    def allocate(self, pod: Pod, container: Container) -> None:
        """Allocate resources for a container once its hint is stored; raise to refuse."""

