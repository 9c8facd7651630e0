"""Kubelet feature gates that change topology- or memory-manager behaviour, with v1.37 defaults.

Only the gates this project reads are known; an unknown name is an error, as in
kubelet (`unrecognized feature gate: NAME`). GA gates locked on refuse `false`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

# name -> (default in v1.37, locked to default)
KNOWN_FEATURE_GATES: dict[str, tuple[bool, bool]] = {
    "TopologyManagerPolicyOptions": (True, True),  # GA 1.32
    "TopologyManagerPolicyBetaOptions": (True, False),
    "TopologyManagerPolicyAlphaOptions": (False, False),
    "MemoryManager": (True, True),  # GA 1.32
    "PodLevelResources": (True, False),  # beta 1.34
    "PodLevelResourceManagers": (False, False),  # KEP-5526, off by default
    "MemoryManagerDriftTolerance": (False, False),  # KEP-6232, alpha
    "SidecarContainers": (True, True),  # GA 1.33
    "InPlacePodVerticalScaling": (True, False),
    "KubeletPodResourcesGet": (True, False),  # beta 1.34: the PodResources Get method
    "KubeletPodResourcesDynamicResources": (True, False),  # beta 1.34: DRA claims in PodResources
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
                raise FeatureGateError(f"invalid value of {name}: {value!r}, err: not a boolean")
            default, locked = KNOWN_FEATURE_GATES[name]
            if locked and value != default:
                raise FeatureGateError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to {str(default).lower()}")
        return cls(gates)

    def enabled(self, name: str) -> bool:
        """Whether gate `name` is on."""
        if name in self.overrides:
            return bool(self.overrides[name])
        return KNOWN_FEATURE_GATES[name][0]
