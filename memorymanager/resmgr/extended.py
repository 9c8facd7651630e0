"""Reconciling a policy's `get_extended_resources` onto a Node's extended resources.

The seed's rules, as a pure function from (what the Node has, what the policy returns) to
what the Node should have:

- a non-None value publishes the named resource with that capacity, or replaces it;
- a None value means "owned, not published": a plain name is removed if present; a name
  containing `*` is an ownership pattern (`*` matches any run of characters) and removes
  every matching resource the policy is not publishing;
- resources the policy neither names nor matches are left alone; None or {} owns nothing;
- a `*` pattern with a value is refused (a pattern cannot be published).
"""
from __future__ import annotations

import re
from typing import Mapping, Optional

from kubeinputs.quantity import Quantity

from memorymanager.resmgr.types import PolicyError


def _pattern(key: str) -> "re.Pattern[str]":
    """The regular expression of an ownership pattern (`*` is the only wildcard)."""
    return re.compile("^" + ".*".join(re.escape(part) for part in key.split("*")) + "$")


def reconcile_extended_resources(
    current: Mapping[str, Quantity], managed: Optional[Mapping[str, Optional[Quantity]]]
) -> dict[str, Quantity]:
    """The Node's extended resources after applying the policy's map (neither input is changed)."""
    result = dict(current)
    if not managed:
        return result
    for key, value in managed.items():
        if "*" in key and value is not None:
            raise PolicyError(f"extended resource {key!r}: a '*' pattern only marks ownership; its value must be None")
    published = {k: v for k, v in managed.items() if v is not None}
    for key, value in managed.items():
        if value is not None:
            continue
        if "*" in key:
            pattern = _pattern(key)
            for name in list(result):
                if pattern.match(name) and name not in published:
                    del result[name]
        else:
            result.pop(key, None)
    result.update(published)
    return result
