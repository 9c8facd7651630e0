"""The scenario's own schema: its keys and operations (the contract: docs/scenario-format.md).

The typed readers that check each value (`expect_map`, `check_keys`, ...) are the ones
every input of the project shares (`kubeinputs.errors`); in a scenario a null is never
taken as an empty map or list (it means "no preference", "must not fail", ...), so the
runner calls them with `null_is_empty=False`.
"""
from __future__ import annotations

TOP_LEVEL_KEYS = ("name", "description", "machine", "kubelet", "checkpoint", "cpuCheckpoint", "deviceCheckpoint", "devices",
                  "steps")
REQUIRED_TOP_LEVEL_KEYS = ("machine", "steps")
OPERATIONS = ("start", "admit", "hints", "remove", "restart", "check")
STEP_KEYS = OPERATIONS + ("providers", "expect")
REMOVE_KEYS = ("pod", "namespace", "container")
RESTART_KEYS = ("kubelet",)
PROVIDERS_KEYS = ("containers", "pod")
HINT_KEYS = ("numaAffinity", "preferred")
# A hint's NUMA ids are bit numbers of kubelet's 64-bit mask.
MAX_NUMA_BIT = 63
