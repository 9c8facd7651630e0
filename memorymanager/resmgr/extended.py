"""Reconciling a policy's `get_extended_resources` onto a Node's extended resources, as the
nri-plugins agent does it (`pkg/agent/node-extended-resources.go`).

From (what the Node's `status.capacity` has, what the policy returns) to the merge patch the agent
sends, and the Node after it:

- None or {} owns and publishes nothing: no patch at all;
- only names matching `*.nri.io/*` can ever change; a value for another name is refused (logged);
  so is a None for a plain name outside that domain; and a pattern never removes such a name;
- a non-None value publishes the name with that capacity, or replaces it; a value equal to the one
  the Node has (same canonical quantity text) is not rewritten;
- a None value on a plain name removes it when present; on a name containing `*` it is an
  ownership pattern: every present name it matches that is not published is removed;
- a pattern with a value is logged and skipped, and the rest is still applied;
- patterns match with Go's `path.Match` (`kubeinputs.gopath`): `*` and `?` never cross `/`,
  `[...]` classes; a malformed pattern is logged and matches nothing. Only a key with a `*` is a
  pattern: `a.nri.io/x?` alone is a plain name.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Mapping, Optional

from kubeinputs.gopath import BadPatternError, path_match
from kubeinputs.quantity import Quantity

log = logging.getLogger("memorymanager.resmgr")

#: The only extended resources the agent ever publishes or removes.
NRI_EXTENDED_RESOURCE_GLOB = "*.nri.io/*"


def glob_match(pattern: str, name: str) -> bool:
    """`path.Match` as the agent uses it: a malformed pattern is logged and matches nothing."""
    try:
        return path_match(pattern, name)
    except BadPatternError as err:
        log.error("invalid extended resources glob pattern %r: %s", pattern, err)
        return False


def is_nri_extended_resource(name: str) -> bool:
    """Whether the agent may change this Node resource (`*.nri.io/*`)."""
    return glob_match(NRI_EXTENDED_RESOURCE_GLOB, name)


@dataclass(frozen=True)
class ExtendedResourcesPatch:
    """The change to a Node's `status.capacity`: names to set (new or changed values only) and names
    to remove. Empty: the agent sends nothing."""

    set: dict[str, Quantity] = field(default_factory=dict)
    remove: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.set or self.remove)

    def merge_patch(self) -> dict[str, object]:
        """The JSON merge patch body the agent sends to the Node's status subresource."""
        capacity: dict[str, Optional[str]] = {name: str(q) for name, q in sorted(self.set.items())}
        capacity.update({name: None for name in self.remove})
        return {"status": {"capacity": capacity}}

    def apply(self, current: Mapping[str, Quantity]) -> dict[str, Quantity]:
        """The capacity after the patch (`current` is not changed)."""
        after = {name: q for name, q in current.items() if name not in self.remove}
        after.update(self.set)
        return after


def extended_resources_patch(current: Mapping[str, Quantity],
                             managed: Optional[Mapping[str, Optional[Quantity]]]) -> ExtendedResourcesPatch:
    """The patch that brings `current` to what `managed` asks for, under the agent's rules."""
    if not managed:
        return ExtendedResourcesPatch()
    publish: dict[str, Quantity] = {}
    exact: set[str] = set()
    patterns: list[str] = []
    for name, value in managed.items():
        if value is not None:
            if "*" in name:
                log.error("ignoring extended resource %r: wildcards are only allowed on owned (None-valued) keys", name)
            elif not is_nri_extended_resource(name):
                log.error("refusing to publish extended resource %r: name does not match %r",
                          name, NRI_EXTENDED_RESOURCE_GLOB)
            else:
                publish[name] = value
        elif "*" in name:
            patterns.append(name)
        elif not is_nri_extended_resource(name):
            log.error("refusing to remove extended resource %r: name does not match %r", name, NRI_EXTENDED_RESOURCE_GLOB)
        else:
            exact.add(name)
    remove = sorted(
        name for name in current
        if is_nri_extended_resource(name) and name not in publish
        and (name in exact or any(glob_match(pattern, name) for pattern in patterns))
    )
    changed = {name: q for name, q in publish.items() if name not in current or str(current[name]) != str(q)}
    return ExtendedResourcesPatch(changed, tuple(remove))


def reconcile_extended_resources(current: Mapping[str, Quantity],
                                 managed: Optional[Mapping[str, Optional[Quantity]]]) -> dict[str, Quantity]:
    """The Node's extended resources after the agent applied the policy's map (neither input is changed)."""
    return extended_resources_patch(current, managed).apply(current)
