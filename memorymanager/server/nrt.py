"""The `topology.node.k8s.io/v1alpha2` NodeResourceTopology object NFD's topology-updater
(node-feature-discovery v0.19.0) would publish for a node, computed from PodResources answers as
the updater computes them.

Inputs are the wire messages (a v1 `ListPodResourcesResponse` and an
`AllocatableResourcesResponse`), the machine (what the updater reads from sysfs: NUMA nodes,
their CPUs, memory, hugepages and distances), the kubelet configuration (what it reads for the
topology manager attributes) and, when known, the pod specs (what it reads from the API
server). The same code serves a live socket and a node in-process. The rules are NFD's
scanner (`nrt_scanner`) and aggregator (`nrt_aggregator`); this module puts the object
together:

- `topologyPolicies`: the deprecated single entry (`SingleNUMANodeContainerLevel`,
  `BestEffortPodLevel`, `None`, ...);
- `attributes`: `topologyManagerPolicy`, `topologyManagerScope`, then the scan's
  `nodeTopologyPodsFingerprint` (when fingerprinting is on and a pod is listed); nothing else;
- `zones`: the aggregator's.

docs/nrt.md has the whole story.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from kubeinputs.features import POD_LEVEL_RESOURCES_GATE, FeatureGates
from kubeinputs.kubelet_config import KubeletConfig
from kubeinputs.machine import MachineInfo
from kubeinputs.pod import Pod
from memorymanager.server.nrt_aggregator import ResourcesAggregator
from memorymanager.server.nrt_scanner import ALL_NAMESPACES, ScanOptions, scan
from memorymanager.server.protos.v1 import api_pb2 as v1

if TYPE_CHECKING:
    from memorymanager.server.host import NodeHost
    from memorymanager.server.podresources import ProviderData

API_VERSION = "topology.node.k8s.io/v1alpha2"
KIND = "NodeResourceTopology"
TOPOLOGY_MANAGER_POLICY_ATTRIBUTE = "topologyManagerPolicy"
TOPOLOGY_MANAGER_SCOPE_ATTRIBUTE = "topologyManagerScope"

# kubelet policy name -> the deprecated v1alpha2 `topologyPolicies` value stem
_POLICY_STEMS = {"best-effort": "BestEffort", "restricted": "Restricted", "single-numa-node": "SingleNUMANode"}
_SCOPE_SUFFIXES = {"container": "ContainerLevel", "pod": "PodLevel"}


@dataclass(frozen=True)
class NRTOptions:
    """The updater's flags that change the object: `-watch-namespace` and `-pods-fingerprint`."""

    watch_namespace: str = ALL_NAMESPACES
    pods_fingerprint: bool = True


def topology_policy(policy: str, scope: str) -> str:
    """The deprecated `topologyPolicies` entry (NFD's `DetectTopologyPolicy`)."""
    stem, suffix = _POLICY_STEMS.get(policy), _SCOPE_SUFFIXES.get(scope)
    if stem is None or suffix is None:
        return "None"
    return stem + suffix


def attributes(config: KubeletConfig, scanned: tuple[tuple[str, str], ...] = ()) -> list[dict[str, str]]:
    """The topology manager's policy and scope, then the scan's attributes, each name once
    (NFD's `updateAttributes`: a name already present has its value replaced)."""
    attrs = [
        {"name": TOPOLOGY_MANAGER_POLICY_ATTRIBUTE, "value": config.topology_manager_policy},
        {"name": TOPOLOGY_MANAGER_SCOPE_ATTRIBUTE, "value": config.topology_manager_scope},
    ]
    for name, value in scanned:
        for attr in attrs:
            if attr["name"] == name:
                attr["value"] = value
                break
        else:
            attrs.append({"name": name, "value": value})
    return attrs


def node_resource_topology(node_name: str, machine: MachineInfo, config: KubeletConfig,
                           allocatable: v1.AllocatableResourcesResponse, listing: v1.ListPodResourcesResponse,
                           specs: Optional[Mapping[tuple[str, str], Pod]] = None,
                           options: NRTOptions = NRTOptions()) -> dict[str, Any]:
    """The whole NRT object. `specs`: the pods by (namespace, name), as the API server would
    give them; None when unknown (a socket asked from outside, docs/nrt.md)."""
    gates = FeatureGates.from_config(config.feature_gates)
    scan_options = ScanOptions(namespace=options.watch_namespace, pods_fingerprint=options.pods_fingerprint,
                               pod_level_resources=gates.enabled(POD_LEVEL_RESOURCES_GATE))
    lookup = None if specs is None else (lambda namespace, name: specs.get((namespace, name)))
    scanned = scan(listing, lookup, scan_options)
    zones = ResourcesAggregator(machine, allocatable).aggregate(scanned.pod_resources)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": node_name},
        "topologyPolicies": [topology_policy(config.topology_manager_policy, config.topology_manager_scope)],
        "attributes": attributes(config, scanned.attributes),
        "zones": zones,
    }


def from_host(host: "NodeHost", node_name: str, providers: Optional["ProviderData"] = None,
              options: NRTOptions = NRTOptions()) -> dict[str, Any]:
    """The NRT of a served node, from the same PodResources messages its server answers (the CPU, device
    and memory managers' CPUs, devices and blocks; `providers`: CPU ids and devices added by hand) and the
    specs of its active pods."""
    from memorymanager.server.podresources import ProviderData, allocatable_message, pod_resources

    providers = providers or ProviderData()
    listing = v1.ListPodResourcesResponse(pod_resources=[pod_resources(v, providers) for v in host.pod_views()])
    allocatable = allocatable_message(host.allocatable(), providers)
    specs = {(p.namespace, p.name): p for p in host.locked(host.node.active_pods)}
    return node_resource_topology(node_name, host.node.machine, host.node.kubelet, allocatable, listing, specs,
                                  options)
