"""The reference checkpoint writer: the checkpoint bytes through the Go-typed codec.

`reference_encode_checkpoint` is kept as the literal kubelet algorithm (fill the
checkpoint struct, then its marshal_checkpoint: json.Marshal and the go-spew checksum
over the generic type descriptors of gotypes.py) and is used as the oracle of
`checkpoint_writer.encode_checkpoint` in differential tests
(tests/state_store/test_checkpoint_fast.py).
"""
from __future__ import annotations

from typing import Optional

from state.checkpoint import DEFAULT_WRITE_FORMAT, FORMATS, CheckpointData, CheckpointV1, CheckpointV2, CheckpointV3
from state.types import ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments


def reference_encode_checkpoint(
    policy_name: str,
    machine_state: Optional[NUMANodeMap],
    entries: Optional[ContainerMemoryAssignments],
    pod_entries: Optional[PodMemoryAssignments] = None,
    fmt: str = DEFAULT_WRITE_FORMAT,
) -> bytes:
    """The bytes kubelet writes for this content in format `fmt` (v1 drops pod entries), through
    the checkpoint structs' marshal_checkpoint (the generic Go-typed JSON codec and go-spew
    printer). Cost: O(size of the file), with a large constant."""
    pods = pod_entries if pod_entries is not None else {}
    if fmt == "v1":
        return CheckpointV1(policy_name, machine_state, entries).marshal_checkpoint()
    if fmt == "v2":
        return CheckpointV2(policy_name, machine_state, entries, pods).marshal_checkpoint()
    if fmt == "v3":
        data = CheckpointData(policy_name, machine_state, entries, pods)
        return CheckpointV3(checkpoint_data=data).marshal_checkpoint()
    raise ValueError(f"unknown checkpoint format {fmt!r}: expected one of {', '.join(FORMATS)}")
