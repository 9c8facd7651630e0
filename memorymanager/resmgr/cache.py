"""The resource manager's container cache: what a policy knows about each container.

A `Container` carries its pod (the v1 Pod manifest, parsed and defaulted as kubelet sees
it), its name, QoS class and resources, the DRA claims it uses, the memory set the policy
assigned and whether it has started. `ContainerCache` keeps them by container ID and, given
a folder, persists them to `<folder>/cache` (JSON, durable write) and restores them when it
is built again, as the nri-plugins cache does; each container also gets a data folder
`<folder>/containers/<id>/` (mode 0755, readable by a non-root container user) where
`resources.sh` goes.

The cache also keeps the containers' pending changes (`ContainerUpdate`: the cpuset a policy set
and the runtime has not been told yet), as the nri-plugins cache does: in memory only, a container's
pending change taken once by whoever carries it to the runtime (the resource manager's NRI response,
or `Owner.update_containers`), and dropped with the container.
"""
from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional

from kubeinputs.errors import InputError, describe, type_name
from kubeinputs.pod import Container as PodContainer, Pod
from kubeinputs.qos import get_pod_qos

from memorymanager.node.api import read_pod
from memorymanager.resmgr.durable import read_json, write_json
from memorymanager.resmgr.types import (
    ContainerUpdate,
    PolicyArgumentError,
    PolicyError,
    check_instance,
    check_str,
    check_strings,
)
from state.checkpoint_manager import FileOps

CACHE_FILE = "cache"
CACHE_VERSION = "1"
DATA_FOLDER_MODE = 0o755  # the nri-plugins cache's container data folders: a non-root container user reads them
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


@dataclass
class Container:
    """One container as the resource manager knows it.

    `pod` is the v1 Pod manifest (every container of the pod: kubelet admits pods whole);
    `claims` the UIDs of the DRA claims the container uses; `memset` and `cpus` the `cpuset.mems`
    and `cpuset.cpus` the policy gave it ("" for none); `started` set by `container_started`.
    """

    id: str
    pod: dict[str, object]
    name: str
    claims: tuple[str, ...] = ()
    memset: str = ""
    started: bool = False
    cpus: str = ""
    _parsed: Optional[Pod] = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_container_id(self.id, "container.id")
        if not isinstance(self.pod, Mapping):
            raise PolicyArgumentError("container.pod", f"expected a v1 Pod manifest (a map), got {type_name(self.pod)}")
        check_str(self.name, "container.name")
        self.claims = check_strings(self.claims, "container.claims")
        check_str(self.memset, "container.memset")
        check_str(self.cpus, "container.cpus")
        if not isinstance(self.started, bool):
            raise PolicyArgumentError("container.started", f"expected true or false, got {type_name(self.started)}")
        parsed = self.parsed_pod()
        if parsed.find_container(self.name) is None:
            names = ", ".join(c.name for c in parsed.all_containers())
            raise InputError("container.name", f"pod {parsed.name!r} has no container {self.name!r} (it has {names})")

    def parsed_pod(self) -> Pod:
        """The pod, parsed and defaulted (raises InputError naming what is wrong in the manifest)."""
        if self._parsed is None:
            self._parsed = read_pod(self.pod)
        return self._parsed

    @property
    def pod_uid(self) -> str:
        """The pod's UID (its name when the manifest has none)."""
        return self.parsed_pod().uid

    @property
    def pod_name(self) -> str:
        """The pod's name."""
        return self.parsed_pod().name

    @property
    def namespace(self) -> str:
        """The pod's namespace."""
        return self.parsed_pod().namespace

    @property
    def qos_class(self) -> str:
        """Guaranteed, Burstable or BestEffort (PodLevelResources on, as in v1.37)."""
        return get_pod_qos(self.parsed_pod(), True)

    @property
    def spec(self) -> PodContainer:
        """The container's spec in the parsed pod."""
        found = self.parsed_pod().find_container(self.name)
        assert found is not None  # checked in __post_init__
        return found

    @property
    def resources(self) -> dict[str, dict[str, str]]:
        """`{"requests": {...}, "limits": {...}}` as quantity strings (after defaulting)."""
        res = self.spec.resources
        return {"requests": {k: str(v) for k, v in res.requests.items()},
                "limits": {k: str(v) for k, v in res.limits.items()}}

    def pretty_name(self) -> str:
        """`namespace/pod/container`, for messages."""
        return f"{self.namespace}/{self.pod_name}/{self.name}"

    def to_json(self) -> dict[str, object]:
        """The persisted form."""
        return {"id": self.id, "pod": self.pod, "name": self.name, "claims": list(self.claims),
                "memset": self.memset, "started": self.started, "cpus": self.cpus}

    @classmethod
    def from_json(cls, doc: Mapping[str, object], where: str) -> "Container":
        """A container from its persisted form (InputError naming `where` on a bad entry)."""
        if not isinstance(doc, Mapping) or not {"id", "pod", "name"} <= set(doc):
            raise InputError(where, "expected a container entry with id, pod and name")
        claims = doc.get("claims") or []
        if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
            raise InputError(f"{where}.claims", "expected a list of claim UIDs")
        try:
            return cls(id=doc["id"], pod=copy.deepcopy(doc["pod"]), name=doc["name"],  # type: ignore[arg-type]
                       claims=tuple(claims), memset=doc.get("memset") or "",  # type: ignore[arg-type]
                       started=doc.get("started", False), cpus=doc.get("cpus") or "")  # type: ignore[arg-type]
        except InputError as err:
            raise InputError(f"{where}: {err.where}", err.reason) from None


def check_container_id(value: object, where: str) -> str:
    """A container ID (letters, digits, '.', '_', '-'; it names a folder, so no '/' or '..'), else a
    PolicyArgumentError naming `where`."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise PolicyArgumentError(where, f"expected a container ID (letters, digits, '.', '_', '-'), got {describe(value)}")
    return value


class ContainerCache:
    """Containers by ID, persisted to `<directory>/cache` when a directory is given.

    Every change is saved at once (durable write); building a cache on a folder that has a
    `cache` file restores its containers.
    """

    def __init__(self, directory: Optional[str] = None, *, ops: Optional[FileOps] = None) -> None:
        if directory is not None and (not isinstance(directory, (str, os.PathLike)) or not os.fspath(directory)
                                      or "\0" in os.fspath(directory)):
            raise PolicyArgumentError("ContainerCache.directory", f"expected a folder path or None, got "
                                      f"{describe(directory)}")
        self.directory = None if directory is None else os.fspath(directory)
        self.ops = ops  # the file system calls of its writes (None: the durable default)
        self._containers: dict[str, Container] = {}
        self._pending: dict[str, ContainerUpdate] = {}
        if directory is not None:
            self._load()

    @property
    def path(self) -> Optional[str]:
        """The cache file, or None for a cache in memory."""
        return None if self.directory is None else os.path.join(self.directory, CACHE_FILE)

    def _load(self) -> None:
        path = self.path
        assert path is not None
        doc = read_json(path, "container cache")
        if doc is None:
            return
        if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION or not isinstance(doc.get("containers"), list):
            raise PolicyError(f"container cache {path}: expected version {CACHE_VERSION!r} with a list of containers")
        for i, entry in enumerate(doc["containers"]):
            try:
                c = Container.from_json(entry, f"containers[{i}]")
            except InputError as err:
                raise PolicyError(f"container cache {path}: {err}") from err
            self._containers[c.id] = c

    def save(self) -> None:
        """Write the cache file (nothing for a cache in memory)."""
        if self.path is not None:
            write_json(self.path, {"version": CACHE_VERSION,
                                   "containers": [c.to_json() for c in self._containers.values()]}, self.ops)

    def insert(self, container: Container) -> Container:
        """Add or replace a container; saved."""
        check_instance(container, Container, "ContainerCache.insert: container")
        self._containers[container.id] = container
        self.save()
        return container

    def delete(self, container_id: str) -> Optional[Container]:
        """Forget a container (None when unknown); saved."""
        check_str(container_id, "ContainerCache.delete: container_id")
        gone = self._containers.pop(container_id, None)
        self._pending.pop(container_id, None)
        if gone is not None:
            self.save()
        return gone

    def lookup(self, container_id: str) -> Optional[Container]:
        """The container with this ID, or None."""
        check_str(container_id, "ContainerCache.lookup: container_id")
        return self._containers.get(container_id)

    def containers(self) -> list[Container]:
        """Every container, in insertion order."""
        return list(self._containers.values())

    def __iter__(self) -> Iterator[Container]:
        return iter(self.containers())

    def __len__(self) -> int:
        return len(self._containers)

    # ----- pending changes -----

    def set_cpuset(self, container_id: str, *, cpus: Optional[str] = None, mems: Optional[str] = None) -> None:
        """Record a pending change of a cached container's cpuset.cpus and/or cpuset.mems (None: unchanged);
        it merges with a change still pending."""
        check_str(container_id, "ContainerCache.set_cpuset: container_id")
        if container_id not in self._containers:
            raise PolicyError(f"container {container_id!r} is not cached: no change can be pending for it")
        if cpus is None and mems is None:
            return
        change = ContainerUpdate(container_id, cpus, mems)
        known = self._pending.get(container_id)
        self._pending[container_id] = change if known is None else known.merged(change)

    def pending(self) -> list[ContainerUpdate]:
        """Every pending change, in cache order (nothing is taken)."""
        return [self._pending[c] for c in self._containers if c in self._pending]

    def take_pending(self, container_id: str) -> Optional[ContainerUpdate]:
        """The container's pending change, now no longer pending (None when there is none): NRI's
        adjustment of the container a CreateContainer request creates."""
        check_str(container_id, "ContainerCache.take_pending: container_id")
        return self._pending.pop(container_id, None)

    def take_pending_updates(self, skip: Optional[str] = None) -> list[ContainerUpdate]:
        """Every pending change but `skip`'s, in cache order, now no longer pending: the updates an NRI
        response (or an unsolicited UpdateContainers) carries."""
        taken = [u for u in self.pending() if u.container_id != skip]
        for u in taken:
            del self._pending[u.container_id]
        return taken

    # ----- container data -----

    def container_directory(self, container_id: str) -> str:
        """The container's data folder, created with mode 0755 whatever the umask (a container running
        as a non-root user reads its `resources.sh` there); a symbolic link or non-folder in its place is
        refused."""
        check_container_id(container_id, "ContainerCache.container_directory: container_id")
        if self.directory is None:
            raise PolicyError("the container cache has no folder to write container data into")
        parent = os.path.join(self.directory, "containers")
        path = os.path.join(parent, container_id)
        for folder in (parent, path):
            _data_folder(folder)
        return path


def _data_folder(path: str) -> None:
    """Make `path` a real folder with mode 0755 (explicitly, not left to the umask)."""
    try:
        os.makedirs(path, mode=DATA_FOLDER_MODE, exist_ok=True)
        if os.path.islink(path) or not os.path.isdir(path):
            raise PolicyError(f"container data folder {path} exists, but is not a folder (or is a symbolic link)")
        os.chmod(path, DATA_FOLDER_MODE)
    except OSError as err:
        raise PolicyError(f"cannot create container data folder {path}: {err.strerror or err}") from err
