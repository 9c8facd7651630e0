"""The work limits every reader keeps: file size, nesting depth, expanded YAML size, number length.

A reader stops at these limits with an `InputError` that names the limit and how to raise it, so
that no input (a file that never ends such as /dev/zero, a YAML alias bomb, a 5,000-digit
number, lists nested 5,000 deep) makes the project hang, exhaust memory or raise a Python error.
Real inputs stay far below every limit (docs/limits.md gives the figures).

The limits are a value, `Limits` (frozen; `DEFAULT_LIMITS` holds the defaults), passed to every
reader that keeps one (`load_file(path, limits=...)`, `Node(..., limits=...)`, ...); the commands
build theirs from `--limit max-file-bytes=N` (`Limits.raised`). Nothing here is a process-wide
setting: two readers in one process (a fleet's workers, serve's requests, a test) may read with
different limits.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, fields, replace
from typing import Iterable, Optional

from kubeinputs.errors import Error, InputError


@dataclass(frozen=True)
class Limits:
    """The limits; see docs/limits.md for what each bounds and why the default."""

    # bytes read from any one input file (scenario, manifest, machine JSON, KubeletConfiguration,
    # checkpoint, resmgr record); larger files and files that never end are refused
    max_file_bytes: int = 64 << 20
    # bytes read from one checkpoint file (memory_manager_state, resmgr records): kubelet's file for a
    # full node is ~100 KiB; Go's scanner, which words the errors of invalid files, reads ~1 MiB/s here
    max_checkpoint_bytes: int = 8 << 20
    # bytes read from one sysfs attribute (meminfo is ~1.5 KiB, a cpulist a few hundred bytes)
    max_sysfs_bytes: int = 1 << 20
    # nesting of maps and lists in one document (Kubernetes objects nest ~15 deep)
    max_depth: int = 100
    # nodes of a YAML document once aliases are expanded (a "billion laughs" document is refused)
    max_yaml_nodes: int = 5_000_000
    # characters of one number or quantity (Go's int64 has 19 digits; Python refuses 4,300)
    max_number_digits: int = 1000
    # serve's control requests, each (the work budget: docs/grpc.md). Containers of one pod: a pod the
    # API server stores (etcd's 1.5 MiB request limit) has at most ~20,000 containers with resources,
    # and kubelet stores its whole checkpoint after each container's Allocate
    max_request_containers: int = 10_000
    # init containers of one pod: kubelet walks every earlier init container for each container and
    # stores its whole checkpoint at each visit, about n^2/2 writes (500,000 at 1,000)
    max_request_init_containers: int = 1_000
    # containers of a pod Explain answers for: the explanation takes ~1 KB (text) to ~5 KB (JSON) per
    # container, and a gRPC client takes answers of 4 MiB unless told otherwise
    max_explain_containers: int = 500
    # hints in one request: kubelet's providers give at most one hint per NUMA mask and preference,
    # 2 x 255 per container and resource on kubelet's default maximum of 8 NUMA nodes
    max_request_hints: int = 65_536
    # control requests waiting or running at once; half of serve's 16 gRPC threads stay free for
    # PodResources
    max_control_queue: int = 8

    def raised(self, assignments: Iterable[str]) -> "Limits":
        """These limits with every `NAME=N` of `assignments` applied (`--limit`, repeatable); ValueError
        names a bad one."""
        changes = dict(parse_limit(assignment) for assignment in assignments)
        return replace(self, **changes) if changes else self


DEFAULT_LIMITS = Limits()

_NAMES = {f.name.replace("_", "-"): f.name for f in fields(Limits)}


class WorkLimitError(Error):
    """The project stops where kubelet would do unbounded work (and says what kubelet would do). Not a
    kubelet answer: it is raised through the managers (never turned into a pod rejection) to the caller."""


def limit_names() -> list[str]:
    """The `--limit` names (`max-file-bytes`, ...)."""
    return sorted(_NAMES)


def parse_limit(assignment: str) -> tuple[str, int]:
    """One `name=value` as (field name, value) (`max-file-bytes=1e9` is not accepted: an integer, `_`
    allowed); ValueError names what is wrong."""
    name, sep, value = assignment.partition("=")
    key = _NAMES.get(name.strip().lower().replace("_", "-"))
    if not sep or key is None:
        raise ValueError(f"--limit {assignment!r}: expected NAME=INTEGER, NAME one of {', '.join(limit_names())}")
    try:
        number = int(value.strip().replace("_", ""))
    except ValueError:
        raise ValueError(f"--limit {assignment!r}: {value!r} is not an integer") from None
    if number < 1:
        raise ValueError(f"--limit {assignment!r}: must be at least 1")
    return key, number


def flag(name: str) -> str:
    """How to raise a limit, for messages: `--limit max-file-bytes=N`."""
    return f"--limit {name.replace('_', '-')}=N"


def read_bytes(path, *, limits: Limits = DEFAULT_LIMITS, limit_name: str = "max_file_bytes",
               max_bytes: Optional[int] = None) -> bytes:
    """At most the bytes `limits.<limit_name>` allows (or `max_bytes`) of the file at `path`; a larger file
    (or one that never ends, such as /dev/zero) is an InputError naming the limit. OSError propagates
    (callers word it)."""
    limit = getattr(limits, limit_name) if max_bytes is None else max_bytes
    if stat.S_ISFIFO(os.stat(path).st_mode):  # opening a FIFO waits for a writer that may never come
        raise InputError("", "a FIFO, not a regular file: not read", os.fspath(path))
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise InputError("", f"file is larger than {limit:,} bytes, the {limit_name} limit "
                             f"(raise it with {flag(limit_name)})", os.fspath(path))
    return data


def number_too_long(digits: int, limit: int) -> str:
    """The reason for a number past max_number_digits (`limit`)."""
    return (f"number has {digits:,} characters; at most {limit:,} are read "
            f"(max_number_digits; raise it with {flag('max_number_digits')})")


def check_depth(doc, where: str = "", limit: int = DEFAULT_LIMITS.max_depth) -> None:
    """Refuse a decoded document nested deeper than `limit` (max_depth; iterative: no recursion)."""
    stack = [(doc, 1)]
    seen: set[int] = set()
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if depth > limit:
            raise InputError(where or "(document)", f"nested deeper than {limit} levels, the max_depth limit "
                                                    f"(raise it with {flag('max_depth')})")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
