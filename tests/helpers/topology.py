"""Stand-ins shared by the topology-manager tests: hint builders and duck-typed pods."""
from dataclasses import dataclass, field
from typing import Optional

from topologymanager.bitmask import new_bitmask
from topologymanager.hint import TopologyHint
from topologymanager.numa_info import NUMAInfo


def P(*nodes):
    """A preferred hint on `nodes`."""
    return TopologyHint(new_bitmask(*nodes), True)


def N(*nodes):
    """A non-preferred hint on `nodes`."""
    return TopologyHint(new_bitmask(*nodes), False)


PNIL = TopologyHint(None, True)
NNIL = TopologyHint(None, False)
TWO = NUMAInfo([0, 1], {0: [10, 11], 1: [11, 10]})


@dataclass
class Container:
    name: str


@dataclass
class Resources:
    requests: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)


@dataclass
class Pod:
    """What the topology manager reads of a pod: uid, containers, init containers, pod-level resources."""

    uid: str
    containers: list = field(default_factory=list)
    init_containers: list = field(default_factory=list)
    resources: Optional[Resources] = None
