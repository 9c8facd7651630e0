"""Durable checkpoint files (kubelet's checkpointmanager over util/store's FileStore).

A checkpoint is replaced whole, never edited in place: the new bytes go to a temporary
file in the same folder whose name starts with "." (mode 0600), which is fsynced, closed
and renamed over the checkpoint; then the folder itself is fsynced so that the rename is
durable too (kubelet stops after the rename). A crash at any moment therefore leaves
either the old file or the new one. Temporary files are never listed as checkpoints.

Every file system call goes through a `FileOps` object so that tests can make any step
fail (fault injection) and check what is left on disk.
"""
from __future__ import annotations

import os
import re
import tempfile

from kubeinputs.errors import InputError
from kubeinputs.limits import DEFAULT_LIMITS, Limits, read_bytes
from state.checkpoint_errors import CheckpointNotFoundError

TMP_PREFIX = "."
_KEY_RE = re.compile(r"^[a-zA-Z0-9._-]{1,250}$")


class StoreError(Exception):
    """A file system failure, with Go's error text (`open /x/.123: permission denied`)."""


def go_errno_text(err: OSError) -> str:
    """The text Go's syscall.Errno gives for an OSError (`no such file or directory`)."""
    text = err.strerror or (os.strerror(err.errno) if err.errno else str(err))
    return text[:1].lower() + text[1:]


def go_path_error(op: str, path: str, err: OSError) -> StoreError:
    """Go's *os.PathError text: `op path: reason`."""
    return StoreError(f"{op} {path}: {go_errno_text(err)}")


class FileOps:
    """The file system calls the store makes; override any of them to inject faults. A checkpoint is
    read up to `limits.max_checkpoint_bytes`."""

    limits: Limits = DEFAULT_LIMITS

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def mkdir_all(self, path: str) -> None:
        """Create the folder unless something already exists there (FileStore's ensureDirectory
        only stats the path, so a plain file is accepted here and fails at first use)."""
        if not os.path.exists(path):
            os.makedirs(path, mode=0o755, exist_ok=True)

    def create_temp(self, directory: str, prefix: str) -> tuple[int, str]:
        """A new file `<directory>/<prefix><random>`, mode 0600 (Go's os.CreateTemp)."""
        return tempfile.mkstemp(prefix=prefix, dir=directory)

    def write(self, fd: int, data: bytes) -> int:
        """Write some bytes; returns how many were written."""
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        """Flush the file's data to disk."""
        os.fsync(fd)

    def close(self, fd: int) -> None:
        """Close the file."""
        os.close(fd)

    def rename(self, src: str, dst: str) -> None:
        """Atomically replace dst by src."""
        os.rename(src, dst)

    def fsync_dir(self, directory: str) -> None:
        """Flush the folder, making a rename in it durable."""
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def remove(self, path: str) -> None:
        """Delete a file."""
        os.remove(path)

    def read_file(self, path: str) -> bytes:
        """A whole file's bytes (up to max_checkpoint_bytes)."""
        return read_bytes(path, limits=self.limits, limit_name="max_checkpoint_bytes")

    def list_dir(self, path: str) -> list[str]:
        """The names in a folder."""
        return os.listdir(path)


def read_checkpoint_file(path: str, limits: Limits = DEFAULT_LIMITS) -> bytes | None:
    """The bytes of a checkpoint file a tool reads (never writes), None when nothing is there.

    What is there but is no readable checkpoint is an InputError naming the path, worded as
    `checkpoint inspect|verify` word it: a folder, a FIFO (never opened), a file past the
    max_checkpoint_bytes limit (also a symbolic link to /dev/zero or /dev/urandom), a symbolic
    link loop, a permission problem. A dangling symbolic link is nothing there, as for kubelet."""
    try:
        return read_bytes(path, limits=limits, limit_name="max_checkpoint_bytes")
    except InputError as err:
        raise InputError("", err.reason, path) from None
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InputError("", "is a directory, not a checkpoint file", path) from None
    except OSError as err:
        raise InputError("", f"cannot read: {err.strerror or err}", path) from None


class MemoryFileOps(FileOps):
    """FileOps over a dict of path -> bytes: a checkpoint store that never touches the disk (explain
    --node reads a live node's checkpoint into it, and the simulated kubelet writes back into it)."""

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files: dict[str, bytes] = dict(files or {})
        self._open: dict[int, tuple[str, bytearray]] = {}

    def mkdir_all(self, path: str) -> None:
        """Nothing: folders are implied by the paths."""

    def create_temp(self, directory: str, prefix: str) -> tuple[int, str]:
        """A new in-memory file with a unique name."""
        fd = len(self._open) + 1
        while fd in self._open:
            fd += 1
        path = os.path.join(directory, f"{prefix}memory-{fd}")
        self._open[fd] = (path, bytearray())
        return fd, path

    def write(self, fd: int, data: bytes) -> int:
        """Append to the open file."""
        self._open[fd][1].extend(data)
        return len(data)

    def fsync(self, fd: int) -> None:
        """Nothing."""

    def close(self, fd: int) -> None:
        """The file's bytes become readable under its name."""
        path, data = self._open.pop(fd)
        self.files[path] = bytes(data)

    def rename(self, src: str, dst: str) -> None:
        """Move the bytes to the new name."""
        self.files[dst] = self.files.pop(src)

    def fsync_dir(self, directory: str) -> None:
        """Nothing."""

    def remove(self, path: str) -> None:
        """Forget a file (FileNotFoundError when there is none)."""
        if self.files.pop(path, None) is None:
            raise FileNotFoundError(2, "No such file or directory", path)

    def read_file(self, path: str) -> bytes:
        """A file's bytes (FileNotFoundError when there is none)."""
        if path not in self.files:
            raise FileNotFoundError(2, "No such file or directory", path)
        return self.files[path]

    def list_dir(self, path: str) -> list[str]:
        """The names of the files directly in a folder."""
        return sorted(os.path.basename(p) for p in self.files if os.path.dirname(p) == path)


class NoSyncFileOps(FileOps):
    """FileOps without the fsyncs, for a throwaway folder (the runner's default temporary state
    folder, deleted after its scenario): writes stay atomic (temporary file, then rename), only the
    durability a power cut needs is dropped, which costs ~1 ms per write and nothing a scenario sees."""

    def fsync(self, fd: int) -> None:
        """Nothing."""

    def fsync_dir(self, directory: str) -> None:
        """Nothing."""


def write_file(ops: FileOps, path: str, data: bytes) -> None:
    """Replace `path` by `data` atomically and durably (FileStore's writeFile, plus the folder fsync)."""
    directory = os.path.dirname(path) or "."
    try:
        fd, tmp_path = ops.create_temp(directory, TMP_PREFIX)
    except OSError as err:
        raise go_path_error("open", os.path.join(directory, TMP_PREFIX + "*"), err) from err
    closed = False
    step = "write"
    try:
        view = memoryview(data)
        while view:
            written = ops.write(fd, view)
            view = view[written:]
        step = "sync"
        ops.fsync(fd)
        step = "close"
        closed = True
        ops.close(fd)
        step = "rename"
        ops.rename(tmp_path, path)
    except BaseException as err:
        if not closed:
            try:
                ops.close(fd)
            except OSError:
                pass
        try:
            ops.remove(tmp_path)
        except OSError:
            pass
        if isinstance(err, OSError):
            if step == "rename":
                raise StoreError(f"rename {tmp_path} {path}: {go_errno_text(err)}") from err
            error = go_path_error(step, tmp_path, err)
            if step == "close":
                error = StoreError(f"close error: {error}")
            raise error from err
        raise
    try:
        ops.fsync_dir(directory)
    except OSError as err:
        raise go_path_error("sync", directory, err) from err


# The names `write_file` gives its temporary files (tempfile.mkstemp: the prefix and 8 characters).
_TEMP_NAME_RE = re.compile(r"^\.[a-z0-9_]{8}$")


def remove_temp_files(directory: str, ops: FileOps | None = None) -> list[str]:
    """Remove the temporary files an interrupted `write_file` left in `directory` (a process killed
    between creating and renaming one); only regular files named as write_file names them. Call it
    when nothing writes there (at start). Returns the names removed; a folder that cannot be listed
    gives none."""
    ops = ops or FileOps()
    try:
        names = ops.list_dir(directory)
    except OSError:
        return []
    removed = []
    for name in sorted(names):
        path = os.path.join(directory, name)
        if _TEMP_NAME_RE.match(name) and os.path.isfile(path) and not os.path.islink(path):
            try:
                ops.remove(path)
                removed.append(name)
            except OSError:
                pass
    return removed


class FileStore:
    """util/store's FileStore: one file per key in a folder."""

    def __init__(self, directory: str, ops: FileOps | None = None):
        """The store's folder is created (0755) if nothing is there."""
        self.directory = directory
        self.ops = ops or FileOps()
        self._ensure_directory()

    def _ensure_directory(self) -> None:
        """ensureDirectory: create the folder when it is missing."""
        try:
            self.ops.mkdir_all(self.directory)
        except OSError as err:
            raise go_path_error("mkdir", self.directory, err) from err

    def path(self, key: str) -> str:
        """The file of a key."""
        return os.path.join(self.directory, key)

    @staticmethod
    def validate_key(key: str) -> None:
        """Keys are plain file names."""
        if not _KEY_RE.match(key):
            raise StoreError(f"invalid key: {key!r}")

    def write(self, key: str, data: bytes) -> None:
        """Replace the key's file durably."""
        self.validate_key(key)
        self._ensure_directory()
        write_file(self.ops, self.path(key), data)

    def read(self, key: str) -> bytes:
        """The file's bytes; CheckpointNotFoundError when it does not exist."""
        self.validate_key(key)
        path = self.path(key)
        try:
            return self.ops.read_file(path)
        except FileNotFoundError as err:
            raise CheckpointNotFoundError() from err
        except InputError as err:  # past the project's size limit (kubelet has none)
            raise StoreError(f"read {path}: {err.reason}") from None
        except IsADirectoryError as err:
            raise go_path_error("read", path, err) from err
        except OSError as err:
            raise go_path_error("open", path, err) from err

    def delete(self, key: str) -> None:
        """Remove the key's file; a missing one is not an error."""
        self.validate_key(key)
        try:
            self.ops.remove(self.path(key))
        except FileNotFoundError:
            pass
        except OSError as err:
            raise go_path_error("remove", self.path(key), err) from err

    def list(self) -> list[str]:
        """The keys, temporary files excluded."""
        return sorted(name for name in self.ops.list_dir(self.directory) if not name.startswith(TMP_PREFIX))


class CheckpointManager:
    """checkpointmanager.CheckpointManager over a FileStore."""

    def __init__(self, directory: str, ops: FileOps | None = None):
        """A manager over a FileStore in `directory`."""
        self.store = FileStore(directory, ops)

    def write_blob(self, key: str, data: bytes) -> None:
        """Write already-marshalled checkpoint bytes durably."""
        self.store.write(key, data)

    def read_blob(self, key: str) -> bytes:
        """The raw bytes of a checkpoint (CheckpointNotFoundError when missing)."""
        return self.store.read(key)

    def list_checkpoints(self) -> list[str]:
        """The checkpoints in the folder."""
        return self.store.list()
