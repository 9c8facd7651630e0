"""The `cpu_manager_state` checkpoint: its four formats and the v1.37 loader (kubelet's cpumanager/state/checkpoint.go).

* v1 `CPUManagerCheckpointV1` {policyName, defaultCpuSet, entries (container ID -> cpuset), checksum}:
  kubelet up to 1.17. The v1.37 loader no longer reads it (entries must be keyed by pod).
* v2 `CPUManagerCheckpointV2` {policyName, defaultCpuSet, entries (pod -> container -> cpuset),
  checksum}: kubelet 1.18 to 1.35.
* v3 `CPUManagerCheckpointV3` = v2 + podEntries (pod -> {"cpuSet": cpuset}) before the checksum:
  1.36 with the PodLevelResourceManagers gate.
* v4 `CPUManagerCheckpoint` (1.37): the v3 fields inline with checksum 0 (v2 readers accept 0, so
  older kubelets can still read the file), plus `data` (a JSON string of {policyName,
  defaultCpuSet, entries, podEntries}) and `dataChecksum`, the checksum that counts.

Checksums are FNV-1a 32 over go-spew (kubeinputs.checksum). A v1/v2 file carries the checksum of
the struct hashed under its legacy name `state.CPUManagerCheckpoint`; v2 also accepts the hash
under its own name when the PodLevelResourceManagers gate is off, and v3 accepts both names. v1
and v2 accept a stored 0 unchecked, v3 does not. Pod entries hash as kubelet's `cpuset.CPUSet`
struct: `{CPUSet:(cpuset.CPUSet){elems:(map[int]struct {})map[0:{} 1:{}]}}`.

`read_checkpoint` is loadAndMigrateCheckpointV4: v4; a file that looks like v4 (non-empty `data`
or non-zero `dataChecksum`) must load as v4, else `could not load v4 checkpoint: ...`; anything
else falls back to v3, then v2, and the v2 error is the one reported.

One approximation: a pod entry kubelet decodes with its own UnmarshalJSON; a malformed entry
(`"cpuSet": 5`) is reported here as a type error of the file's struct rather than of kubelet's
private `podEntryJSON`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from kubeinputs import gojson
from kubeinputs.checksum import checksum_of, string_checksum
from kubeinputs.cpuset import CPUSet, CPUSetError
from kubeinputs.gotypes import CHECKSUM, INT, STRING, GoField, GoMap, GoPtr, GoStruct
from state.checkpoint_errors import CheckpointError, CorruptCheckpointError, WrappedCheckpointError

FORMATS = ("v2", "v3", "v4")
# kubelet v1.37 writes v4 whatever the gates say (storeState always uses newCPUManagerCheckpoint()).
DEFAULT_WRITE_FORMAT = "v4"
LEGACY_TYPE_NAME = "CPUManagerCheckpoint"

Entries = dict[str, dict[str, str]]
"""pod UID -> container name -> cpuset string, as stored."""

PodEntries = dict[str, CPUSet]
"""pod UID -> pod-level cpuset (decoded)."""


# --------------------------------------------------------------------------------------
# the pod entry: a struct holding a cpuset, stored as {"cpuSet": "0-3"}


@dataclass
class PodEntryJSON:
    """kubelet's podEntryJSON: the JSON form of a pod entry."""

    cpu_set: str = ""


PodEntryValues = dict[str, Union[PodEntryJSON, CPUSet]]
"""pod UID -> pod entry: as decoded from JSON (PodEntryJSON) or, when built for writing, a CPUSet."""


@dataclass
class _Empty:
    """Go's struct{} (a set element)."""


@dataclass
class _CPUSetStruct:
    """kubelet's cpuset.CPUSet as go-spew sees it: a map of ids to struct{}."""

    elems: Optional[dict[int, _Empty]] = None


@dataclass
class _PodEntrySpew:
    """kubelet's PodEntry as go-spew sees it."""

    cpu_set: _CPUSetStruct = field(default_factory=_CPUSetStruct)


POD_ENTRY_JSON = GoStruct("state.podEntryJSON", (GoField("CPUSet", "cpuSet", "cpu_set", STRING, omitempty=True),),
                          PodEntryJSON)
EMPTY_STRUCT = GoStruct("struct {}", (), _Empty)
CPUSET_STRUCT = GoStruct("cpuset.CPUSet", (GoField("elems", "-", "elems", GoMap(INT, EMPTY_STRUCT), json=False),),
                         _CPUSetStruct)
POD_ENTRY_SPEW = GoStruct("state.PodEntry", (GoField("CPUSet", "cpuSet", "cpu_set", CPUSET_STRUCT),), _PodEntrySpew)

ENTRIES_V1 = GoMap(STRING, STRING)
ENTRIES_V2 = GoMap(STRING, GoMap(STRING, STRING))
POD_ENTRIES_JSON = GoMap(STRING, POD_ENTRY_JSON, "state.PodCPUAssignments")
POD_ENTRIES_SPEW = GoMap(STRING, POD_ENTRY_SPEW, "state.PodCPUAssignments")


def _spew_pod_entries(pod_entries: Optional[PodEntryValues]) -> Optional[dict[str, _PodEntrySpew]]:
    """Pod entries (PodEntryJSON or CPUSet values) in kubelet's in-memory shape, for the checksum."""
    if pod_entries is None:
        return None
    result = {}
    for pod, entry in pod_entries.items():
        cpus = entry if isinstance(entry, CPUSet) else _parse_pod_cpuset(entry)
        result[pod] = _PodEntrySpew(_CPUSetStruct({cpu: _Empty() for cpu in cpus}))
    return result


def _parse_pod_cpuset(entry: Union[PodEntryJSON, CPUSet]) -> CPUSet:
    """A pod entry's cpuset (PodEntry.UnmarshalJSON): `failed to parse cpuset: <err>` when invalid."""
    text = entry.cpu_set if isinstance(entry, PodEntryJSON) else ""
    try:
        return CPUSet.parse(text)
    except CPUSetError as err:
        raise CheckpointError(f"failed to parse cpuset: {err}") from None


def _decode_pod_entries(raw: Optional[PodEntryValues]) -> Optional[PodEntries]:
    """Decoded pod entries as CPUSets (None stays None)."""
    if raw is None:
        return None
    return {pod: _parse_pod_cpuset(entry) for pod, entry in raw.items()}


def _pod_entries_json(pod_entries: Optional[PodEntries]) -> Optional[dict[str, PodEntryJSON]]:
    """Pod entries in their JSON shape (for marshalling)."""
    if pod_entries is None:
        return None
    return {pod: PodEntryJSON(str(cpus)) for pod, cpus in pod_entries.items()}


# --------------------------------------------------------------------------------------
# the checkpoint structs


def _checksum(struct: GoStruct, value: Any, own_name: Optional[str]) -> int:
    """checksum.New of a pointer to `value`, hashed under the legacy type name when `own_name` is given."""
    rename = (own_name, LEGACY_TYPE_NAME) if own_name else None
    return checksum_of(value, GoPtr(struct), rename)


@dataclass
class CheckpointV1:
    """CPUManagerCheckpointV1 (pre-initialised like newCPUManagerCheckpointV1)."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: Optional[dict[str, str]] = field(default_factory=dict)
    checksum: int = 0

    def computed_checksum(self) -> int:
        """The checksum of the content, under the legacy type name."""
        saved, self.checksum = self.checksum, 0
        try:
            return _checksum(V1_STRUCT, self, "CPUManagerCheckpointV1")
        finally:
            self.checksum = saved

    def marshal_checkpoint(self) -> bytes:
        """MarshalCheckpoint."""
        self.checksum = 0
        self.checksum = _checksum(V1_STRUCT, self, None)
        return gojson.marshal(self, V1_STRUCT)

    def verify_checksum(self) -> None:
        """VerifyChecksum: a stored 0 passes; else the legacy-named hash must match."""
        if self.checksum == 0:
            return
        actual = self.computed_checksum()
        if actual != self.checksum:
            raise CorruptCheckpointError(actual, self.checksum)


@dataclass
class CheckpointV2:
    """CPUManagerCheckpointV2 (pre-initialised like newCPUManagerCheckpointV2)."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: Optional[Entries] = field(default_factory=dict)
    checksum: int = 0

    def _hash(self, own_name: Optional[str]) -> int:
        saved, self.checksum = self.checksum, 0
        try:
            return _checksum(V2_STRUCT, self, own_name)
        finally:
            self.checksum = saved

    def marshal_checkpoint(self) -> bytes:
        """MarshalCheckpoint: hashed under the legacy name (older kubelets check that one)."""
        self.checksum = 0
        self.checksum = self._hash("CPUManagerCheckpointV2")
        return gojson.marshal(self, V2_STRUCT)

    def verify_checksum(self, pod_level_resource_managers: bool = False) -> None:
        """VerifyChecksum: a stored 0 passes; the hash under its own name (gate off only) or the legacy name."""
        if self.checksum == 0:
            return
        if not pod_level_resource_managers and self._hash(None) == self.checksum:
            return
        actual = self._hash("CPUManagerCheckpointV2")
        if actual != self.checksum:
            raise CorruptCheckpointError(actual, self.checksum)


@dataclass
class CheckpointV3:
    """CPUManagerCheckpointV3 (pre-initialised like newCPUManagerCheckpointV3). `pod_entries` holds the
    decoded JSON entries (PodEntryJSON) or, when built for writing, CPUSets."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: Optional[Entries] = field(default_factory=dict)
    pod_entries: Optional[PodEntryValues] = field(default_factory=dict)
    checksum: int = 0

    def _hash(self, own_name: Optional[str]) -> int:
        shadow = _V3Spew(self.policy_name, self.default_cpu_set, self.entries, _spew_pod_entries(self.pod_entries), 0)
        return _checksum(V3_SPEW_STRUCT, shadow, own_name)

    def marshal_checkpoint(self) -> bytes:
        """MarshalCheckpoint: hashed under the legacy name."""
        self.checksum = self._hash("CPUManagerCheckpointV3")
        view = CheckpointV3(self.policy_name, self.default_cpu_set, self.entries,
                            _pod_entries_json(self.pod_entries) if self.pod_entries else self.pod_entries,
                            self.checksum)
        return gojson.marshal(view, V3_STRUCT)

    def verify_checksum(self) -> None:
        """VerifyChecksum: the hash under its own name or under the legacy name (0 is not special)."""
        if self._hash(None) == self.checksum:
            return
        actual = self._hash("CPUManagerCheckpointV3")
        if actual != self.checksum:
            raise CorruptCheckpointError(actual, self.checksum)


@dataclass
class _V3Spew:
    """A v3 checkpoint with its pod entries in kubelet's in-memory shape (for the checksum)."""

    policy_name: str
    default_cpu_set: str
    entries: Optional[Entries]
    pod_entries: Optional[dict[str, _PodEntrySpew]]
    checksum: int


@dataclass
class CheckpointData:
    """CPUManagerCheckpointData: the content of a v4 file's `data` string."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: Optional[Entries] = field(default_factory=dict)
    pod_entries: Optional[PodEntryValues] = field(default_factory=dict)


@dataclass
class CheckpointV4:
    """CPUManagerCheckpoint (v4): the v3 fields inline, `data`, `dataChecksum`, and the decoded data."""

    policy_name: str = ""
    default_cpu_set: str = ""
    entries: Optional[Entries] = field(default_factory=dict)
    pod_entries: Optional[PodEntryValues] = field(default_factory=dict)
    checksum: int = 0
    data: str = ""
    data_checksum: int = 0
    checkpoint_data: CheckpointData = field(default_factory=CheckpointData)

    def marshal_checkpoint(self) -> bytes:
        """MarshalCheckpoint: serialise the data, checksum it, copy it to the inline fields (checksum 0)."""
        data = self.checkpoint_data
        json_data = CheckpointData(data.policy_name, data.default_cpu_set, data.entries,
                                   _pod_entries_json(data.pod_entries) if data.pod_entries else data.pod_entries)
        self.data = gojson.marshal(json_data, DATA_STRUCT).decode("utf-8", "surrogatepass")
        self.data_checksum = string_checksum(self.data)
        self.policy_name, self.default_cpu_set = data.policy_name, data.default_cpu_set
        self.entries, self.pod_entries = data.entries, json_data.pod_entries
        self.checksum = 0
        return gojson.marshal(self, V4_STRUCT)

    def unmarshal_checkpoint(self, blob: bytes) -> None:
        """Decode the file, then its `data` string (before any checksum is checked)."""
        try:
            gojson.unmarshal(blob, self, V4_STRUCT)
            self.pod_entries = _decode_pod_entries(self.pod_entries)
        except (gojson.GoJSONError, CheckpointError) as err:
            raise WrappedCheckpointError("failed to deserialize cpu manager checkpoint", err) from err
        try:
            gojson.unmarshal(self.data.encode("utf-8", "surrogatepass"), self.checkpoint_data, DATA_STRUCT)
            self.checkpoint_data.pod_entries = _decode_pod_entries(self.checkpoint_data.pod_entries)
        except (gojson.GoJSONError, CheckpointError) as err:
            raise WrappedCheckpointError("failed to deserialize cpu manager checkpoint data", err) from err

    def verify_checksum(self) -> None:
        """`dataChecksum` over `data` (0 is not special)."""
        actual = string_checksum(self.data)
        if actual != self.data_checksum:
            raise CorruptCheckpointError(actual, self.data_checksum)


def _fields(*names: str, embedded: Optional[str] = None, entries=ENTRIES_V2, pod_entries=POD_ENTRIES_JSON
            ) -> tuple[GoField, ...]:
    """The named fields in declaration order (`embedded`: promoted from CPUManagerCheckpointV3)."""
    known = {
        "PolicyName": GoField("PolicyName", "policyName", "policy_name", STRING, embedded=embedded),
        "DefaultCPUSet": GoField("DefaultCPUSet", "defaultCpuSet", "default_cpu_set", STRING, embedded=embedded),
        "Entries": GoField("Entries", "entries", "entries", entries, omitempty=True, embedded=embedded),
        "PodEntries": GoField("PodEntries", "podEntries", "pod_entries", pod_entries, omitempty=True,
                              embedded=embedded),
        "Checksum": GoField("Checksum", "checksum", "checksum", CHECKSUM, embedded=embedded),
    }
    return tuple(known[n] for n in names)


V1_STRUCT = GoStruct("state.CPUManagerCheckpointV1",
                     _fields("PolicyName", "DefaultCPUSet", "Entries", "Checksum", entries=ENTRIES_V1), CheckpointV1)
V2_STRUCT = GoStruct("state.CPUManagerCheckpointV2", _fields("PolicyName", "DefaultCPUSet", "Entries", "Checksum"),
                     CheckpointV2)
V3_STRUCT = GoStruct("state.CPUManagerCheckpointV3",
                     _fields("PolicyName", "DefaultCPUSet", "Entries", "PodEntries", "Checksum"), CheckpointV3)
V3_SPEW_STRUCT = GoStruct("state.CPUManagerCheckpointV3",
                          _fields("PolicyName", "DefaultCPUSet", "Entries", "PodEntries", "Checksum",
                                  pod_entries=POD_ENTRIES_SPEW), _V3Spew)
DATA_STRUCT = GoStruct("state.CPUManagerCheckpointData",
                       _fields("PolicyName", "DefaultCPUSet", "Entries", "PodEntries"), CheckpointData)
V4_STRUCT = GoStruct(
    "state.CPUManagerCheckpoint",
    _fields("PolicyName", "DefaultCPUSet", "Entries", "PodEntries", "Checksum", embedded="CPUManagerCheckpointV3")
    + (
        GoField("Data", "data", "data", STRING),
        GoField("DataChecksum", "dataChecksum", "data_checksum", CHECKSUM),
        GoField("CheckpointData", "-", "checkpoint_data", DATA_STRUCT, json=False),
    ),
    CheckpointV4,
)


# --------------------------------------------------------------------------------------
# reading and writing whole files


@dataclass
class LoadedCheckpoint:
    """What the v1.37 loader restores, and which format it came through (v2, v3 or v4)."""

    format: str
    policy_name: str
    default_cpu_set: str
    entries: Entries
    pod_entries: PodEntries


def _load_v2(blob: bytes, pod_level_resource_managers: bool) -> CheckpointV2:
    """loadCheckpointV2 (the oldest format the v1.37 loader reads)."""
    cp = CheckpointV2()
    gojson.unmarshal(blob, cp, V2_STRUCT)
    cp.verify_checksum(pod_level_resource_managers)
    return cp


def _load_v3(blob: bytes, pod_level_resource_managers: bool) -> LoadedCheckpoint:
    """loadAndMigrateCheckpointV3: v3, else v2 migrated (no pod entries)."""
    cp = CheckpointV3()
    try:
        gojson.unmarshal(blob, cp, V3_STRUCT)
        cp.pod_entries = _decode_pod_entries(cp.pod_entries)
        cp.verify_checksum()
        return LoadedCheckpoint("v3", cp.policy_name, cp.default_cpu_set, _entries(cp.entries),
                                dict(cp.pod_entries or {}))
    except (gojson.GoJSONError, CheckpointError):
        pass
    v2 = _load_v2(blob, pod_level_resource_managers)
    return LoadedCheckpoint("v2", v2.policy_name, v2.default_cpu_set, _entries(v2.entries), {})


def _entries(entries: Optional[Entries]) -> Entries:
    """A copy, nil maps as empty (the migrations copy only non-empty maps)."""
    return {pod: dict(containers or {}) for pod, containers in (entries or {}).items()}


def read_checkpoint(blob: bytes, pod_level_resource_managers: bool = False) -> LoadedCheckpoint:
    """loadAndMigrateCheckpointV4 over the file's bytes; raises CheckpointError or gojson.GoJSONError
    (WorkLimitError for a cpuset past the simulator's CPU ids)."""
    cp = CheckpointV4()
    try:
        cp.unmarshal_checkpoint(blob)
        cp.verify_checksum()
    except (gojson.GoJSONError, CheckpointError) as err:
        if cp.data or cp.data_checksum != 0:
            raise WrappedCheckpointError("could not load v4 checkpoint", err) from err
        return _load_v3(blob, pod_level_resource_managers)
    data = cp.checkpoint_data
    return LoadedCheckpoint("v4", data.policy_name, data.default_cpu_set, _entries(data.entries),
                            dict(data.pod_entries or {}))


def encode_checkpoint(policy_name: str, default_cpu_set: CPUSet, assignments: dict[str, dict[str, CPUSet]],
                      pod_entries: Optional[PodEntries] = None, fmt: str = DEFAULT_WRITE_FORMAT) -> bytes:
    """The bytes kubelet writes for this state in format `fmt` (v2 drops pod entries)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown checkpoint format {fmt!r}: expected one of {', '.join(FORMATS)}")
    entries = {pod: {name: str(cpus) for name, cpus in containers.items()} for pod, containers in assignments.items()}
    pods = dict(pod_entries or {})
    if fmt == "v2":
        return CheckpointV2(policy_name, str(default_cpu_set), entries).marshal_checkpoint()
    if fmt == "v3":
        return CheckpointV3(policy_name, str(default_cpu_set), entries, pods).marshal_checkpoint()
    cp = CheckpointV4(checkpoint_data=CheckpointData(policy_name, str(default_cpu_set), entries, pods))
    return cp.marshal_checkpoint()
