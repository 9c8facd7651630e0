"""The node's state and hints as JSON data, in the shapes the scenarios and the CLI show.

State values come out exactly as the checkpoint file writes them (`machineState`,
`entries`, `podEntries`, block lists: Go's encoding/json over the state's Go types);
a hint comes out as the scenario format's `{numaAffinity: [..] | null, preferred}`.
The runner's observations and `memorymanager checkpoint inspect` both use them.
"""
from __future__ import annotations

import json
from typing import Optional

from kubeinputs import gojson
from state.go_descriptors import BLOCKS, CONTAINER_MEMORY_ASSIGNMENTS, NUMA_NODE_MAP, POD_MEMORY_ASSIGNMENTS
from state.types import Block, ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments
from topologymanager.hint import TopologyHint


def _to_obj(value, gotype) -> object:
    """The value as Python JSON data, exactly as the checkpoint writes it."""
    return json.loads(gojson.marshal(value, gotype))


def machine_state_to_obj(machine_state: Optional[NUMANodeMap]) -> Optional[dict]:
    """The checkpoint's `machineState` object (string keys, sorted as Go sorts them)."""
    return _to_obj(machine_state, NUMA_NODE_MAP)  # type: ignore[return-value]


def blocks_to_obj(blocks: Optional[list[Block]]) -> Optional[list]:
    """A block list as the checkpoint writes it."""
    return _to_obj(blocks, BLOCKS)  # type: ignore[return-value]


def assignments_to_obj(assignments: Optional[ContainerMemoryAssignments]) -> Optional[dict]:
    """The checkpoint's `entries` object."""
    return _to_obj(assignments, CONTAINER_MEMORY_ASSIGNMENTS)  # type: ignore[return-value]


def pod_assignments_to_obj(pod_assignments: Optional[PodMemoryAssignments]) -> Optional[dict]:
    """The checkpoint's `podEntries` object."""
    return _to_obj(pod_assignments, POD_MEMORY_ASSIGNMENTS)  # type: ignore[return-value]


def hint_to_obj(hint: TopologyHint) -> dict:
    """A hint in the scenario format: `{numaAffinity: [..] | null, preferred: bool}`."""
    return {"numaAffinity": hint.nodes(), "preferred": hint.preferred}
