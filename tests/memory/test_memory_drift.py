"""Memory drift tolerance helpers (KEP-6232): /proc/iomem parsing and the drift comparison."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorymanager.memory_drift import (
    MEMORY_DRIFT_GRACE_BYTES,
    is_tolerable_machine_state_drift,
    memory_drift_by_node,
    memory_drift_from_kernel_image,
    parse_kernel_image_size,
)
from tests.helpers.memory import GB, HP1G, MB, MEM, mt, ns

IOMEM_WITH_GAPS = (
    "  00100000-b7ffffff : System RAM\n"
    "    aff800000-b00dfffff : Kernel code\n"
    "    b01e00000-b0225523f : Kernel data\n"
    "    b02752000-b02bfffff : Kernel bss\n"
)


@pytest.mark.parametrize(
    "text, size, ok",
    [
        (IOMEM_WITH_GAPS, 0xB02BFFFFF - 0xAFF800000 + 1, True),
        (
            "  00000000-00000000 : Kernel code\n  00000000-00000000 : Kernel data\n  00000000-00000000 : Kernel bss\n",
            0,
            False,
        ),
        ("  00100000-07ffffff : System RAM\n  08000000-0fffffff : PCI Bus 0000:00\n", 0, False),
        ("", 0, False),
        # Go's ParseUint(base 16) refuses prefixes and signs: such lines are skipped
        ("  0x100-0x1ff : Kernel code\n", 0, False),
        ("  +100-1ff : Kernel code\n", 0, False),
        # an inverted range is skipped; CRLF line ends are tolerated like bufio.Scanner
        ("  200-100 : Kernel code\r\n  1000-1fff : Kernel data\r\n", 0x1000, True),
    ],
    ids=["gaps between sections", "hidden addresses", "no kernel lines", "empty", "0x prefix", "sign", "mixed"],
)
def test_parse_kernel_image_size(text, size, ok):
    assert parse_kernel_image_size(text) == (size, ok)


def test_memory_drift_from_kernel_image(tmp_path):
    assert memory_drift_from_kernel_image(str(tmp_path / "does-not-exist")) == (0, False)
    path = tmp_path / "iomem"
    path.write_text(IOMEM_WITH_GAPS)
    assert memory_drift_from_kernel_image(str(path)) == (0xB02BFFFFF - 0xAFF800000 + 1 + MEMORY_DRIFT_GRACE_BYTES, True)
    path.write_text("  00000000-00000000 : Kernel code\n")
    assert memory_drift_from_kernel_image(str(path)) == (0, False)


def node(total, allocatable, hp_total=GB, sysres=512 * MB, cells=(0,), assignments=0):
    return ns({MEM: mt(allocatable, allocatable, 0, sysres, total), HP1G: mt(hp_total, hp_total, 0, 0, hp_total)},
              list(cells), assignments)


@pytest.mark.parametrize(
    "stored, current, ok",
    [
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB - 4 * MB, 508 * MB)}, True),
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB - 8 * MB, 504 * MB)}, True),  # exactly the bound
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB - 9 * MB, 503 * MB)}, False),
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB, 512 * MB, hp_total=2 * GB)}, False),  # hugepages changed
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB, 512 * MB, sysres=256 * MB)}, False),
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB, 512 * MB, assignments=1)}, False),
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB, 512 * MB, cells=(0, 1))}, False),
        ({0: node(2 * GB, 512 * MB)}, {1: node(2 * GB, 512 * MB)}, False),
        ({0: node(2 * GB, 512 * MB)}, {0: node(2 * GB, 512 * MB), 1: node(2 * GB, 512 * MB)}, False),
    ],
    ids=["4Mi", "bound", "past bound", "hugepages", "system reserved", "assignments", "groups", "node id", "count"],
)
def test_is_tolerable_machine_state_drift(stored, current, ok):
    assert is_tolerable_machine_state_drift(stored, current, 8 * MB) is ok


def test_memory_drift_by_node():
    assert memory_drift_by_node({0: node(2 * GB, 0), 1: node(GB, 0)}, {0: node(2 * GB - 4 * MB, 0), 1: node(GB + MB, 0)}) == {
        0: 4 * MB,
        1: MB,
    }


@settings(max_examples=150, deadline=None)
@given(
    sections=st.lists(
        st.tuples(st.integers(0, 2**40), st.integers(0, 2**30), st.sampled_from(["Kernel code", "Kernel data", "Kernel bss"])),
        min_size=1,
        max_size=4,
    ),
    noise=st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**30)), max_size=3),
)
def test_kernel_image_size_is_the_span_of_the_kernel_sections(sections, noise):
    lines = [f"  {s:x}-{s + n:x} : {name}" for s, n, name in sections]
    lines += [f"  {s:x}-{s + n:x} : System RAM" for s, n in noise]
    size, ok = parse_kernel_image_size("\n".join(lines) + "\n")
    lo = min(s for s, _, _ in sections)
    hi = max(s + n for s, n, _ in sections)
    if hi == 0:
        assert (size, ok) == (0, False)
    else:
        assert (size, ok) == (hi - lo + 1, True)
