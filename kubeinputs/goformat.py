"""Go's fmt verbs that reach kubelet's error messages: %q for strings and %v for string maps.

Messages must match kubelet byte for byte, so quoting follows strconv.Quote and
maps print as Go prints them (`map[k1:v1 k2:v2]`, keys sorted).
"""
from __future__ import annotations

from typing import Mapping

# strconv.Quote lives once, beside the topology manager's option errors that need it too.
from topologymanager.policy_options import go_quote

__all__ = ["go_quote", "go_map_string"]


def go_map_string(mapping: Mapping[str, object]) -> str:
    """A map[string]string printed with %v: `map[key:value ...]`, keys in sorted order."""
    return "map[" + " ".join(f"{key}:{mapping[key]}" for key in sorted(mapping)) + "]"
