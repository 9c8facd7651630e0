"""Durable, atomic file writes for the resource manager's files (claim records, the container
cache, `resources.sh`): the project's checkpoint writer (temporary file in the same folder,
fsync, rename, folder fsync), so a crash leaves either the old file or the new one."""
from __future__ import annotations

import json
import os
from typing import Optional

from state.checkpoint_manager import FileOps, StoreError, write_file

from memorymanager.resmgr.types import PolicyError


def atomic_write(path: str, data: bytes, mode: int = 0o644, ops: Optional[FileOps] = None) -> None:
    """Replace `path` by `data` (temp, fsync, rename, folder fsync), then set its mode."""
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        write_file(ops or FileOps(), path, data)
        os.chmod(path, mode)
    except (OSError, StoreError) as err:
        raise PolicyError(f"cannot write {path}: {err}") from err


def write_json(path: str, doc: object, ops: Optional[FileOps] = None) -> None:
    """`doc` as sorted, indented JSON, written atomically with mode 0600."""
    atomic_write(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode(), 0o600, ops)


def read_json(path: str, what: str) -> Optional[object]:
    """The JSON document in `path`, None when there is no such file; a clear PolicyError when
    the file is not JSON (naming the file and `what` it should hold)."""
    from kubeinputs.errors import InputError
    from kubeinputs.limits import read_bytes
    from kubeinputs.reader import load_json_text

    try:
        blob = read_bytes(path, limit_name="max_checkpoint_bytes")
    except FileNotFoundError:
        return None
    except InputError as err:
        raise PolicyError(f"cannot read {what} {path}: {err.reason}") from None
    except OSError as err:
        raise PolicyError(f"cannot read {what} {path}: {err.strerror}") from err
    try:
        return load_json_text(blob.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise PolicyError(f"{what} {path} is not valid JSON: not UTF-8 at byte {err.start}") from None
    except InputError as err:
        reason = err.reason[len("not valid JSON: "):] if err.reason.startswith("not valid JSON: ") else err.reason
        raise PolicyError(f"{what} {path} is not valid JSON: {reason}") from None
