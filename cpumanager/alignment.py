"""Alignment metadata of an allocation (kubelet's cpumanager/topology/alignment.go).

kubelet records whether an exclusive allocation fits in one uncore cache; the answer only
feeds the `container_aligned_compute_resources_count{boundary="uncore_cache"}` metric.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kubeinputs.cpuset import CPUSet


@dataclass(frozen=True)
class Alignment:
    """Whether every CPU of an allocation shares one uncore cache."""

    uncore_cache: bool = True

    def __str__(self) -> str:
        return f"aligned=<uncore:{str(self.uncore_cache).lower()}>"


@dataclass(frozen=True)
class Allocation:
    """A CPU set and its alignment (an empty set counts as aligned)."""

    cpus: CPUSet = field(default_factory=CPUSet)
    aligned: Alignment = field(default_factory=Alignment)

    def __str__(self) -> str:
        return f"{self.cpus} {self.aligned}"


def empty_allocation() -> Allocation:
    """EmptyAllocation: no CPU, aligned in every way."""
    return Allocation()
