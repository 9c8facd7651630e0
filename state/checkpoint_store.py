"""What kubelet's checkpoint-backed state stores share (the memory manager's and the CPU manager's
state_checkpoint.go): one file in a checkpoint manager's folder, restored at creation (or written
fresh when missing), written whole after every change (or once, at the end of `deferred_writes`),
and a failed write only logged and remembered, as kubelet does (the in-memory state stays the truth).

A store says how its state is read back (`_load`), encoded (`checkpoint_bytes`), and how kubelet
words a restore failure (`_restore_error`); its readers and writers are its own.
"""
from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from typing import Iterable, Iterator, Optional

from state.checkpoint_errors import CheckpointNotFoundError
from state.checkpoint_manager import CheckpointManager, FileOps, StoreError


def go_join(directory: str, name: str) -> str:
    """filepath.Join: joined and cleaned."""
    path = os.path.normpath(os.path.join(directory, name))
    return "/" + path.lstrip("/") if path.startswith("//") else path


def open_checkpoint_manager(state_dir: str, ops: Optional[FileOps], error: type[Exception]) -> CheckpointManager:
    """kubelet's NewCheckpointManager for `state_dir`; its failure raised as `error` with kubelet's text."""
    try:
        return CheckpointManager(state_dir, ops)
    except StoreError as err:
        raise error(f"failed to initialize checkpoint manager: {err}") from err


class CheckpointStore:
    """A state store backed by one checkpoint file (see the module); call restore() before use."""

    def __init__(self, manager: CheckpointManager, checkpoint_name: str, policy_name: str, write_format: str,
                 formats: Iterable[str], log: logging.Logger) -> None:
        """A store over `manager`'s folder, writing `write_format` (one of `formats`)."""
        formats = tuple(formats)
        if write_format not in formats:
            raise ValueError(f"unknown checkpoint format {write_format!r}: expected one of {', '.join(formats)}")
        self._manager = manager
        self.checkpoint_name = checkpoint_name
        self.policy_name = policy_name
        self.write_format = write_format
        self.restored_format: Optional[str] = None  # the format read back, or None when created fresh
        self._deferring = 0  # > 0 inside deferred_writes(): writes wait for its end
        self._dirty = False
        self.last_store_error: Optional[Exception] = None
        self._log = log

    @property
    def path(self) -> str:
        """The checkpoint file's path, as kubelet prints it."""
        return go_join(self._manager.store.directory, self.checkpoint_name)

    def restore(self) -> None:
        """restoreState: load the file (`_load`), or create it when missing; failures as `_restore_error`."""
        try:
            blob = self._manager.read_blob(self.checkpoint_name)
        except CheckpointNotFoundError:
            try:
                self._store()
            except StoreError as err:
                raise self._restore_error(err) from err
            return
        except StoreError as err:
            raise self._restore_error(err) from err
        self._load(blob)

    def _load(self, blob: bytes) -> None:
        """The state of the file's bytes, checked as kubelet checks them (raises `_restore_error`'s type)."""
        raise NotImplementedError

    def _restore_error(self, reason: object) -> Exception:
        """kubelet's wrapper around a restore failure of this store's file."""
        raise NotImplementedError

    def checkpoint_bytes(self) -> bytes:
        """The bytes the next write puts in the file."""
        raise NotImplementedError

    @contextmanager
    def deferred_writes(self) -> Iterator["CheckpointStore"]:
        """Inside: the writers change the state but the file is written once, at the end (if anything
        changed); the file after the block is the one kubelet leaves after the same calls (a crash inside
        it leaves the state before them)."""
        self._deferring += 1
        try:
            yield self
        finally:
            self._deferring -= 1
            if self._deferring == 0 and self._dirty:
                self._dirty = False
                self._store_logged()

    def _store(self) -> None:
        """Write the whole checkpoint (raises on failure)."""
        self._manager.write_blob(self.checkpoint_name, self.checkpoint_bytes())

    def _store_logged(self) -> None:
        """Write the checkpoint after a change (or mark it due, inside deferred_writes); a failure is
        logged and remembered, as kubelet does."""
        if self._deferring:
            self._dirty = True
            return
        try:
            self._store()
            self.last_store_error = None
        except (StoreError, OSError) as err:
            self.last_store_error = err
            self._log.error("Failed to store state to checkpoint: %s", err)
