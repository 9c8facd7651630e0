"""How much work the property and scale tests do: the default run's budget, or the long one.

The default run (`python -m pytest`) stays within about 3 minutes of CPU in total (CI shares its
cores); `MEMORYMANAGER_LONG=1 python -m pytest` runs the long budgets, the figures the properties
were first established with (README, "Tests"). Every heavy test takes its size from `examples` or
`scale`, so both budgets are written next to each other at the test.
"""
from __future__ import annotations

import os

LONG_ENV = "MEMORYMANAGER_LONG"


def long_run() -> bool:
    """Whether the long budgets were asked for (MEMORYMANAGER_LONG set to anything but "" or "0")."""
    return os.environ.get(LONG_ENV, "") not in ("", "0")


def examples(default: int, long: int) -> int:
    """A hypothesis test's max_examples: `default` in the default run, `long` in the long one."""
    return long if long_run() else default


def scale(default: int, long: int) -> int:
    """The size of a scale test (steps, containers, kills): `default`, or `long` in the long run."""
    return long if long_run() else default
