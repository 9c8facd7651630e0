"""The test run's budgets (tests/helpers/budget.py): hypothesis profiles and the `slow` marker.

- profile `default`: no deadline (a deadline is a timing assertion, and CI shares its cores), the
  explicit max_examples of each test (its default-run figure);
- profile `long` (MEMORYMANAGER_LONG=1): ten times hypothesis' default examples for tests that do
  not set their own, and each test's long figure (`examples(default, long)`);
- tests marked `slow` run only in the long run or when selected with `-m slow`.
"""
from __future__ import annotations

import pytest
from hypothesis import settings

from tests.helpers.budget import LONG_ENV, long_run

settings.register_profile("default-run", deadline=None)
settings.register_profile("long-run", deadline=None, max_examples=1000)
settings.load_profile("long-run" if long_run() else "default-run")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"slow: a long test, run with {LONG_ENV}=1 or -m slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if long_run() or "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason=f"slow: set {LONG_ENV}=1 or select with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
