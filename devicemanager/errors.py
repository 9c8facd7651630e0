"""The device manager's errors: kubelet's texts for refused allocations and unreadable checkpoints."""
from __future__ import annotations

from typing import Optional

from kubeinputs.errors import Error, InputError


class DeviceManagerError(Error):
    """An error kubelet's device manager returns; str() is kubelet's text (`requested number of devices
    unavailable for nvidia.com/gpu. Requested: 2, Available: 1`). Raised by `allocate` to refuse a container."""


class DeviceCheckpointError(InputError):
    """A `kubelet_internal_checkpoint` that cannot be restored: `where` is the path inside the document
    (`Data.PodDeviceEntries[0].AllocResp`, or "" for the whole file), `reason` kubelet's text
    (`checkpoint is corrupted`, Go's JSON error) or, for the strict checks, what does not fit the node."""

    def __init__(self, where: str, reason: str, file: Optional[str] = None) -> None:
        super().__init__(where, reason, file)
