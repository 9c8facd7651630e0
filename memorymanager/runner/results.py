"""The outcome of running scenarios: per step, per scenario, and for a whole run."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from memorymanager.runner.expect import Failure

PASSED = "passed"
FAILED = "failed"
INVALID = "invalid"
SKIPPED = "skipped"  # the reference merge refused the input (ReferenceRefusal); nothing was compared


@dataclass
class InitMemory:
    """A regular init container's memory at admission (human report only): NUMA nodes, bytes per resource
    (its request), the bytes later containers re-use, and the container whose creation released it."""

    numa_nodes: list[int]
    taken: dict[str, int]
    reused: dict[str, int]
    released_by: str


@dataclass
class StepResult:
    """One step: its failures and everything it could report (`actual`, shaped like `expect`).

    `notes` are explanations for the human report only (never compared, not in `--json`),
    such as the numbers behind a reservedMemory start error.
    """

    index: int
    op: str
    failures: list[Failure] = field(default_factory=list)
    actual: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: Optional[str] = None  # why the step was not compared (the reference merge's refusal)
    init_memory: dict[str, InitMemory] = field(default_factory=dict)  # admit: init containers' memory (not in --json)

    @property
    def status(self) -> str:
        """`passed`, `failed` or `skipped`."""
        if self.skipped is not None:
            return SKIPPED
        return FAILED if self.failures else PASSED

    def to_dict(self) -> dict:
        """The `--json` shape of a step."""
        return {
            "index": self.index,
            "op": self.op,
            "status": self.status,
            "failures": [f.to_dict() for f in self.failures],
            "actual": self.actual,
            **({"skipped": self.skipped} if self.skipped is not None else {}),
        }


@dataclass
class ScenarioResult:
    """One scenario file: passed, failed (some step failed) or invalid (with `error`)."""

    file: str
    name: str = ""
    steps: list[StepResult] = field(default_factory=list)
    error: Optional[str] = None  # only for invalid files

    @property
    def status(self) -> str:
        """`invalid`, `failed`, `skipped` (some step refused by the reference merge) or `passed`."""
        if self.error is not None:
            return INVALID
        if any(s.failures for s in self.steps):
            return FAILED
        return SKIPPED if any(s.skipped is not None for s in self.steps) else PASSED

    def to_dict(self) -> dict:
        """The `--json` shape of a scenario."""
        out: dict[str, Any] = {"file": self.file, "name": self.name, "status": self.status}
        if self.error is not None:
            out["error"] = self.error
        out["steps"] = [s.to_dict() for s in self.steps]
        return out


@dataclass
class RunReport:
    """Every scenario of one `memorymanager run`, in the order run."""

    scenarios: list[ScenarioResult] = field(default_factory=list)

    def count(self, status: str) -> int:
        """How many scenarios have `status`."""
        return sum(1 for s in self.scenarios if s.status == status)

    @property
    def exit_code(self) -> int:
        """2 if any file is invalid, else 1 if any expectation failed, else 0."""
        if self.count(INVALID):
            return 2
        if self.count(FAILED):
            return 1
        return 0

    def to_dict(self) -> dict:
        """The `--json` document."""
        return {
            "passed": self.count(PASSED),
            "failed": self.count(FAILED),
            "invalid": self.count(INVALID),
            **({"skipped": self.count(SKIPPED)} if self.count(SKIPPED) else {}),
            "scenarios": [s.to_dict() for s in self.scenarios],
        }
