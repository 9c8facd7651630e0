"""Records of the DRA memory claims a backend has allocated, keyed by claim UID.

A claim cannot be rebuilt from running containers (it may have none yet), so every record
is saved with the durable write (temp file, fsync, rename) to `<folder>/claims.json`
whenever the set changes, and read back on start. A record says, per allocation result,
which device, NUMA node, resource and size it took, and the container edits handed out, so
that preparing the same claim again returns them unchanged.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from kubeinputs.errors import brief, describe
from memorymanager.resmgr.durable import read_json, write_json
from state.checkpoint_manager import FileOps
from memorymanager.resmgr.types import ContainerEdits, PolicyError

MAX_NUMA_ID = (1 << 31) - 1  # a machine's NUMA ids (cadvisor's node_id is an int32)
INT64_MAX = (1 << 63) - 1

CLAIMS_FILE = "claims.json"
CLAIMS_VERSION = 1


@dataclass(frozen=True)
class ClaimAllocation:
    """One allocation result of a claim: `size` bytes of `resource` on NUMA node `numa_node`."""

    request: str
    device: str
    numa_node: int
    resource: str
    size: int


@dataclass(frozen=True)
class ClaimRecord:
    """What a backend gave a claim: its allocations (results order) and the edits returned."""

    uid: str
    name: str
    namespace: str
    allocations: tuple[ClaimAllocation, ...]
    edits: tuple[ContainerEdits, ...]

    @property
    def pretty_name(self) -> str:
        """`claim namespace/name (uid)`, for messages."""
        return f"claim {self.namespace}/{self.name} ({self.uid})" if self.name else f"claim {self.uid}"

    def numa_nodes(self) -> list[int]:
        """The claim's NUMA nodes, ascending."""
        return sorted({a.numa_node for a in self.allocations})

    def to_json(self) -> dict[str, object]:
        """The persisted form."""
        return {
            "uid": self.uid, "name": self.name, "namespace": self.namespace,
            "allocations": [{"request": a.request, "device": a.device, "numaNode": a.numa_node,
                             "resource": a.resource, "size": a.size} for a in self.allocations],
            "edits": [{"env": list(e.env)} for e in self.edits],
        }

    @classmethod
    def from_json(cls, doc: object, where: str) -> "ClaimRecord":
        """A record from its persisted form; PolicyError naming `where` and the bad field when malformed."""
        def bad(path: str, what: str, value: object) -> PolicyError:
            return PolicyError(f"{where}.{path}: malformed claim record: expected {what}, got {describe(value)}")

        def text(parent: Mapping, key: str, path: str, empty: bool = True) -> str:
            value = parent.get(key, "" if key in ("name",) else None)
            if not isinstance(value, str) or (not empty and not value):
                raise bad(path, "a string" if empty else "a non-empty string", value)
            return value

        def whole(parent: Mapping, key: str, path: str, low: int, high: int) -> int:
            value = parent.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise bad(path, f"an integer from {low} to {high}", value)
            return value

        if not isinstance(doc, Mapping):
            raise bad("(record)", "a map", doc)
        uid = text(doc, "uid", "uid", empty=False)
        name = text(doc, "name", "name")
        namespace = doc.get("namespace", "default")
        if not isinstance(namespace, str):
            raise bad("namespace", "a string", namespace)
        raw_allocations, raw_edits = doc.get("allocations"), doc.get("edits")
        if not isinstance(raw_allocations, list):
            raise bad("allocations", "a list", raw_allocations)
        if not isinstance(raw_edits, list):
            raise bad("edits", "a list", raw_edits)
        allocations = []
        for i, a in enumerate(raw_allocations):
            path = f"allocations[{i}]"
            if not isinstance(a, Mapping):
                raise bad(path, "a map", a)
            allocations.append(ClaimAllocation(text(a, "request", f"{path}.request"), text(a, "device", f"{path}.device"),
                                               whole(a, "numaNode", f"{path}.numaNode", 0, MAX_NUMA_ID),
                                               text(a, "resource", f"{path}.resource", empty=False),
                                               whole(a, "size", f"{path}.size", 0, INT64_MAX)))
        edits = []
        for i, e in enumerate(raw_edits):
            env = e.get("env") if isinstance(e, Mapping) else None
            if not isinstance(env, list) or not all(isinstance(v, str) for v in env):
                raise bad(f"edits[{i}].env", "a list of strings", env)
            edits.append(ContainerEdits(tuple(env)))
        return cls(uid, name, namespace, tuple(allocations), tuple(edits))


class ClaimStore:
    """Claim records by UID, saved to `<directory>/claims.json` (in memory when no directory)."""

    def __init__(self, directory: Optional[str], *, ops: Optional[FileOps] = None) -> None:
        self.directory = directory
        self.ops = ops  # the file system calls of its writes (None: the durable default)
        self._records: dict[str, ClaimRecord] = {}

    @property
    def path(self) -> Optional[str]:
        """The records file, or None in memory."""
        return None if self.directory is None else os.path.join(self.directory, CLAIMS_FILE)

    def load(self) -> None:
        """Read the records back (none when the file does not exist)."""
        self._records = {}
        if self.path is None:
            return
        doc = read_json(self.path, "claim records")
        if doc is None:
            return
        if not isinstance(doc, dict) or doc.get("version") != CLAIMS_VERSION or not isinstance(doc.get("claims"), dict):
            raise PolicyError(f"claim records {self.path}: expected version {CLAIMS_VERSION} with a map of claims")
        for uid, entry in doc["claims"].items():
            where = f"claim records {self.path}: claims[{brief(uid)}]"
            record = ClaimRecord.from_json(entry, where)
            if record.uid != uid:
                raise PolicyError(f"{where}: malformed claim record: it is kept under {brief(uid)} but its uid is "
                                  f"{brief(record.uid)}")
            self._records[record.uid] = record

    def save(self) -> None:
        """Write every record durably."""
        if self.path is not None:
            write_json(self.path, {"version": CLAIMS_VERSION,
                                   "claims": {uid: r.to_json() for uid, r in sorted(self._records.items())}},
                       self.ops)

    def get(self, uid: str) -> Optional[ClaimRecord]:
        """The record of a claim, or None."""
        return self._records.get(uid)

    def put(self, record: ClaimRecord) -> None:
        """Add a record and save."""
        self._records[record.uid] = record
        self.save()

    def remove(self, uid: str) -> Optional[ClaimRecord]:
        """Drop a record (None when unknown) and save."""
        gone = self._records.pop(uid, None)
        if gone is not None:
            self.save()
        return gone

    def records(self) -> list[ClaimRecord]:
        """Every record, by UID."""
        return [self._records[uid] for uid in sorted(self._records)]
