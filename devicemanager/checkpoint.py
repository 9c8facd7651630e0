"""The device manager's checkpoint `device-plugins/kubelet_internal_checkpoint` (checkpoint/checkpoint.go).

The file is Go's json.Marshal of

    Data{Data: checkpointData{PodDeviceEntries []PodDevicesEntry, RegisteredDevices map[string][]string},
         Checksum checksum.Checksum}

with PodDevicesEntry{PodUID, ContainerName, ResourceName string; DeviceIDs DevicesPerNUMA
(map[int64][]string, NUMA node -> IDs, -1 for no topology); AllocResp []byte (the plugin's
ContainerAllocateResponse in protobuf, base64 in JSON)}. No JSON tags: the keys are the Go
field names. The checksum is checksum.New(cp.Data): FNV-1a 32 over go-spew's `%#v` of the
checkpointData value (kubeinputs.checksum), e.g. for a node with one GPU and nothing allocated:

>>> data = DeviceCheckpointData(None, {"nvidia.com/gpu": ["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]})
>>> encode_checkpoint(data).decode()
'{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{"nvidia.com/gpu":["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]}},"Checksum":3952659280}'

(the bytes a real kubelet wrote for that node). kubelet restores the file by json.Unmarshal into a
value whose entries and map start empty (so a missing `Data` restores nothing), then recomputes the
checksum (`checkpoint is corrupted` when it differs). Only the v2 format (DevicesPerNUMA) exists
in v1.37: the v1 format of 1.20 and older is no longer read.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from kubeinputs.checksum import checksum_of
from kubeinputs.devices import Device
from kubeinputs.goformat import go_quote
from kubeinputs.gojson import GoJSONError, encode_string, marshal, unmarshal
from kubeinputs.gotypes import CHECKSUM, STRING, GoField, GoInt, GoMap, GoSlice, GoString, GoStruct, GoUint

from devicemanager.constants import NODE_WITHOUT_TOPOLOGY
from devicemanager.errors import DeviceCheckpointError
from devicemanager.pod_devices import CheckpointEntry

CORRUPT = "checkpoint is corrupted"

DEVICES_PER_NUMA = GoMap(GoInt("int64"), GoSlice(STRING), "checkpoint.DevicesPerNUMA")
REGISTERED_DEVICES = GoMap(STRING, GoSlice(STRING))


@dataclass
class DeviceCheckpointData:
    """checkpointData: the entries (None: JSON null, as kubelet writes when nothing is allocated) and the
    registered devices (resource -> healthy device IDs)."""

    entries: Optional[list[CheckpointEntry]]
    registered_devices: Optional[dict[str, list[str]]]


@dataclass
class DeviceCheckpointFile:
    """A decoded file: the data and the checksum written in it."""

    data: DeviceCheckpointData
    checksum: int


# -- go-spew view (the checksum) ------------------------------------------------------------------------------
_SPEW_ENTRY = GoStruct("checkpoint.PodDevicesEntry", (
    GoField("PodUID", "PodUID", "pod_uid", STRING),
    GoField("ContainerName", "ContainerName", "container_name", STRING),
    GoField("ResourceName", "ResourceName", "resource_name", STRING),
    GoField("DeviceIDs", "DeviceIDs", "device_ids", DEVICES_PER_NUMA),
    GoField("AllocResp", "AllocResp", "alloc_resp", GoSlice(GoUint("uint8"))),  # bytes iterate as ints
), lambda: None)
_SPEW_DATA = GoStruct("checkpoint.checkpointData", (
    GoField("PodDeviceEntries", "PodDeviceEntries", "entries", GoSlice(_SPEW_ENTRY)),
    GoField("RegisteredDevices", "RegisteredDevices", "registered_devices", REGISTERED_DEVICES),
), lambda: None)


def checkpoint_checksum(data: DeviceCheckpointData) -> int:
    """checksum.New(cp.Data) of the checkpoint data."""
    return checksum_of(data, _SPEW_DATA)


# -- encoding -------------------------------------------------------------------------------------------------
def _encode_entry(entry: CheckpointEntry) -> str:
    """One PodDevicesEntry as encoding/json writes it ([]byte as standard base64)."""
    resp = "null" if entry.alloc_resp is None else '"' + base64.b64encode(entry.alloc_resp).decode("ascii") + '"'
    return ('{"PodUID":' + encode_string(entry.pod_uid) + ',"ContainerName":' + encode_string(entry.container_name)
            + ',"ResourceName":' + encode_string(entry.resource_name)
            + ',"DeviceIDs":' + marshal(entry.device_ids, DEVICES_PER_NUMA).decode("utf-8", "surrogatepass")
            + ',"AllocResp":' + resp + "}")


def encode_checkpoint(data: DeviceCheckpointData) -> bytes:
    """MarshalCheckpoint: the file's bytes, checksum included (compact JSON, no trailing newline)."""
    if data.entries is None:
        entries = "null"
    else:
        entries = "[" + ",".join(_encode_entry(e) for e in data.entries) + "]"
    registered = marshal(data.registered_devices, REGISTERED_DEVICES).decode("utf-8", "surrogatepass")
    text = ('{"Data":{"PodDeviceEntries":' + entries + ',"RegisteredDevices":' + registered
            + '},"Checksum":' + str(checkpoint_checksum(data)) + "}")
    return text.encode("utf-8", "surrogatepass")


# -- decoding -------------------------------------------------------------------------------------------------
@dataclass
class _JSONEntry:
    pod_uid: str = ""
    container_name: str = ""
    resource_name: str = ""
    device_ids: Optional[dict] = None
    alloc_resp: Optional[str] = None  # the base64 text until it is decoded


@dataclass
class _JSONData:
    entries: Optional[list] = field(default_factory=list)
    registered_devices: Optional[dict] = field(default_factory=dict)


@dataclass
class _JSONFile:
    data: _JSONData = field(default_factory=_JSONData)
    checksum: int = 0


# AllocResp is decoded as a string holding base64 and converted afterwards (a Go []byte also accepts a JSON
# array of numbers; this reader refuses one with a type error instead).
_JSON_ENTRY = GoStruct("checkpoint.PodDevicesEntry", (
    GoField("PodUID", "PodUID", "pod_uid", STRING),
    GoField("ContainerName", "ContainerName", "container_name", STRING),
    GoField("ResourceName", "ResourceName", "resource_name", STRING),
    GoField("DeviceIDs", "DeviceIDs", "device_ids", DEVICES_PER_NUMA),
    GoField("AllocResp", "AllocResp", "alloc_resp", GoString("[]uint8")),
), _JSONEntry)
_JSON_DATA = GoStruct("checkpoint.checkpointData", (
    GoField("PodDeviceEntries", "PodDeviceEntries", "entries", GoSlice(_JSON_ENTRY)),
    GoField("RegisteredDevices", "RegisteredDevices", "registered_devices", REGISTERED_DEVICES),
), _JSONData)
_JSON_FILE = GoStruct("checkpoint.Data", (
    GoField("Data", "Data", "data", _JSON_DATA),
    GoField("Checksum", "Checksum", "checksum", CHECKSUM),
), _JSONFile)

_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def go_base64_decode(text: str) -> bytes:
    """base64.StdEncoding.DecodeString as encoding/json uses it for []byte: padding required, CR and LF
    skipped; a bad input raises ValueError with Go's text (`illegal base64 data at input byte 4`)."""
    src = text.encode("utf-8", "surrogatepass")
    si, n = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return base64.b64decode(bytes(b for b in src if b not in b"\r\n"))
                raise ValueError(f"illegal base64 data at input byte {si - j}")
            c = src[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in b"\r\n":
                continue
            if c != ord("=") or j < 2:
                raise ValueError(f"illegal base64 data at input byte {si - 1}")
            if j == 2:  # "==" expected: the first "=" is read
                while si < n and src[si] in b"\r\n":
                    si += 1
                if si == n:
                    raise ValueError(f"illegal base64 data at input byte {n}")
                if src[si] != ord("="):
                    raise ValueError(f"illegal base64 data at input byte {si - 1}")
                si += 1
            while si < n and src[si] in b"\r\n":
                si += 1
            if si < n:
                raise ValueError(f"illegal base64 data at input byte {si}")
            return base64.b64decode(bytes(b for b in src if b not in b"\r\n"))


def decode_checkpoint(blob: bytes, file: Optional[str] = None) -> DeviceCheckpointFile:
    """UnmarshalCheckpoint: json.Unmarshal into a checkpoint whose entries and map start empty.

    Raises DeviceCheckpointError with Go's JSON error text (syntax, type or base64), naming `file`."""
    target = _JSONFile()
    try:
        unmarshal(blob, target, _JSON_FILE)
    except GoJSONError as err:
        raise DeviceCheckpointError("", str(err), file) from None
    entries: Optional[list[CheckpointEntry]] = None
    if target.data.entries is not None:
        entries = []
        for i, raw in enumerate(target.data.entries):
            resp = None
            if raw.alloc_resp is not None:
                try:
                    resp = go_base64_decode(raw.alloc_resp)
                except ValueError as err:
                    raise DeviceCheckpointError(f"Data.PodDeviceEntries[{i}].AllocResp", str(err), file) from None
            entries.append(CheckpointEntry(raw.pod_uid, raw.container_name, raw.resource_name, raw.device_ids, resp))
    return DeviceCheckpointFile(DeviceCheckpointData(entries, target.data.registered_devices), target.checksum)


def verify_checksum(checkpoint: DeviceCheckpointFile, file: Optional[str] = None) -> None:
    """VerifyChecksum: DeviceCheckpointError `checkpoint is corrupted` (with `actual` and `expected`) on a mismatch."""
    actual = checkpoint_checksum(checkpoint.data)
    if actual != checkpoint.checksum:
        err = DeviceCheckpointError("Checksum", CORRUPT, file)
        err.actual, err.expected = actual, checkpoint.checksum  # type: ignore[attr-defined]
        raise err


def read_checkpoint(blob: bytes, file: Optional[str] = None) -> DeviceCheckpointData:
    """GetCheckpoint after the file was read: decode, then verify the checksum."""
    checkpoint = decode_checkpoint(blob, file)
    verify_checksum(checkpoint, file)
    return checkpoint.data


# -- the plugin's Allocate answer -----------------------------------------------------------------------------
# ContainerAllocateResponse (deviceplugin v1beta1): envs=1 and annotations=4 are map<string,string>, mounts=2
# Mount{container_path=1, host_path=2: string; read_only=3: bool}, devices=3 DeviceSpec{1, 2, 3: string},
# cdi_devices=5 CDIDevice{name=1: string}. The string fields of each nested message:
_STRING_FIELDS = {1: (1, 2), 2: (1, 2), 3: (1, 2, 3), 4: (1, 2), 5: (1,)}
WIRE_ERROR = "proto: cannot parse invalid wire-format data"
UTF8_ERROR = "proto: string field contains invalid UTF-8"


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """A varint at i: (value, next index); ValueError when truncated or longer than 10 bytes."""
    value, shift = 0, 0
    for k in range(10):
        if i + k >= len(data):
            raise ValueError(WIRE_ERROR)
        b = data[i + k]
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i + k + 1
    raise ValueError(WIRE_ERROR)


# Nested groups deeper than this are refused as undecodable (protobuf-go allows 10,000; no plugin writes any).
MAX_GROUP_DEPTH = 100


def _message(data: bytes, i: int = 0, group: Optional[int] = None, depth: int = 0) -> tuple[list[tuple[int, int, Any]], int]:
    """A message's fields as (number, wire type, value) from index i, and the index after it (after the end
    tag of `group` when reading a group, whose fields are dropped). ValueError on bad wire format."""
    if depth > MAX_GROUP_DEPTH:
        raise ValueError(WIRE_ERROR)
    out: list[tuple[int, int, Any]] = []
    while i < len(data):
        tag, i = _varint(data, i)
        number, wire = tag >> 3, tag & 7
        if number < 1 or number > (1 << 29) - 1:
            raise ValueError(WIRE_ERROR)
        value: Any = None
        if wire == 0:
            value, i = _varint(data, i)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if i + size > len(data):
                raise ValueError(WIRE_ERROR)
            value, i = data[i:i + size], i + size
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ValueError(WIRE_ERROR)
            value, i = data[i:i + size], i + size
        elif wire == 3:
            _, i = _message(data, i, number, depth + 1)
        elif wire == 4 and group == number:
            return out, i
        else:
            raise ValueError(WIRE_ERROR)
        out.append((number, wire, value))
    if group is not None:
        raise ValueError(WIRE_ERROR)
    return out, i


def alloc_resp_problem(data: bytes) -> Optional[str]:
    """Why proto.Unmarshal of a ContainerAllocateResponse would fail (bad wire format, a string that is not
    UTF-8), or None. kubelet skips a checkpoint entry whose answer does not decode."""
    try:
        for number, wire, value in _message(data)[0]:
            if number not in _STRING_FIELDS or wire != 2:
                continue
            for inner, inner_wire, inner_value in _message(value)[0]:
                if inner in _STRING_FIELDS[number] and inner_wire == 2:
                    try:
                        inner_value.decode("utf-8")
                    except UnicodeDecodeError:
                        return UTF8_ERROR
    except ValueError:
        return WIRE_ERROR
    return None


# -- strict checks against the node ---------------------------------------------------------------------------
def check_against_node(data: DeviceCheckpointData, devices: Mapping[str, Iterable[Device]],
                       machine_nodes: Iterable[int], file: Optional[str] = None) -> list[DeviceCheckpointError]:
    """What in a checkpoint the node cannot account for (kubelet restores it regardless): a resource or device
    no plugin declares, a NUMA node the machine lacks, a device recorded on other NUMA nodes than the
    plugin reports, a device held twice. Every problem names its path."""
    declared = {r: {d.id: d for d in ds} for r, ds in devices.items()}
    machine = set(machine_nodes)
    problems: list[DeviceCheckpointError] = []
    holder: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(data.entries or []):
        path = f"Data.PodDeviceEntries[{i}]"
        resource = entry.resource_name
        if resource not in declared:
            problems.append(DeviceCheckpointError(f"{path}.ResourceName", f"resource {go_quote(resource)} has no "
                                                  "device plugin on this node (no `devices` entry declares it)", file))
            continue
        seen_nodes: dict[str, set[int]] = {}
        for numa, ids in sorted((entry.device_ids or {}).items()):
            where = f"{path}.DeviceIDs.{numa}"
            if numa != NODE_WITHOUT_TOPOLOGY and numa not in machine:
                problems.append(DeviceCheckpointError(where, f"NUMA node {numa} is not on this machine", file))
            for device_id in ids or []:
                device = declared[resource].get(device_id)
                if device is None:
                    problems.append(DeviceCheckpointError(
                        where, f"device {go_quote(device_id)} is not a device of {go_quote(resource)} on this node "
                        f"(declared: {', '.join(declared[resource]) or 'none'})", file))
                    continue
                seen_nodes.setdefault(device_id, set()).add(numa)
        for device_id, nodes in seen_nodes.items():
            device = declared[resource][device_id]
            expected = set(device.numa_nodes) if device.numa_nodes else {NODE_WITHOUT_TOPOLOGY}
            if nodes != expected:
                problems.append(DeviceCheckpointError(
                    f"{path}.DeviceIDs", f"device {go_quote(device_id)} is recorded on NUMA nodes "
                    f"{sorted(nodes)} but its plugin reports {sorted(expected)}", file))
            owner = f"{entry.pod_uid}/{entry.container_name}"
            key = (resource, device_id)
            if key in holder and holder[key].split("/", 1)[0] != entry.pod_uid:
                problems.append(DeviceCheckpointError(
                    f"{path}.DeviceIDs", f"device {go_quote(device_id)} is also held by {holder[key]}", file))
            holder.setdefault(key, owner)
    for resource, ids in (data.registered_devices or {}).items():
        if resource not in declared:
            continue  # a plugin that has not registered again: kubelet keeps the resource with no device
        for k, device_id in enumerate(ids or []):
            if device_id not in declared[resource]:
                problems.append(DeviceCheckpointError(
                    f"Data.RegisteredDevices.{resource}[{k}]",
                    f"device {go_quote(device_id)} is not a device of {go_quote(resource)} on this node", file))
    return problems
