"""One input through one reader, and what came of it.

Outcome classes (the property of every reader): `ok` (a result), `error` (a clean refusal: one of
the project's error types, with a message), and the failures `exception` (any other Python
exception), `hang` (past the CPU-time budget) and `wrongly accepted` (a result for an input the
generator built to be refused). A reader is a function of the generated value; the budget is
enforced with SIGPROF (main thread only), so a hang ends as a failure instead of a stuck run.
"""
from __future__ import annotations

import os
import re
import signal
import tempfile
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from kubeinputs.errors import Error, InputError
from kubeinputs.gojson import GoJSONError
from kubeinputs.limits import WorkLimitError
from memorymanager.node.simulated_node import NodeError
from memorymanager.policy import MemoryManagerError
from state.checkpoint_errors import CheckpointError
from state.state_checkpoint import StateError

OK, ERROR, EXCEPTION, HANG, WRONGLY_ACCEPTED = "ok", "error", "exception", "hang", "wrongly accepted"
OUTCOMES = (OK, ERROR, EXCEPTION, HANG, WRONGLY_ACCEPTED)
FAILURES = (EXCEPTION, HANG, WRONGLY_ACCEPTED)
BUDGET_SECONDS = 10.0

# the project's errors (`memorymanager.Error` covers the API's, resmgr's PolicyError and the node's)
CLEAN_ERRORS = (Error, InputError, GoJSONError, CheckpointError, StateError, WorkLimitError, MemoryManagerError, NodeError)
# a step error the runner reports for a Python exception it caught (error_message adds the type)
_PYTHON_ERROR = re.compile(r"^(?:[A-Z][A-Za-z]*Error|Exception|RecursionError|MemoryError)\b: ")


class Hang(Exception):
    """The time budget ran out."""


class Refuse(Exception):
    """Raised by a reader wrapper when the input must be refused but was accepted."""


@contextmanager
def budget(seconds: float = BUDGET_SECONDS) -> Iterator[None]:
    """Raise Hang in the main thread after `seconds` of this process's CPU time (ITIMER_PROF): a
    loop that never ends uses CPU, while other work on a busy machine does not count against it."""
    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"over {seconds} CPU seconds")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def classify(reader: Callable[[], Any], *, must_refuse: bool = False, seconds: float = BUDGET_SECONDS) -> tuple[str, str]:
    """(outcome, detail) of calling `reader()`."""
    try:
        with budget(seconds):
            result = reader()
    except Hang as exc:
        return HANG, str(exc)
    except CLEAN_ERRORS as exc:
        text = str(exc)
        if not text.strip():
            return EXCEPTION, f"{type(exc).__name__} without a message"
        return ERROR, text[:300]
    except RecursionError as exc:
        return EXCEPTION, f"RecursionError: {exc}"
    except Exception as exc:  # anything else is a bug
        return EXCEPTION, f"{type(exc).__name__}: {str(exc)[:300]}"
    if must_refuse:
        return WRONGLY_ACCEPTED, repr(result)[:300]
    return OK, ""


def step_failure(result: Any) -> str:
    """A Python exception hidden in a scenario result (the runner reports step errors as text)."""
    if getattr(result, "error", None) and _PYTHON_ERROR.match(result.error.split(": ", 1)[-1]):
        return result.error
    for step in getattr(result, "steps", []) or []:
        error = (step.actual or {}).get("error")
        if error and _PYTHON_ERROR.match(error):
            return error
    return ""


def temp_file(data: bytes, suffix: str) -> str:
    """A temporary file holding `data` (the caller removes it)."""
    fd, path = tempfile.mkstemp(suffix=suffix, prefix="fuzz-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path
