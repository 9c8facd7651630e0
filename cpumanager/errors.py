"""The CPU manager's error type: every refusal it reports carries kubelet's exact text."""
from __future__ import annotations

from kubeinputs.errors import Error


class CPUManagerError(Error):
    """An error kubelet's CPU manager reports (start, allocation); str() is kubelet's message."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
