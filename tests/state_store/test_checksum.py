"""The checkpoint checksum: FNV-1a 32 over go-spew's %#v text, against kubelet's own vectors."""
from __future__ import annotations

import pytest

from state.checkpoint import V1_STRUCT, V2_STRUCT, CheckpointV1, CheckpointV2
from kubeinputs.checksum import checksum_of, fnv32a, spew, string_checksum
from kubeinputs.gotypes import GoPtr
from state.go_descriptors import NUMA_NODE_MAP
from state.types import Block, MemoryTable, NUMANodeState, PodEntry

MACHINE = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, [])}
ENTRIES = {"pod": {"container1": [Block([0], "memory", 512)]}}
POD_ENTRIES = {"pod": PodEntry([Block([0], "memory", 512)])}

# The v1 vector of state_checkpoint_test.go ("Restore valid checkpoint"), as kubelet prints it.
V1_SPEW = (
    "(*state.MemoryManagerCheckpoint){PolicyName:(string)static MachineState:(state.NUMANodeMap)map[0:<*>"
    "{NumberOfAssignments:(int)0 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<*>"
    "{TotalMemSize:(uint64)2048 SystemReserved:(uint64)512 Allocatable:(uint64)1536 Reserved:(uint64)512 "
    "Free:(uint64)1024}] Cells:([]int)[]}] Entries:(state.ContainerMemoryAssignments)map[pod:map[container1:"
    "[{NUMAAffinity:([]int)[0] Type:(v1.ResourceName)memory Size:(uint64)512}]]] Checksum:(checksum.Checksum)0}"
)

DATA_1849615440 = (
    '{"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,'
    '"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},"entries":{"pod":'
    '{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}}}'
)
DATA_2100279793 = '{"unknownField":"value",' + DATA_1849615440[1:]
DATA_637296054 = (
    DATA_1849615440[:-1]
    + ',"podEntries":{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}}}'
)


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", 0x811C9DC5),
        (b"a", 0xE40C292C),
        (b"foobar", 0xBF9CF968),
    ],
)
def test_fnv32a_reference_values(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_v1_vector_spew_text_and_checksum() -> None:
    cp = CheckpointV1("static", MACHINE, ENTRIES)
    text = spew(cp, GoPtr(V1_STRUCT)).replace("MemoryManagerCheckpointV1", "MemoryManagerCheckpoint", 1)
    assert text == V1_SPEW
    assert fnv32a(V1_SPEW.encode()) == 4215593881
    assert cp.legacy_checksum() == 4215593881


def test_v2_vector_checksum() -> None:
    cp = CheckpointV2("static", MACHINE, ENTRIES, POD_ENTRIES)
    assert cp.computed_checksum() == 1278640530
    text = spew(cp, GoPtr(V2_STRUCT))
    assert (
        " PodEntries:(state.PodMemoryAssignments)map[pod:{MemoryBlocks:([]state.Block)[{NUMAAffinity:([]int)[0] "
        "Type:(v1.ResourceName)memory Size:(uint64)512}]}] Checksum:(checksum.Checksum)0}" in text
    )


@pytest.mark.parametrize(
    "data, expected",
    [(DATA_1849615440, 1849615440), (DATA_2100279793, 2100279793), (DATA_637296054, 637296054)],
)
def test_v3_data_checksum_vectors(data: str, expected: int) -> None:
    assert string_checksum(data) == expected


@pytest.mark.parametrize(
    "policy, expected",
    [("None", 4236770233), ("Static", 3940083781)],  # None: a real node's file; Static: derived
)
def test_empty_state_checksums(policy: str, expected: int) -> None:
    assert CheckpointV1(policy).legacy_checksum() == expected


def test_nil_and_empty_render_differently() -> None:
    nil_cells = NUMANodeState(0, {}, None)
    empty_cells = NUMANodeState(0, {}, [])
    assert "Cells:([]int)<nil>" in spew({0: nil_cells}, NUMA_NODE_MAP)
    assert "Cells:([]int)[]" in spew({0: empty_cells}, NUMA_NODE_MAP)
    assert spew({}, NUMA_NODE_MAP) == "(state.NUMANodeMap)map[]"
    assert spew(None, NUMA_NODE_MAP) == "(state.NUMANodeMap)<nil>"
    assert "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)<nil>" in spew({0: NUMANodeState(0, None, [])}, NUMA_NODE_MAP)
    a = CheckpointV1("x", {0: nil_cells}).legacy_checksum()
    b = CheckpointV1("x", {0: empty_cells}).legacy_checksum()
    assert a != b


def test_map_keys_sorted_numerically_and_bytewise() -> None:
    ms = {10: NUMANodeState(0, {}, []), 2: NUMANodeState(0, {}, []), -1: NUMANodeState(0, {}, [])}
    text = spew(ms, NUMA_NODE_MAP)
    assert text.index("map[-1:") < text.index(" 2:") < text.index(" 10:")
    entries = {"b": {}, "B": {}, "é": {}, "a": {}}
    text = spew(CheckpointV1("x", {}, entries), GoPtr(V1_STRUCT))
    assert "map[B:map[] a:map[] b:map[] é:map[]]" in text


def test_nil_pointer_element_keeps_go_spew_type_flag() -> None:
    # go-spew leaves its "omit the next type" flag set after a nil pointer element, so the
    # next struct field loses its type prefix; kubelet hashes exactly that text.
    cp = CheckpointV1("x", {0: None}, {})
    text = spew(cp, GoPtr(V1_STRUCT))
    assert "MachineState:(state.NUMANodeMap)map[0:<nil>] Entries:map[] Checksum:(checksum.Checksum)0}" in text
    node = NUMANodeState(1, {"memory": None}, [0])
    text = spew({0: node}, NUMA_NODE_MAP)
    assert "MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[memory:<nil>] Cells:[0]}" in text


def test_nil_block_affinity_and_nil_lists() -> None:
    entries = {"p": {"c": None, "d": [Block(None, "memory", 1)]}, "q": None}
    text = spew(CheckpointV1("x", {}, entries), GoPtr(V1_STRUCT))
    assert "map[p:map[c:<nil> d:[{NUMAAffinity:([]int)<nil> Type:(v1.ResourceName)memory Size:(uint64)1}]] q:<nil>]" in text


def test_top_level_string() -> None:
    assert string_checksum("") == fnv32a(b"(string)")
    assert checksum_of("abc", V1_STRUCT.fields[0].type) == fnv32a(b"(string)abc")


def test_non_ascii_strings_hash_as_utf8() -> None:
    cp = CheckpointV1("é")
    assert "PolicyName:(string)é " in spew(cp, GoPtr(V1_STRUCT))
    assert cp.legacy_checksum() == fnv32a(
        spew(cp, GoPtr(V1_STRUCT)).replace("CheckpointV1", "Checkpoint", 1).encode("utf-8")
    )
