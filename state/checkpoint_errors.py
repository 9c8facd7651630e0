"""The errors of checkpoint loading (kubelet's checkpointmanager/errors, plus Go's error wrapping).

Every str() is the text kubelet prints.
"""
from __future__ import annotations


class CheckpointError(Exception):
    """A checkpoint that cannot be loaded; str() is kubelet's error text."""


class CorruptCheckpointError(CheckpointError):
    """errors.CorruptCheckpointError: the stored checksum does not match the content."""

    def __init__(self, actual: int = 0, expected: int = 0):
        """Keep the checksums for the report."""
        super().__init__("checkpoint is corrupted")
        self.actual, self.expected = actual, expected


class CheckpointNotFoundError(CheckpointError):
    """errors.ErrCheckpointNotFound: there is no checkpoint file."""

    def __init__(self) -> None:
        """kubelet's fixed message."""
        super().__init__("checkpoint is not found")


class WrappedCheckpointError(CheckpointError):
    """An error wrapped with a prefix (Go's fmt.Errorf("...: %w", err))."""

    def __init__(self, prefix: str, cause: Exception):
        """The prefixed message; the wrapped error stays available as `cause`."""
        super().__init__(f"{prefix}: {cause}")
        self.cause = cause
