"""The pod trace: JSON Lines, one event per line, replayed in time order.

    {"time": 0, "add": {"metadata": {"name": "db-0"}, "spec": {...}}}              a v1 Pod
    {"time": 1, "add": {"template": "db", "name": "db-1", "overrides": {...}}}     a template
    {"time": 2, "add": {...}, "nodeName": "small-0"}                               already bound
    {"time": 9, "delete": "db-0"}              by name (namespace default) or "namespace/name"

`overrides` is merged into the template (maps merged key by key, everything else replaced);
`name` (and an optional `namespace`) become the pod's metadata. Blank lines and lines starting
with `#` are skipped. Events are replayed by `time` (a number within +-2^53: NaN, infinities and
`1e400` are refused, as they would misorder the events), events with the same time in file
order. Each line goes through the project's one strict JSON reader and its limits
(`kubeinputs.reader`: a key written twice, nesting past max_depth, a number past
max_number_digits are refused), and a line is at most max_file_bytes long. Each problem is an
InputError naming the file, the line and the reason: a pod that is added twice while active,
a delete of a pod that is not active, a `nodeName` that is no node of the fleet.

A pod's UID is its metadata.uid, else its name in namespace default and `namespace/name` in any
other (the rule of every input, `kubeinputs.pod.default_pod_uid`): kubelet keys its state by UID.
"""
from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Mapping, Optional

from kubeinputs.errors import InputError, brief, check_keys, expect_map, expect_str, join_path, type_name
from kubeinputs.limits import DEFAULT_LIMITS, Limits, flag
from kubeinputs.pod import Pod, parse_pod
from kubeinputs.reader import load_json_text

EVENT_KEYS = ("time", "add", "delete", "nodeName")
MAX_TIME = 2 ** 53
TEMPLATE_KEYS = ("template", "name", "namespace", "overrides")


@dataclass(frozen=True)
class Event:
    """One trace event: `line` in the file, `time`, `op` ("add" or "delete"), the pod's
    `namespace/name` key, the parsed pod for an add, and the node it is bound to (or None)."""

    line: int
    time: float
    op: str
    key: str
    pod: Optional[Pod] = None
    node: Optional[str] = None
    text: str = field(default="", compare=False, repr=False)


def merge_overrides(base: Mapping[str, object], overrides: Mapping[str, object]) -> dict:
    """`overrides` laid over `base`: maps merged key by key, anything else replaced."""
    out = copy.deepcopy(dict(base))
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_overrides(out[key], value)  # type: ignore[arg-type]
        else:
            out[key] = copy.deepcopy(value)
    return out


def _manifest(value: object, templates: Mapping[str, Mapping[str, object]], where: str) -> dict:
    doc = expect_map(value, where, "a v1 Pod manifest or {template, name, overrides}")
    if "template" not in doc:
        return dict(doc)
    check_keys(doc, where, TEMPLATE_KEYS)
    name = expect_str(doc["template"], join_path(where, "template"))
    if name not in templates:
        known = ", ".join(sorted(templates)) or "none defined"
        raise InputError(join_path(where, "template"), f"unknown template {name!r} (templates: {known})")
    pod = merge_overrides(templates[name], expect_map(doc.get("overrides"), join_path(where, "overrides")))
    meta = dict(expect_map(pod.get("metadata"), join_path(where, "metadata")))
    if "name" in doc:
        meta["name"] = expect_str(doc["name"], join_path(where, "name"))
    if "namespace" in doc:
        meta["namespace"] = expect_str(doc["namespace"], join_path(where, "namespace"))
    pod["metadata"] = meta
    return pod


def _pod(manifest: dict, where: str, limits: Limits = DEFAULT_LIMITS) -> Pod:
    """The event's pod (its UID by the project's one rule, `kubeinputs.pod.default_pod_uid`)."""
    return parse_pod(manifest, where, limits=limits)


def _delete_key(value: object, where: str) -> str:
    if isinstance(value, str) and value:
        return value if "/" in value else f"default/{value}"
    doc = expect_map(value, where, 'a pod name, "namespace/name" or {name, namespace}')
    check_keys(doc, where, ("name", "namespace"))
    name = expect_str(doc.get("name"), join_path(where, "name"))
    return f"{doc.get('namespace') or 'default'}/{name}"


def _time(value: object, where: str) -> float:
    """An event time: a number of seconds within +-2^53, where every integer is exact as a float
    (the events are ordered by it: NaN, infinities and larger numbers would misorder them)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(where, f"expected a number, got {type_name(value)} {brief(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(where, "expected a finite number, got one past the largest float (about 1.8e308)")
    if not -MAX_TIME <= value <= MAX_TIME:
        shown = f"{value:.3g}" if isinstance(value, float) else f"an integer of {len(str(abs(value))):,} digits"
        raise InputError(where, f"must be within -2^53 and 2^53 (about 9.0e15), got {shown}")
    return float(value)


def parse_event(obj: object, line: int, where: str, templates: Mapping[str, Mapping[str, object]],
                limits: Limits = DEFAULT_LIMITS) -> Event:
    """One decoded JSON line."""
    doc = expect_map(obj, where, "an event object")
    check_keys(doc, where, EVENT_KEYS)
    time = _time(doc.get("time", 0), join_path(where, "time"))
    node = doc.get("nodeName")
    if node is not None:
        node = expect_str(node, join_path(where, "nodeName"))
    if ("add" in doc) == ("delete" in doc):
        raise InputError(where, "expected exactly one of add or delete")
    if "delete" in doc:
        if node is not None:
            raise InputError(join_path(where, "nodeName"), "only an add is bound to a node")
        return Event(line, float(time), "delete", _delete_key(doc["delete"], join_path(where, "delete")))
    pod = _pod(_manifest(doc["add"], templates, join_path(where, "add")), join_path(where, "add"), limits)
    return Event(line, float(time), "add", f"{pod.namespace}/{pod.name}", pod, node)


def parse_trace(lines: Iterable[str], path: str, templates: Mapping[str, Mapping[str, object]],
                nodes: Iterable[str], limits: Limits = DEFAULT_LIMITS) -> list[Event]:
    """The events of a trace, checked and in replay order."""
    known = set(nodes)
    events: list[Event] = []
    for number, text in enumerate(lines, start=1):
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        where = f"{path}:{number}"
        event = replace(parse_event(load_json_text(text, where, limits), number, where, templates, limits), text=text)
        if event.node is not None and event.node not in known:
            raise InputError(join_path(where, "nodeName"), f"no node {event.node!r} in the fleet")
        events.append(event)
    events.sort(key=lambda e: e.time)  # stable: same time keeps file order
    active: set[str] = set()
    for event in events:
        where = f"{path}:{event.line}"
        if event.op == "add":
            if event.key in active:
                raise InputError(where, f"pod {event.key} is added while it is active")
            active.add(event.key)
        else:
            if event.key not in active:
                raise InputError(where, f"delete of pod {event.key}, which is not active at time {event.time:g}")
            active.discard(event.key)
    return events


def read_lines(path: str, progress: Optional[Callable[[int], None]] = None,
               limits: Limits = DEFAULT_LIMITS) -> Iterator[str]:
    """The lines of a trace file, each at most max_file_bytes long (a longer line, or a file that is
    not a regular one such as a FIFO or /dev/zero, is an InputError naming the file and the line);
    `progress` is told the bytes read."""
    if not os.path.isfile(path):
        what = "no such file" if not os.path.lexists(path) else "not a regular file: not read"
        raise InputError(path, what)
    limit = limits.max_file_bytes
    with open(path, "rb") as fh:
        for number, raw in enumerate(iter(lambda: fh.readline(limit + 1), b""), start=1):
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise InputError(f"{path}:{number}", f"line is longer than {limit:,} bytes, the max_file_bytes limit "
                                                     f"(raise it with {flag('max_file_bytes')})")
            if progress is not None:
                progress(len(raw))
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path}:{number}", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def load_trace(path: str, templates: Mapping[str, Mapping[str, object]], nodes: Iterable[str],
               progress: Optional[Callable[[int], None]] = None, limits: Limits = DEFAULT_LIMITS) -> list[Event]:
    """Read a trace file through the one strict JSON reader and `limits` (`progress`: bytes read)."""
    try:
        return parse_trace(read_lines(path, progress, limits), path, templates, nodes, limits)
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None


def reparse(lines: Iterable[tuple[int, str]], path: str, templates: Mapping[str, Mapping[str, object]],
            limits: Limits = DEFAULT_LIMITS) -> list[Event]:
    """Events again from (line number, text) pairs already checked by `parse_trace`, in the
    order given: how worker processes get their events (text ships faster than parsed pods)."""
    return [replace(parse_event(load_json_text(text, f"{path}:{number}", limits), number, f"{path}:{number}",
                                templates, limits), text=text) for number, text in lines]


def is_bound(events: Iterable[Event]) -> bool:
    """Every add names its node: the trace splits by node."""
    return all(e.node is not None for e in events if e.op == "add")
