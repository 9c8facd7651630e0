"""The memory manager checkpoint file: its three formats, their bytes, their checksums.

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
v1.37 loader's v3 -> v2 -> v1 fallback; `encode_checkpoint` writes any of the formats.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Optional

from kubeinputs import gojson
from kubeinputs.checksum import FNVMemo, checksum_of, fnv32a, string_checksum
from kubeinputs.gotypes import CHECKSUM, STRING, GoField, GoPtr, GoStruct
from state.go_descriptors import BLOCKS, CONTAINER_MEMORY_ASSIGNMENTS, NUMA_NODE_MAP, POD_MEMORY_ASSIGNMENTS
from state.types import (
    Block,
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


class CheckpointError(Exception):
    """A checkpoint that cannot be loaded; str() is kubelet's error text."""


class CorruptCheckpointError(CheckpointError):
    """errors.CorruptCheckpointError: the stored checksum does not match the content."""

    def __init__(self, actual: int = 0, expected: int = 0):
        """Keep the checksums for the report."""
        super().__init__("checkpoint is corrupted")
        self.actual, self.expected = actual, expected


class CheckpointNotFoundError(CheckpointError):
    """errors.ErrCheckpointNotFound."""

    def __init__(self) -> None:
        """Keep the checksums for the report."""
        super().__init__("checkpoint is not found")


class WrappedCheckpointError(CheckpointError):
    """An error wrapped with a prefix (Go's fmt.Errorf("...: %w", err))."""

    def __init__(self, prefix: str, cause: Exception):
        """Keep the checksums for the report."""
        super().__init__(f"{prefix}: {cause}")
        self.cause = cause


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


def encode_checkpoint(
    policy_name: str,
    machine_state: Optional[NUMANodeMap],
    entries: Optional[ContainerMemoryAssignments],
    pod_entries: Optional[PodMemoryAssignments] = None,
    fmt: str = DEFAULT_WRITE_FORMAT,
    memo: Optional[FNVMemo] = None,
) -> bytes:
    """The bytes kubelet writes for this content in format `fmt` (v1 drops pod entries).

    Built directly from the known state types (see "the direct writer" below): byte for
    byte what encode_checkpoint_generic, the Go-typed codec, writes. The texts are built
    in pieces (one per NUMA node, one per pod); `memo`, kept by a store between writes,
    makes the checksums of pieces seen before O(1). Cost: O(size of the file), the
    checksums O(size of the changed pieces) with a warm memo.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown checkpoint format {fmt!r}: expected one of {', '.join(FORMATS)}")

    def checksum(pieces: list[str]) -> int:
        """FNV-1a of the joined pieces, through the memo when there is one."""
        if memo is not None:
            return memo.checksum(pieces)
        return fnv32a("".join(pieces).encode(*_UTF8))

    json_pieces = ['{"policyName":' + gojson.encode_string(policy_name) + ',"machineState":']
    _json_machine_state(machine_state, json_pieces)
    if entries:
        json_pieces.append(',"entries":')
        _json_assignments(entries, json_pieces)
    spew_pieces = ["(*state." + LEGACY_TYPE_NAME + "){PolicyName:(string)" + policy_name + " MachineState:"]
    nil_last = _spew_machine_state(machine_state, spew_pieces)
    spew_pieces.append(" Entries:")
    _spew_assignments(entries, nil_last, spew_pieces)
    pods = pod_entries if pod_entries is not None else {}
    if fmt == "v2":
        spew_pieces.append(" PodEntries:")
        _spew_pod_assignments(pods, spew_pieces)
    spew_pieces.append(" Checksum:(checksum.Checksum)0}")
    legacy = checksum(spew_pieces)
    if fmt == "v1":
        return ("".join(json_pieces) + ',"checksum":' + str(legacy) + "}").encode(*_UTF8)
    head_count = len(json_pieces)  # the v1 fields, which a v3 file repeats outside `data`
    if pods:
        json_pieces.append(',"podEntries":')
        _json_pod_assignments(pods, json_pieces)
    if fmt == "v2":
        return ("".join(json_pieces) + ',"checksum":' + str(legacy) + "}").encode(*_UTF8)
    data_checksum = checksum(["(string)", *json_pieces, "}"])
    head = "".join(json_pieces[:head_count])
    data = head + "".join(json_pieces[head_count:]) + "}"
    return (
        head + ',"checksum":' + str(legacy) + ',"data":' + gojson.encode_string(data)
        + ',"dataChecksum":' + str(data_checksum) + "}"
    ).encode(*_UTF8)


def encode_checkpoint_generic(
    policy_name: str,
    machine_state: Optional[NUMANodeMap],
    entries: Optional[ContainerMemoryAssignments],
    pod_entries: Optional[PodMemoryAssignments] = None,
    fmt: str = DEFAULT_WRITE_FORMAT,
) -> bytes:
    """encode_checkpoint through the checkpoint structs' marshal_checkpoint (the generic
    Go-typed JSON codec and go-spew printer): the oracle of the direct writer.
    Cost: O(size of the file), with a large constant."""
    if fmt == "v1":
        return CheckpointV1(policy_name, machine_state, entries).marshal_checkpoint()
    if fmt == "v2":
        return CheckpointV2(policy_name, machine_state, entries, pod_entries if pod_entries is not None else {}).marshal_checkpoint()
    if fmt == "v3":
        data = CheckpointData(policy_name, machine_state, entries, pod_entries if pod_entries is not None else {})
        return CheckpointV3(checkpoint_data=data).marshal_checkpoint()
    raise ValueError(f"unknown checkpoint format {fmt!r}: expected one of {', '.join(FORMATS)}")


# --------------------------------------------------------------------------------------
# the direct writer: the checkpoint's JSON and go-spew texts for the known state types
#
# Each function writes what gojson.marshal / checksum.spew write for its Go type (see
# gotypes.py), without walking type descriptors. JSON map keys are sorted by their text and
# go-spew's string keys by theirs (UTF-8 byte order is code point order, which is Python's
# string order); go-spew's NUMA ids are sorted as integers.

_UTF8 = ("utf-8", "surrogatepass")


def _by_text(mapping: dict) -> list[tuple[str, object]]:
    """(key text, value) in encoding/json's key order. Cost: O(k log k)."""
    items = list(mapping.items())
    if not all(type(k) is str for k in mapping):
        items = [(str(k), v) for k, v in items]
    items.sort(key=itemgetter(0))
    return items


def _json_ints(values: Optional[list[int]]) -> str:
    """A []int (nil: null). Cost: O(len)."""
    if values is None:
        return "null"
    return "[" + ",".join([str(int(v)) for v in values]) + "]"


def _json_node(node) -> str:
    """A *NUMANodeState (nil: null). Cost: O(tables + cells)."""
    if node is None:
        return "null"
    memory_map = node.memory_map
    if memory_map is None:
        tables = "null"
    else:
        parts = []
        for name, t in _by_text(memory_map):
            if t is None:
                parts.append(gojson.encode_string(name) + ":null")
            else:
                parts.append(
                    f'{gojson.encode_string(name)}:{{"total":{int(t.total_mem_size)},'
                    f'"systemReserved":{int(t.system_reserved)},"allocatable":{int(t.allocatable)},'
                    f'"reserved":{int(t.reserved)},"free":{int(t.free)}}}'
                )
        tables = "{" + ",".join(parts) + "}"
    return (
        '{"numberOfAssignments":' + str(int(node.number_of_assignments)) + ',"memoryMap":' + tables
        + ',"cells":' + _json_ints(node.cells) + "}"
    )


def _json_machine_state(machine_state: Optional[NUMANodeMap], out: list[str]) -> None:
    """A NUMANodeMap (nil: null), one piece per node. Cost: O(nodes * tables)."""
    if machine_state is None:
        out.append("null")
        return
    separator = "{"
    for key, node in _by_text(machine_state):
        out.append(separator + gojson.encode_string(key) + ":")
        out.append(_json_node(node))
        separator = ","
    out.append("}" if separator == "," else "{}")


def _json_blocks(blocks: Optional[list[Block]]) -> str:
    """A []Block (nil: null). Cost: O(blocks)."""
    if blocks is None:
        return "null"
    return "[" + ",".join([
        '{"numaAffinity":' + _json_ints(b.numa_affinity) + ',"type":' + gojson.encode_string(b.type)
        + ',"size":' + str(int(b.size)) + "}"
        for b in blocks
    ]) + "]"


def _json_assignments(entries: Optional[ContainerMemoryAssignments], out: list[str]) -> None:
    """A ContainerMemoryAssignments (nil: null), one piece per pod. Cost: O(blocks)."""
    if entries is None:
        out.append("null")
        return
    separator = "{"
    for pod, containers in _by_text(entries):
        out.append(separator + gojson.encode_string(pod) + ":")
        if containers is None:
            out.append("null")
        else:
            out.append("{" + ",".join([gojson.encode_string(c) + ":" + _json_blocks(b) for c, b in _by_text(containers)]) + "}")
        separator = ","
    out.append("}" if separator == "," else "{}")


def _json_pod_assignments(pod_entries: Optional[PodMemoryAssignments], out: list[str]) -> None:
    """A PodMemoryAssignments (nil: null); `memoryBlocks` is omitempty. Cost: O(blocks)."""
    if pod_entries is None:
        out.append("null")
        return
    separator = "{"
    for pod, entry in _by_text(pod_entries):
        blocks = entry.memory_blocks
        out.append(separator + gojson.encode_string(pod) + ":")
        out.append('{"memoryBlocks":' + _json_blocks(blocks) + "}" if blocks else "{}")
        separator = ","
    out.append("}" if separator == "," else "{}")


def _spew_ints(values: Optional[list[int]]) -> str:
    """The elements of a []int after its type: `[1 2]` or `<nil>`. Cost: O(len)."""
    if values is None:
        return "<nil>"
    return "[" + " ".join([str(int(v)) for v in values]) + "]"


def _spew_node(node) -> str:
    """A non-nil *NUMANodeState as a map element: `<*>{...}`. Cost: O(tables + cells)."""
    memory_map = node.memory_map
    nil_last = False  # a nil table printed last leaves go-spew's omit-type flag set
    if memory_map is None:
        tables = "<nil>"
    else:
        parts = []
        for name in sorted(memory_map):
            t = memory_map[name]
            if t is None:
                parts.append(name + ":<nil>")
                nil_last = True
            else:
                parts.append(
                    f"{name}:<*>{{TotalMemSize:(uint64){int(t.total_mem_size)} "
                    f"SystemReserved:(uint64){int(t.system_reserved)} Allocatable:(uint64){int(t.allocatable)} "
                    f"Reserved:(uint64){int(t.reserved)} Free:(uint64){int(t.free)}}}"
                )
                nil_last = False
        tables = "map[" + " ".join(parts) + "]"
    return (
        "<*>{NumberOfAssignments:(int)" + str(int(node.number_of_assignments))
        + " MemoryMap:(map[v1.ResourceName]*state.MemoryTable)" + tables
        + (" Cells:" if nil_last else " Cells:([]int)") + _spew_ints(node.cells) + "}"
    )


def _spew_machine_state(machine_state: Optional[NUMANodeMap], out: list[str]) -> bool:
    """The MachineState field's value, one piece per node; True when it ends with a nil node
    (go-spew then omits the next field's type). Cost: O(nodes * tables)."""
    if machine_state is None:
        out.append("(state.NUMANodeMap)<nil>")
        return False
    separator = "(state.NUMANodeMap)map["
    nil_last = False
    for node_id in sorted(machine_state):
        node = machine_state[node_id]
        out.append(separator + str(int(node_id)) + ":")
        out.append("<nil>" if node is None else _spew_node(node))
        nil_last = node is None
        separator = " "
    out.append("]" if separator == " " else "(state.NUMANodeMap)map[]")
    return nil_last


def _spew_blocks(blocks: Optional[list[Block]]) -> str:
    """The elements of a []Block after its type. Cost: O(blocks)."""
    if blocks is None:
        return "<nil>"
    return "[" + " ".join([
        "{NUMAAffinity:([]int)" + _spew_ints(b.numa_affinity) + " Type:(v1.ResourceName)" + b.type
        + " Size:(uint64)" + str(int(b.size)) + "}"
        for b in blocks
    ]) + "]"


def _spew_assignments(entries: Optional[ContainerMemoryAssignments], omit_type: bool, out: list[str]) -> None:
    """The Entries field's value (its type omitted after a trailing nil node), one piece per pod.
    Cost: O(blocks)."""
    kind = "" if omit_type else "(state.ContainerMemoryAssignments)"
    if entries is None:
        out.append(kind + "<nil>")
        return
    separator = kind + "map["
    for pod in sorted(entries):
        containers = entries[pod]
        out.append(separator + pod + ":")
        if containers is None:
            out.append("<nil>")
        else:
            out.append("map[" + " ".join([c + ":" + _spew_blocks(containers[c]) for c in sorted(containers)]) + "]")
        separator = " "
    out.append("]" if separator == " " else kind + "map[]")


def _spew_pod_assignments(pod_entries: Optional[PodMemoryAssignments], out: list[str]) -> None:
    """The PodEntries field's value, one piece per pod. Cost: O(blocks)."""
    if pod_entries is None:
        out.append("(state.PodMemoryAssignments)<nil>")
        return
    separator = "(state.PodMemoryAssignments)map["
    for pod in sorted(pod_entries):
        out.append(separator + pod + ":")
        out.append("{MemoryBlocks:([]state.Block)" + _spew_blocks(pod_entries[pod].memory_blocks) + "}")
        separator = " "
    out.append("]" if separator == " " else "(state.PodMemoryAssignments)map[]")


# --------------------------------------------------------------------------------------
# Go's Clone helpers used by the migrations (nil maps become empty, nil cells become [])


def clone_go_machine_state(ms: Optional[NUMANodeMap]) -> NUMANodeMap:
    """NUMANodeMap.Clone(): a nil map becomes empty; nil nodes and nil memory maps stay nil."""
    return clone_machine_state(ms)


def clone_go_assignments(a: Optional[ContainerMemoryAssignments]) -> ContainerMemoryAssignments:
    """ContainerMemoryAssignments.Clone(): nil inner maps become {}, nil block lists []."""
    return clone_assignments(a)


# --------------------------------------------------------------------------------------
# JSON-shaped views (the runner compares expectations with these)


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
