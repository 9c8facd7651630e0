"""The memory manager checkpoint file: its three formats and the loader.

kubelet's pkg/kubelet/cm/memorymanager/state/checkpoint.go (v1.37):

* v1 `MemoryManagerCheckpointV1` {policyName, machineState, entries(omitempty), checksum}:
  what every kubelet up to 1.35 writes, and 1.36 with the PodLevelResourceManagers gate off;
* v2 `MemoryManagerCheckpointV2` = v1 + podEntries(omitempty) before checksum: 1.36 with the gate on;
* v3 `MemoryManagerCheckpoint` (1.37): the v1 fields inline, with a v1-compatible `checksum`
  so that older kubelets can still read the file, plus `data` (a JSON string holding
  {policyName, machineState, entries, podEntries}) and `dataChecksum`, which is authoritative.

Each class has kubelet's three checkpoint methods (marshal_checkpoint, unmarshal_checkpoint,
verify_checksum) with the same semantics, including which stored checksums are accepted:
v1 accepts 0 unchecked ("old file backend"), v2 and v3 never do. `read_checkpoint` is the
v1.37 loader's v3 -> v2 -> v1 fallback. Writing: `checkpoint_writer.encode_checkpoint`
(the direct writer the store uses) and `reference_checkpoint_writer` (through these
structs' marshal_checkpoint, the oracle); the errors are in `checkpoint_errors`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kubeinputs import gojson
from kubeinputs.checksum import checksum_of, string_checksum
from kubeinputs.gotypes import CHECKSUM, STRING, GoField, GoPtr, GoStruct
from state.checkpoint_errors import CheckpointError, CorruptCheckpointError, WrappedCheckpointError
from state.go_descriptors import CONTAINER_MEMORY_ASSIGNMENTS, NUMA_NODE_MAP, POD_MEMORY_ASSIGNMENTS
from state.types import (
    ContainerMemoryAssignments,
    NUMANodeMap,
    PodMemoryAssignments,
    clone_assignments,
    clone_machine_state,
)

FORMATS = ("v1", "v2", "v3")
# kubelet v1.37 always writes v3 (state_checkpoint.go storeState uses newMemoryManagerCheckpoint(),
# the V3 type, whatever the feature gates say).
DEFAULT_WRITE_FORMAT = "v3"
LEGACY_TYPE_NAME = "MemoryManagerCheckpoint"


# --------------------------------------------------------------------------------------
# the checkpoint structs


@dataclass
class CheckpointV1:
    """MemoryManagerCheckpointV1 (pre-initialised like newMemoryManagerCheckpointV1)."""

    policy_name: str = ""
    machine_state: Optional[NUMANodeMap] = field(default_factory=dict)
    entries: Optional[ContainerMemoryAssignments] = field(default_factory=dict)
    checksum: int = 0

    def legacy_checksum(self) -> int:
        """The checksum of the v1 fields, as every kubelet computes it for a v1 file."""
        saved, self.checksum = self.checksum, 0
        try:
            return checksum_of(self, GoPtr(V1_STRUCT), ("MemoryManagerCheckpointV1", LEGACY_TYPE_NAME))
        finally:
            self.checksum = saved

    def marshal_checkpoint(self) -> bytes:
        """Set the v1 checksum and return json.Marshal of the struct."""
        self.checksum = 0
        self.checksum = self.legacy_checksum()
        return gojson.marshal(self, V1_STRUCT)

    def unmarshal_checkpoint(self, blob: bytes) -> None:
        """json.Unmarshal into this pre-initialised struct."""
        gojson.unmarshal(blob, self, V1_STRUCT)

    def verify_checksum(self) -> None:
        """Compare the stored checksum with the content's; a stored 0 passes unchecked (1.36+)."""
        if self.checksum == 0:
            return  # accepted unchecked, for files of the old file backend (kubelet >= 1.36)
        actual = self.legacy_checksum()
        if actual != self.checksum:
            raise CorruptCheckpointError(actual, self.checksum)


@dataclass
class CheckpointV2:
    """MemoryManagerCheckpointV2 (pre-initialised like newMemoryManagerCheckpointV2)."""

    policy_name: str = ""
    machine_state: Optional[NUMANodeMap] = field(default_factory=dict)
    entries: Optional[ContainerMemoryAssignments] = field(default_factory=dict)
    pod_entries: Optional[PodMemoryAssignments] = field(default_factory=dict)
    checksum: int = 0

    def computed_checksum(self) -> int:
        """The v2 checksum of the content (hashed under the legacy type name)."""
        saved, self.checksum = self.checksum, 0
        try:
            return checksum_of(self, GoPtr(V2_STRUCT), ("MemoryManagerCheckpointV2", LEGACY_TYPE_NAME))
        finally:
            self.checksum = saved

    def marshal_checkpoint(self) -> bytes:
        """Set the v2 checksum (over podEntries too) and return json.Marshal of the struct."""
        self.checksum = 0
        self.checksum = self.computed_checksum()
        return gojson.marshal(self, V2_STRUCT)

    def unmarshal_checkpoint(self, blob: bytes) -> None:
        """json.Unmarshal into this pre-initialised struct."""
        gojson.unmarshal(blob, self, V2_STRUCT)

    def verify_checksum(self) -> None:
        """Strict: a stored 0 is refused like any other wrong value."""
        actual = self.computed_checksum()
        if actual != self.checksum:
            raise CorruptCheckpointError(actual, self.checksum)


@dataclass
class CheckpointData:
    """MemoryManagerCheckpointData: the content of a v3 file's `data` string."""

    policy_name: str = ""
    machine_state: Optional[NUMANodeMap] = field(default_factory=dict)
    entries: Optional[ContainerMemoryAssignments] = field(default_factory=dict)
    pod_entries: Optional[PodMemoryAssignments] = field(default_factory=dict)


@dataclass
class CheckpointV3:
    """MemoryManagerCheckpoint (v3): embedded v1 fields, `data`, `dataChecksum`, and the
    decoded data (`checkpoint_data`, not serialised directly)."""

    policy_name: str = ""
    machine_state: Optional[NUMANodeMap] = field(default_factory=dict)
    entries: Optional[ContainerMemoryAssignments] = field(default_factory=dict)
    checksum: int = 0
    data: str = ""
    data_checksum: int = 0
    checkpoint_data: CheckpointData = field(default_factory=CheckpointData)

    def embedded_v1(self) -> CheckpointV1:
        """The v1 fields kept for older kubelets, as a v1 checkpoint."""
        return CheckpointV1(self.policy_name, self.machine_state, self.entries, self.checksum)

    def marshal_checkpoint(self) -> bytes:
        """Serialise the data, checksum it, fill the v1 fields with a v1-compatible checksum; marshal."""
        self.data = gojson.marshal(self.checkpoint_data, DATA_STRUCT).decode("utf-8", "surrogatepass")
        self.data_checksum = string_checksum(self.data)
        self.policy_name = self.checkpoint_data.policy_name
        self.machine_state = self.checkpoint_data.machine_state
        self.entries = self.checkpoint_data.entries
        self.checksum = 0
        self.checksum = self.embedded_v1().legacy_checksum()
        return gojson.marshal(self, V3_STRUCT)

    def unmarshal_checkpoint(self, blob: bytes) -> None:
        """Decode the file, then its `data` string (before any checksum is checked)."""
        try:
            gojson.unmarshal(blob, self, V3_STRUCT)
        except gojson.GoJSONError as err:
            raise WrappedCheckpointError("failed to deserialize memory manager checkpoint", err) from err
        try:
            gojson.unmarshal(self.data.encode("utf-8", "surrogatepass"), self.checkpoint_data, DATA_STRUCT)
        except gojson.GoJSONError as err:
            raise WrappedCheckpointError("failed to deserialize memory manager checkpoint data", err) from err

    def verify_checksum(self) -> None:
        """Check `dataChecksum` over the `data` string (0 is not special)."""
        actual = string_checksum(self.data)
        if actual != self.data_checksum:
            raise CorruptCheckpointError(actual, self.data_checksum)


def _v1_fields(embedded: Optional[str] = None) -> tuple[GoField, ...]:
    """The four v1 fields in declaration order (`embedded`: promoted from MemoryManagerCheckpointV1)."""
    return (
        GoField("PolicyName", "policyName", "policy_name", STRING, embedded=embedded),
        GoField("MachineState", "machineState", "machine_state", NUMA_NODE_MAP, embedded=embedded),
        GoField("Entries", "entries", "entries", CONTAINER_MEMORY_ASSIGNMENTS, omitempty=True, embedded=embedded),
        GoField("Checksum", "checksum", "checksum", CHECKSUM, embedded=embedded),
    )


V1_STRUCT = GoStruct("state.MemoryManagerCheckpointV1", _v1_fields(), CheckpointV1)
V2_STRUCT = GoStruct(
    "state.MemoryManagerCheckpointV2",
    _v1_fields()[:3]
    + (GoField("PodEntries", "podEntries", "pod_entries", POD_MEMORY_ASSIGNMENTS, omitempty=True),)
    + _v1_fields()[3:],
    CheckpointV2,
)
DATA_STRUCT = GoStruct(
    "state.MemoryManagerCheckpointData",
    _v1_fields()[:3] + (GoField("PodEntries", "podEntries", "pod_entries", POD_MEMORY_ASSIGNMENTS, omitempty=True),),
    CheckpointData,
)
V3_STRUCT = GoStruct(
    "state.MemoryManagerCheckpoint",
    _v1_fields("MemoryManagerCheckpointV1")
    + (
        GoField("Data", "data", "data", STRING),
        GoField("DataChecksum", "dataChecksum", "data_checksum", CHECKSUM),
        GoField("CheckpointData", "-", "checkpoint_data", DATA_STRUCT, json=False),
    ),
    CheckpointV3,
)


# --------------------------------------------------------------------------------------
# reading and writing whole files


@dataclass
class LoadedCheckpoint:
    """What the v1.37 loader restores, and which format it came through (v1, v2 or v3)."""

    format: str
    policy_name: str
    machine_state: Optional[NUMANodeMap]
    entries: Optional[ContainerMemoryAssignments]
    pod_entries: Optional[PodMemoryAssignments]


def load_v1(blob: bytes) -> CheckpointV1:
    """Unmarshal and verify as v1 (loadCheckpointV1)."""
    cp = CheckpointV1()
    cp.unmarshal_checkpoint(blob)
    cp.verify_checksum()
    return cp


def load_v2(blob: bytes) -> LoadedCheckpoint:
    """loadAndMigrateCheckpointV2: v2, else v1 migrated (no pod entries)."""
    cp = CheckpointV2()
    try:
        cp.unmarshal_checkpoint(blob)
        cp.verify_checksum()
        return LoadedCheckpoint("v2", cp.policy_name, cp.machine_state, cp.entries, cp.pod_entries)
    except (gojson.GoJSONError, CheckpointError):
        pass
    v1 = load_v1(blob)
    return LoadedCheckpoint(
        "v1", v1.policy_name, clone_go_machine_state(v1.machine_state), clone_go_assignments(v1.entries), {}
    )


def read_checkpoint(blob: bytes) -> LoadedCheckpoint:
    """loadAndMigrateCheckpointV3 over the file's bytes.

    A file that looks like v3 (non-empty `data` or non-zero `dataChecksum`) must load as v3,
    else `could not load v3 checkpoint: ...`; any other file falls back to v2 and then v1,
    and the v1 error is the one reported. Raises CheckpointError or gojson.GoJSONError.
    """
    cp = CheckpointV3()
    try:
        cp.unmarshal_checkpoint(blob)
        cp.verify_checksum()
    except (gojson.GoJSONError, CheckpointError) as err:
        if cp.data or cp.data_checksum != 0:
            raise WrappedCheckpointError("could not load v3 checkpoint", err) from err
        v2 = load_v2(blob)
        v2.machine_state = clone_go_machine_state(v2.machine_state)
        v2.entries = clone_go_assignments(v2.entries)
        v2.pod_entries = dict(v2.pod_entries or {})
        return v2
    data = cp.checkpoint_data
    return LoadedCheckpoint("v3", data.policy_name, data.machine_state, data.entries, data.pod_entries)


# --------------------------------------------------------------------------------------
# Go's Clone helpers used by the migrations (nil maps become empty, nil cells become [])


def clone_go_machine_state(ms: Optional[NUMANodeMap]) -> NUMANodeMap:
    """NUMANodeMap.Clone(): a nil map becomes empty; nil nodes and nil memory maps stay nil."""
    return clone_machine_state(ms)


def clone_go_assignments(a: Optional[ContainerMemoryAssignments]) -> ContainerMemoryAssignments:
    """ContainerMemoryAssignments.Clone(): nil inner maps become {}, nil block lists []."""
    return clone_assignments(a)
