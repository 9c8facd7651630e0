"""Kubelet feature gates that change topology-, memory- or CPU-manager behaviour, with v1.37 defaults.

Only the gates this project reads are known; an unknown name is an error, as in
kubelet (`unrecognized feature gate: NAME`). GA gates locked on refuse `false`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from kubeinputs.errors import brief

# Gate names, as kubelet's --feature-gates and featureGates spell them.
TOPOLOGY_MANAGER_POLICY_OPTIONS_GATE = "TopologyManagerPolicyOptions"
TOPOLOGY_MANAGER_POLICY_BETA_OPTIONS_GATE = "TopologyManagerPolicyBetaOptions"
TOPOLOGY_MANAGER_POLICY_ALPHA_OPTIONS_GATE = "TopologyManagerPolicyAlphaOptions"
MEMORY_MANAGER_GATE = "MemoryManager"
POD_LEVEL_RESOURCES_GATE = "PodLevelResources"
POD_LEVEL_RESOURCE_MANAGERS_GATE = "PodLevelResourceManagers"
MEMORY_MANAGER_DRIFT_TOLERANCE_GATE = "MemoryManagerDriftTolerance"
SIDECAR_CONTAINERS_GATE = "SidecarContainers"
IN_PLACE_POD_VERTICAL_SCALING_GATE = "InPlacePodVerticalScaling"
KUBELET_POD_RESOURCES_GET_GATE = "KubeletPodResourcesGet"
KUBELET_POD_RESOURCES_DYNAMIC_RESOURCES_GATE = "KubeletPodResourcesDynamicResources"
CPU_MANAGER_POLICY_OPTIONS_GATE = "CPUManagerPolicyOptions"
CPU_MANAGER_POLICY_BETA_OPTIONS_GATE = "CPUManagerPolicyBetaOptions"
CPU_MANAGER_POLICY_ALPHA_OPTIONS_GATE = "CPUManagerPolicyAlphaOptions"

# The one table of gates, memory and topology manager alike:
# name -> (default in v1.37, locked to default).
KNOWN_FEATURE_GATES: dict[str, tuple[bool, bool]] = {
    # GA 1.32, locked on; nothing reads it (topologyManagerPolicyOptions are always allowed).
    TOPOLOGY_MANAGER_POLICY_OPTIONS_GATE: (True, True),
    # topology manager: beta policy options (policy_options.check_policy_option_available).
    TOPOLOGY_MANAGER_POLICY_BETA_OPTIONS_GATE: (True, False),
    # topology manager: alpha policy options (policy_options.check_policy_option_available).
    TOPOLOGY_MANAGER_POLICY_ALPHA_OPTIONS_GATE: (False, False),
    # GA 1.32, locked on; nothing reads it (the memory manager always exists).
    MEMORY_MANAGER_GATE: (True, True),
    # beta 1.34; memory manager: the Static policy skips pods with pod-level resources and
    # counts them in the QoS class.
    POD_LEVEL_RESOURCES_GATE: (True, False),
    # KEP-5526, off by default; topology manager (pod-level scope path) and memory manager
    # (pod-level allocation, podEntries in the checkpoint).
    POD_LEVEL_RESOURCE_MANAGERS_GATE: (False, False),
    # KEP-6232, alpha; memory manager: the memory-drift-tolerance option and the drift check at start.
    MEMORY_MANAGER_DRIFT_TOLERANCE_GATE: (False, False),
    # GA 1.33, locked on; nothing reads it (the sidecar rules always apply).
    SIDECAR_CONTAINERS_GATE: (True, True),
    # resmgr: whether in-place resizes are allowed at all (the managers do not read it).
    IN_PLACE_POD_VERTICAL_SCALING_GATE: (True, False),
    # beta 1.34; PodResources server: the Get method.
    KUBELET_POD_RESOURCES_GET_GATE: (True, False),
    # beta 1.34; PodResources server: DRA claims in the answers.
    KUBELET_POD_RESOURCES_DYNAMIC_RESOURCES_GATE: (True, False),
    # GA 1.33, locked on; nothing reads it (cpuManagerPolicyOptions are always allowed).
    CPU_MANAGER_POLICY_OPTIONS_GATE: (True, True),
    # CPU manager: beta static-policy options (cpumanager/policy_options.check_policy_option_available).
    CPU_MANAGER_POLICY_BETA_OPTIONS_GATE: (True, False),
    # CPU manager: alpha static-policy options (cpumanager/policy_options.check_policy_option_available).
    CPU_MANAGER_POLICY_ALPHA_OPTIONS_GATE: (False, False),
}


class FeatureGateError(ValueError):
    """A featureGates entry kubelet would refuse at start."""


@dataclass(frozen=True)
class FeatureGates:
    """The effective feature gates: kubelet's defaults overridden by `featureGates`."""

    overrides: Mapping[str, bool] = field(default_factory=dict)

    @classmethod
    def from_config(cls, gates: Optional[Mapping[str, bool]]) -> "FeatureGates":
        """Validate a KubeletConfiguration `featureGates` map (unknown or locked gates are errors)."""
        gates = dict(gates or {})
        for name, value in gates.items():
            if name not in KNOWN_FEATURE_GATES:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
            if not isinstance(value, bool):
                raise FeatureGateError(f"invalid value of {name}: {brief(value)}, err: not a boolean")
            default, locked = KNOWN_FEATURE_GATES[name]
            if locked and value != default:
                raise FeatureGateError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to {str(default).lower()}")
        return cls(gates)

    def enabled(self, name: str) -> bool:
        """Whether gate `name` is on."""
        if name in self.overrides:
            return bool(self.overrides[name])
        return KNOWN_FEATURE_GATES[name][0]
