"""Pod admission results (kubelet's lifecycle.PodAdmitResult and cm/admission/errors.go).

An error that knows its admission reason (kubelet: implements `Type() string`) keeps
that reason and its own message; any other error becomes `UnexpectedAdmissionError`
with the message `Allocate failed due to <err>, which is unexpected`.

Since v1.36 (KEP-5526) an error may be an aggregate of several (`AggregateError`, kubelet's
utilerrors.Aggregate). Errors whose reason is `CPUManagerPodLevelResourcesError` or
`MemoryManagerPodLevelResourcesError` are only warnings: if every error is one, the pod is
admitted with reason `PodLevelResourcesIncompatible`, an empty message and the warnings in
`errors`; otherwise the first other error decides as above.

In Python an exception states its reason with an `error_type` attribute (a string)
or a `type()` method returning one. Like Go's errors.As, the explicit cause chain
(`raise X from Y`) is searched too, the exception itself first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

ERROR_REASON_UNEXPECTED = "UnexpectedAdmissionError"
POD_LEVEL_RESOURCES_INCOMPATIBLE = "PodLevelResourcesIncompatible"
CPU_MANAGER_POD_LEVEL_RESOURCES_ERROR = "CPUManagerPodLevelResourcesError"
MEMORY_MANAGER_POD_LEVEL_RESOURCES_ERROR = "MemoryManagerPodLevelResourcesError"
POD_LEVEL_WARNING_TYPES = (CPU_MANAGER_POD_LEVEL_RESOURCES_ERROR, MEMORY_MANAGER_POD_LEVEL_RESOURCES_ERROR)
ERROR_TOPOLOGY_AFFINITY = "TopologyAffinityError"
TOPOLOGY_AFFINITY_MESSAGE = "Resources cannot be allocated with Topology locality"


@dataclass(frozen=True)
class PodAdmitResult:
    """kubelet's PodAdmitResult. `error` (not compared) is the exception that caused a rejection;
    `errors` (not compared) are the pod-level warnings of an admission with reason
    `PodLevelResourcesIncompatible`."""

    admit: bool
    reason: str = ""
    message: str = ""
    error: Optional[BaseException] = field(default=None, compare=False, repr=False)
    errors: tuple[BaseException, ...] = field(default=(), compare=False, repr=False)


class AggregateError(Exception):
    """Several errors reported as one (kubelet's utilerrors.Aggregate); str() is Kubernetes' form:
    the message alone for one error, `[a, b]` for several."""

    def __init__(self, errors: list[BaseException]) -> None:
        """Keep the errors in order."""
        self.errors = list(errors)
        texts = [str(e) for e in self.errors]
        super().__init__(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")


class TopologyAffinityError(Exception):
    """The policy rejected the merged hint (kubelet's TopologyAffinityError)."""

    error_type = ERROR_TOPOLOGY_AFFINITY

    def __init__(self, message: str = TOPOLOGY_AFFINITY_MESSAGE) -> None:
        """kubelet's message unless another is given."""
        super().__init__(message)


class PodLevelTopologyAffinityError(TopologyAffinityError):
    """A rejection on the pod-level resources path (KEP-5526): same reason, text prefixed `Pod Scope `."""

    def __init__(self, message: str = "") -> None:
        """`Pod Scope <message>`, or `Pod Scope ` + kubelet's default text when message is empty."""
        super().__init__(f"Pod Scope {message or TOPOLOGY_AFFINITY_MESSAGE}")


POD_SCOPE_POD_LEVEL_REJECTION = "pod with pod-level resources failed admission under pod-scope topology manager"


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


def _find_aggregate(err: BaseException) -> Optional[AggregateError]:
    """The first AggregateError in err's explicit cause chain (errors.As on an Aggregate), or None."""
    seen: set[int] = set()
    current: Optional[BaseException] = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, AggregateError):
            return current
        current = current.__cause__
    return None


def _is_pod_level_warning(err: BaseException) -> bool:
    """Whether err (or its cause chain) is a CPU/memory manager pod-level-resources incompatibility."""
    found = _find_admission_error(err)
    return found is not None and found[1] in POD_LEVEL_WARNING_TYPES


def get_pod_admit_result(err: Optional[BaseException]) -> PodAdmitResult:
    """kubelet's admission.GetPodAdmitResult: admit when err is None, admit with reason
    PodLevelResourcesIncompatible when every error is a pod-level warning, else the rejection
    the first other error describes."""
    if err is None:
        return PodAdmitResult(admit=True)
    aggregate = _find_aggregate(err)
    errs: list[BaseException] = list(aggregate.errors) if aggregate is not None else [err]
    warnings = [e for e in errs if _is_pod_level_warning(e)]
    others = [e for e in errs if not _is_pod_level_warning(e)]
    if not others:
        if warnings:
            return PodAdmitResult(admit=True, reason=POD_LEVEL_RESOURCES_INCOMPATIBLE, message="",
                                  errors=tuple(warnings))
        return PodAdmitResult(admit=True)  # an empty aggregate: kubelet's safeguard
    first = others[0]
    found = _find_admission_error(first)
    if found is None:
        return PodAdmitResult(
            admit=False,
            reason=ERROR_REASON_UNEXPECTED,
            message=f"Allocate failed due to {first}, which is unexpected",
            error=err,
        )
    cause, reason = found
    return PodAdmitResult(admit=False, reason=reason, message=str(cause), error=err)
