"""Memory Manager policy options (`memoryManagerPolicyOptions`), KEP-6232 final iteration.

The only option is `memory-drift-tolerance` (alpha, gate MemoryManagerDriftTolerance):
`auto` (kernel image size + 64 MiB, or off when /proc/iomem cannot tell), `off`, or
a non-negative quantity in bytes. Error texts are those of the last upstream
iteration (CheckPolicyOptionAvailable / NewPolicyOptions).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from kubeinputs.features import MEMORY_MANAGER_DRIFT_TOLERANCE_GATE, FeatureGates
from kubeinputs.goformat import go_quote
from memorymanager.memory_drift import PROC_IOMEM_PATH, memory_drift_from_kernel_image
from memorymanager.policy import MemoryManagerError
from kubeinputs.quantity import QuantityError, parse_quantity

MEMORY_DRIFT_TOLERANCE = "memory-drift-tolerance"
MEMORY_DRIFT_TOLERANCE_AUTO = "auto"
MEMORY_DRIFT_TOLERANCE_OFF = "off"

ALPHA_OPTIONS = frozenset({MEMORY_DRIFT_TOLERANCE})
BETA_OPTIONS: frozenset[str] = frozenset()
STABLE_OPTIONS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PolicyOptions:
    """Parsed options; `max_memory_drift` in bytes, 0 = exact state comparison (no tolerance)."""

    max_memory_drift: int = 0


def check_policy_option_available(option: str, feature_gates: FeatureGates) -> None:
    """Refuse unknown options, and alpha options while their gate is off."""
    if option not in ALPHA_OPTIONS and option not in BETA_OPTIONS and option not in STABLE_OPTIONS:
        raise MemoryManagerError(f"unknown Memory Manager Policy option: {go_quote(option)}")
    if option in ALPHA_OPTIONS and not feature_gates.enabled(MEMORY_MANAGER_DRIFT_TOLERANCE_GATE):
        raise MemoryManagerError(
            f"memory manager policy option {go_quote(option)} requires the "
            f"{MEMORY_MANAGER_DRIFT_TOLERANCE_GATE} feature gate"
        )


def parse_memory_drift_tolerance(value: str, iomem_path: str = PROC_IOMEM_PATH) -> int:
    """The drift bound in bytes for one `memory-drift-tolerance` value."""
    if value == MEMORY_DRIFT_TOLERANCE_AUTO:
        drift, _ = memory_drift_from_kernel_image(iomem_path)
        return drift
    if value == MEMORY_DRIFT_TOLERANCE_OFF:
        return 0
    try:
        quantity = parse_quantity(value)
    except QuantityError as err:
        raise MemoryManagerError(f"bad value for option {go_quote(MEMORY_DRIFT_TOLERANCE)}: {err}") from None
    if quantity.value < 0:
        raise MemoryManagerError(
            f"bad value for option {go_quote(MEMORY_DRIFT_TOLERANCE)}: {go_quote(value)} is negative"
        )
    return quantity.value_bytes()


def new_policy_options(
    options: Optional[Mapping[str, str]], feature_gates: FeatureGates, iomem_path: str = PROC_IOMEM_PATH
) -> PolicyOptions:
    """Validate and parse the options map. Go walks it in random order; here names are sorted,
    so with several bad options the alphabetically first is reported."""
    max_memory_drift = 0
    for name in sorted(options or {}):
        value = options[name]
        check_policy_option_available(name, feature_gates)
        if name == MEMORY_DRIFT_TOLERANCE:
            max_memory_drift = parse_memory_drift_tolerance(str(value), iomem_path)
        else:  # unreachable: every known option is handled above
            raise MemoryManagerError(f"unsupported memorymanager option: {go_quote(name)} ({value})")
    return PolicyOptions(max_memory_drift=max_memory_drift)
