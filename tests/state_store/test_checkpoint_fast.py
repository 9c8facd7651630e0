"""The direct checkpoint writer against the generic Go-typed codec (the oracle), byte for byte.

Also the fast helpers it uses against their plain versions: Go string escaping and FNV-1a.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from state.checkpoint import FORMATS, read_checkpoint
from state.checkpoint_writer import encode_checkpoint
from state.reference_checkpoint_writer import reference_encode_checkpoint
from kubeinputs.checksum import FNVMemo, fnv32a, fnv32a_plain
from kubeinputs.gojson import encode_string, encode_string_plain
from state.types import Block, MemoryTable, NUMANodeState, PodEntry
from tests.helpers.state_strategies import NAMES, POLICIES, assignments, machine_states, pod_assignments


@settings(max_examples=300, deadline=None)
@given(POLICIES, machine_states(True), assignments(True), st.one_of(st.none(), pod_assignments(True)),
       st.sampled_from(FORMATS))
def test_direct_writer_equals_generic_codec(policy, machine_state, entries, pod_entries, fmt) -> None:
    assert encode_checkpoint(policy, machine_state, entries, pod_entries, fmt) == reference_encode_checkpoint(
        policy, machine_state, entries, pod_entries, fmt
    )


_SHARED_MEMO = FNVMemo()


@settings(max_examples=200, deadline=None)
@given(POLICIES, machine_states(True), assignments(True), st.one_of(st.none(), pod_assignments(True)),
       st.sampled_from(FORMATS))
def test_direct_writer_with_a_checksum_memo_equals_generic_codec(policy, machine_state, entries, pod_entries, fmt):
    """The memo is shared by every example (and each content is written twice), so remembered
    pieces are met again with other running values."""
    expected = reference_encode_checkpoint(policy, machine_state, entries, pod_entries, fmt)
    for _ in range(2):
        assert encode_checkpoint(policy, machine_state, entries, pod_entries, fmt, memo=_SHARED_MEMO) == expected


def test_checksum_memo_on_a_churning_node() -> None:
    """Many writes of one machine with a changing node 0 and pods coming and going."""
    memo = FNVMemo()
    tables = {"memory": MemoryTable(64 << 30, 0, 60 << 30, 0, 60 << 30), "hugepages-2Mi": MemoryTable(1 << 30, 0, 1 << 30, 0, 1 << 30)}
    for step in range(300):
        machine_state = {i: NUMANodeState(step % 7 if i == 0 else 0, dict(tables), [i]) for i in range(4)}
        entries = {f"pod-{k}": {"app": [Block([0], "memory", 1 << 30)]} for k in range(step % 5, step % 5 + 4)}
        fmt = FORMATS[step % 3]
        assert encode_checkpoint("Static", machine_state, entries, None, fmt, memo=memo) == \
            reference_encode_checkpoint("Static", machine_state, entries, None, fmt)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a" * 40, "b" * 33 + "\u00e9", "short", "\ud800" + "c" * 40, "xyz" * 12]),
                         max_size=6), max_size=20))
def test_checksum_memo_equals_plain_fnv(texts) -> None:
    memo = FNVMemo()
    for pieces in texts:
        assert memo.checksum(pieces) == fnv32a_plain("".join(pieces).encode("utf-8", "surrogatepass"))


def test_go_spew_flag_after_trailing_nil_node_and_nil_table() -> None:
    """A nil node last in the map, or a nil table last in a node, makes go-spew omit the next type."""
    machine_state = {
        0: NUMANodeState(1, {"hugepages-1Gi": MemoryTable(1, 0, 1, 0, 1), "memory": None}, [0]),
        3: None,
    }
    entries = {"p": {"c": [Block([0], "memory", 5)]}}
    for fmt in FORMATS:
        blob = encode_checkpoint("Static", machine_state, entries, {"p": PodEntry([Block([0], "memory", 5)])}, fmt)
        assert blob == reference_encode_checkpoint("Static", machine_state, entries,
                                                 {"p": PodEntry([Block([0], "memory", 5)])}, fmt)


def test_written_bytes_read_back() -> None:
    machine_state = {0: NUMANodeState(1, {"memory": MemoryTable(10, 1, 9, 5, 4)}, [0])}
    entries = {"pod": {"app": [Block([0], "memory", 5)]}}
    loaded = read_checkpoint(encode_checkpoint("Static", machine_state, entries))
    assert (loaded.format, loaded.policy_name, loaded.machine_state, loaded.entries) == (
        "v3", "Static", machine_state, entries)


@settings(max_examples=300, deadline=None)
@given(st.one_of(NAMES, st.text(), st.text(alphabet='"\\<>&\u2028\u2029\x00\x1f\x7fab\ud800\udfff')))
def test_encode_string_equals_plain(text) -> None:
    assert encode_string(text) == encode_string_plain(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_fnv32a_equals_plain(data) -> None:
    assert fnv32a(data) == fnv32a_plain(data)
