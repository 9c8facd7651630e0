"""Pods and containers: the parts of a v1 Pod that the kubelet's resource managers read."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .quantity import Quantity

RESTART_POLICY_ALWAYS = "Always"


@dataclass
class ResourceRequirements:
    """`resources: {requests, limits}`, after kubelet's defaulting (limits copied into missing requests)."""

    requests: dict[str, Quantity] = field(default_factory=dict)
    limits: dict[str, Quantity] = field(default_factory=dict)


@dataclass
class Container:
    """A container or init container. `restart_policy` "Always" on an init container makes it a sidecar."""

    name: str
    resources: ResourceRequirements = field(default_factory=ResourceRequirements)
    restart_policy: Optional[str] = None

    @property
    def is_restartable(self) -> bool:
        """A restartable init container (sidecar): `restartPolicy: Always`."""
        return self.restart_policy == RESTART_POLICY_ALWAYS


@dataclass
class Pod:
    """A v1 Pod: metadata.name / uid (defaults to the name) / namespace, spec.initContainers,
    spec.containers, and optional pod-level spec.resources (None when unset)."""

    name: str
    uid: str
    namespace: str = "default"
    init_containers: list[Container] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    resources: Optional[ResourceRequirements] = None

    def all_containers(self) -> list[Container]:
        """Init containers, then app containers, in spec order."""
        return [*self.init_containers, *self.containers]

    def find_container(self, name: str) -> Optional[Container]:
        """The init or app container named `name`, or None."""
        for c in self.all_containers():
            if c.name == name:
                return c
        return None
