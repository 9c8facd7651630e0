"""Shared helpers of the explain tests: walking a bundled scenario, a small PNG reader."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

from memorymanager.explain.model import ScenarioView
from memorymanager.explain.walk import walk_scenario
from memorymanager.runner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "fixtures" / "scenarios"
TUTORIAL = SCENARIOS / "tutorial"


def walk(relative: str) -> ScenarioView:
    """Walk a scenario under fixtures/scenarios (e.g. `tutorial/003-...yaml`)."""
    return walk_scenario(load_scenario(str(SCENARIOS / relative)))


def read_png(blob: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert blob[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        data = blob[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def node_root_with_entries(dest: Path, entries: int) -> Path:
    """A copy of fixtures/nodes/two-nodes whose checkpoint holds `entries` one-container pods of
    64Ki each, alternating between the two NUMA nodes, consistent with the machine state (kubelet
    would load it and start)."""
    import shutil

    from state.checkpoint import read_checkpoint
    from state.checkpoint_writer import encode_checkpoint
    from state.types import Block

    shutil.copytree(ROOT / "fixtures" / "nodes" / "two-nodes", dest, symlinks=True)
    path = dest / "var" / "lib" / "kubelet" / "memory_manager_state"
    machine_state = read_checkpoint(path.read_bytes()).machine_state
    size = 64 << 10
    assignments = {f"uid-{i:06d}": {"app": [Block([i % 2], "memory", size)]} for i in range(entries)}
    for numa in (0, 1):
        count = len(range(numa, entries, 2))
        table = machine_state[numa].memory_map["memory"]
        table.reserved, table.free = count * size, table.allocatable - count * size
        machine_state[numa].number_of_assignments = count
    path.write_bytes(encode_checkpoint("Static", machine_state, assignments))
    return dest
