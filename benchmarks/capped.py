"""The "before" runs of B8, B13 and B14: kubelet's enumerating code in a child process capped in time and
address space, which reports "did not finish" or the error instead of hanging the benchmark."""
from __future__ import annotations

import multiprocessing
import resource
from typing import Callable

BEFORE_SECONDS = 30.0
BEFORE_BYTES = 3 << 30


def _child(work: Callable[..., float], args: tuple[object, ...], out: "multiprocessing.connection.Connection") -> None:
    """Cap the address space, run `work(*args)` and send back ("ok", seconds) or (error name, 0)."""
    resource.setrlimit(resource.RLIMIT_AS, (BEFORE_BYTES, BEFORE_BYTES))
    try:
        out.send(("ok", work(*args)))
    except MemoryError:
        out.send(("MemoryError", 0.0))
    except Exception as exc:  # noqa: BLE001 - reported in the table
        out.send((type(exc).__name__, 0.0))


def run_capped(work: Callable[..., float], *args: object) -> tuple[str, float]:
    """`work(*args)` (its seconds) in a forked child capped at BEFORE_SECONDS and BEFORE_BYTES:
    ("ok", seconds), ("did not finish", cap) or (error name, 0)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(work, args, child))
    proc.start()
    if parent.poll(BEFORE_SECONDS):
        status, seconds = parent.recv()
    else:
        status, seconds = "did not finish", BEFORE_SECONDS
    proc.kill()
    proc.join()
    return status, seconds


def before_note(status: str, seconds: float) -> str:
    """The table's words for a capped run: its milliseconds, or why there are none."""
    if status == "ok":
        return f"before: {seconds * 1e3:,.0f} ms"
    return f"before: {status} (cap {BEFORE_SECONDS:.0f} s, {BEFORE_BYTES >> 30} GiB)"
