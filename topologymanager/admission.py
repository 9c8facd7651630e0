"""Pod admission results (kubelet's lifecycle.PodAdmitResult and cm/admission/errors.go).

An error that knows its admission reason (kubelet: implements `Type() string`) keeps
that reason and its own message; any other error becomes `UnexpectedAdmissionError`
with the message `Allocate failed due to <err>, which is unexpected`.

In Python an exception states its reason with an `error_type` attribute (a string)
or a `type()` method returning one. Like Go's errors.As, the explicit cause chain
(`raise X from Y`) is searched too, the exception itself first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

ERROR_REASON_UNEXPECTED = "UnexpectedAdmissionError"
ERROR_TOPOLOGY_AFFINITY = "TopologyAffinityError"
TOPOLOGY_AFFINITY_MESSAGE = "Resources cannot be allocated with Topology locality"


@dataclass(frozen=True)
class PodAdmitResult:
    """kubelet's PodAdmitResult. `error` (not compared) is the exception that caused a rejection."""

    admit: bool
    reason: str = ""
    message: str = ""
    error: Optional[BaseException] = field(default=None, compare=False, repr=False)


class TopologyAffinityError(Exception):
    """The policy rejected the merged hint (kubelet's TopologyAffinityError)."""

    error_type = ERROR_TOPOLOGY_AFFINITY

    def __init__(self, message: str = TOPOLOGY_AFFINITY_MESSAGE) -> None:
        """kubelet's message unless another is given."""
        super().__init__(message)


def admission_error_type(err: BaseException) -> Optional[str]:
    """The admission reason an exception declares (`error_type` attribute or `type()` method), or None."""
    declared = getattr(err, "error_type", None)
    if isinstance(declared, str):
        return declared
    method = getattr(err, "type", None)
    if callable(method):
        try:
            value = method()
        except TypeError:
            return None
        if isinstance(value, str):
            return value
    return None


def _find_admission_error(err: BaseException) -> Optional[tuple[BaseException, str]]:
    """The first exception in err's explicit cause chain that declares a reason (errors.As)."""
    seen: set[int] = set()
    current: Optional[BaseException] = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        reason = admission_error_type(current)
        if reason is not None:
            return current, reason
        current = current.__cause__
    return None


def get_pod_admit_result(err: Optional[BaseException]) -> PodAdmitResult:
    """kubelet's admission.GetPodAdmitResult: admit when err is None, else the rejection it describes."""
    if err is None:
        return PodAdmitResult(admit=True)
    found = _find_admission_error(err)
    if found is None:
        return PodAdmitResult(
            admit=False,
            reason=ERROR_REASON_UNEXPECTED,
            message=f"Allocate failed due to {err}, which is unexpected",
            error=err,
        )
    cause, reason = found
    return PodAdmitResult(admit=False, reason=reason, message=str(cause), error=err)
