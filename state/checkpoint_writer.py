"""The checkpoint writer the state store uses: the bytes kubelet writes, built directly.

`encode_checkpoint` writes a v1, v2 or v3 file (see checkpoint.py) straight from the
known state types, without walking Go type descriptors; it is differential-tested
against `reference_checkpoint_writer.reference_encode_checkpoint`, which goes through
the checkpoint structs' marshal_checkpoint like kubelet does.
"""
from __future__ import annotations

from operator import itemgetter
from typing import Optional

from kubeinputs import gojson
from kubeinputs.checksum import FNVMemo, fnv32a
from state.checkpoint import DEFAULT_WRITE_FORMAT, FORMATS, LEGACY_TYPE_NAME
from state.types import Block, ContainerMemoryAssignments, NUMANodeMap, PodMemoryAssignments


def encode_checkpoint(
    policy_name: str,
    machine_state: Optional[NUMANodeMap],
    entries: Optional[ContainerMemoryAssignments],
    pod_entries: Optional[PodMemoryAssignments] = None,
    fmt: str = DEFAULT_WRITE_FORMAT,
    memo: Optional[FNVMemo] = None,
    pod_pieces: Optional[dict] = None,
) -> bytes:
    """The bytes kubelet writes for this content in format `fmt` (v1 drops pod entries).

    Built directly from the known state types (see "the direct writer" below): byte for
    byte what reference_encode_checkpoint, the Go-typed codec, writes. The texts are built
    in pieces (one per NUMA node, one per pod); `memo`, kept by a store between writes,
    makes the checksums of pieces seen before O(1); `pod_pieces` (pod UID -> (JSON text, go-spew
    text) of its container entries), kept by a store that drops a pod's item whenever it changes
    that pod, saves re-encoding unchanged pods. Cost: O(size of the file), the checksums
    O(size of the changed pieces) with a warm memo.
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
    if pod_pieces is None:
        pod_pieces = {}
    if entries:
        json_pieces.append(',"entries":')
        _json_assignments(entries, json_pieces, pod_pieces)
    spew_pieces = ["(*state." + LEGACY_TYPE_NAME + "){PolicyName:(string)" + policy_name + " MachineState:"]
    nil_last = _spew_machine_state(machine_state, spew_pieces)
    spew_pieces.append(" Entries:")
    _spew_assignments(entries, nil_last, spew_pieces, pod_pieces)
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


def _pod_texts(pod: str, containers, cache: dict) -> tuple[str, str]:
    """(JSON, go-spew) texts of one pod's container map, from `cache` when there. Cost: O(blocks)."""
    known = cache.get(pod)
    if known is None:
        if containers is None:
            known = ("null", "<nil>")
        else:
            known = (
                "{" + ",".join([gojson.encode_string(c) + ":" + _json_blocks(b) for c, b in _by_text(containers)]) + "}",
                "map[" + " ".join([c + ":" + _spew_blocks(containers[c]) for c in sorted(containers)]) + "]",
            )
        cache[pod] = known
    return known


def _json_assignments(entries: Optional[ContainerMemoryAssignments], out: list[str], cache: dict) -> None:
    """A ContainerMemoryAssignments (nil: null), one piece per pod. Cost: O(blocks)."""
    if entries is None:
        out.append("null")
        return
    separator = "{"
    for pod, containers in _by_text(entries):
        out.append(separator + gojson.encode_string(pod) + ":")
        out.append(_pod_texts(pod, containers, cache)[0])
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


def _spew_assignments(entries: Optional[ContainerMemoryAssignments], omit_type: bool, out: list[str],
                      cache: dict) -> None:
    """The Entries field's value (its type omitted after a trailing nil node), one piece per pod.
    Cost: O(blocks)."""
    kind = "" if omit_type else "(state.ContainerMemoryAssignments)"
    if entries is None:
        out.append(kind + "<nil>")
        return
    separator = kind + "map["
    for pod in sorted(entries):
        out.append(separator + pod + ":")
        out.append(_pod_texts(pod, entries[pod], cache)[1])
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
