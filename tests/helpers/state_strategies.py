"""Hypothesis strategies for memory manager states (shared by the state/checkpoint tests)."""
from __future__ import annotations

from hypothesis import strategies as st

from state.types import Block, MemoryTable, NUMANodeState, PodEntry

UINT64 = st.integers(min_value=0, max_value=(1 << 64) - 1)
INT64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
SMALL_INT = st.integers(min_value=-3, max_value=70)

# Names that exercise Go's string escaping and key sorting (no lone surrogates: a Go string
# decoded from JSON never holds one).
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)),
    max_size=8,
)
NAMES = st.one_of(
    st.sampled_from(["memory", "hugepages-2Mi", "hugepages-1Gi", "pod", "c1", "10", "2", "<&>", 'q"\\', "\u2028", "é"]),
    TEXT,
)


def memory_tables() -> st.SearchStrategy[MemoryTable]:
    return st.builds(MemoryTable, UINT64, UINT64, UINT64, UINT64, UINT64)


def int_lists(allow_nil: bool) -> st.SearchStrategy:
    lists = st.lists(st.one_of(SMALL_INT, INT64), max_size=4)
    return st.one_of(st.none(), lists) if allow_nil else lists


def node_states(allow_nil: bool) -> st.SearchStrategy[NUMANodeState]:
    tables = st.one_of(st.none(), memory_tables()) if allow_nil else memory_tables()
    memory_map = st.dictionaries(NAMES, tables, max_size=3)
    return st.builds(
        NUMANodeState,
        st.one_of(SMALL_INT, INT64),
        st.one_of(st.none(), memory_map) if allow_nil else memory_map,
        int_lists(allow_nil),
    )


def machine_states(allow_nil: bool = True) -> st.SearchStrategy:
    nodes = st.one_of(st.none(), node_states(True)) if allow_nil else node_states(False)
    keys = st.one_of(st.integers(min_value=0, max_value=12), INT64)
    maps = st.dictionaries(keys, nodes, max_size=4)
    return st.one_of(st.none(), maps) if allow_nil else maps


def blocks(allow_nil: bool = True) -> st.SearchStrategy[Block]:
    return st.builds(Block, int_lists(allow_nil), NAMES, UINT64)


def block_lists(allow_nil: bool = True) -> st.SearchStrategy:
    lists = st.lists(blocks(allow_nil), max_size=3)
    return st.one_of(st.none(), lists) if allow_nil else lists


def assignments(allow_nil: bool = True) -> st.SearchStrategy:
    inner = st.dictionaries(NAMES, block_lists(allow_nil), max_size=3)
    outer = st.dictionaries(NAMES, st.one_of(st.none(), inner) if allow_nil else inner, max_size=3)
    return st.one_of(st.none(), outer) if allow_nil else outer


def pod_assignments(allow_nil: bool = True, empty_block_lists: bool = True) -> st.SearchStrategy:
    """Pod-level assignments. `memoryBlocks` is omitempty, so an empty (non-nil) list reads
    back as nil; `empty_block_lists=False` avoids it where byte stability is tested."""
    lists = block_lists(allow_nil)
    if not empty_block_lists:
        lists = st.one_of(st.none(), st.lists(blocks(allow_nil), min_size=1, max_size=3))
    entries = st.builds(PodEntry, lists)
    maps = st.dictionaries(NAMES, entries, max_size=3)
    return st.one_of(st.none(), maps) if allow_nil else maps


POLICIES = st.one_of(st.sampled_from(["None", "Static", "static", ""]), TEXT)
