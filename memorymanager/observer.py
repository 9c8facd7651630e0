"""The memory manager's words in the observer protocol (`topologymanager.observer`): its name in
events, and why it leaves a container or a pod alone (`Observer.skipped`), as kubelet logs it.

The Manager reports its hints (`hints_given`) and every Allocate and AllocatePod
(`allocation_started`, `allocation_done`); the Static policy reports each early return as
`skipped` with one of these reasons (or the two it shares with the CPU manager: POD_LEVEL_RESOURCES,
the released code's skip of pod-level resources, and ALREADY_PRESENT), and `pinning_requested` /
`pinning_failed` where kubelet counts `memory_manager_pinning_requests_total` and `..._errors_total`.
"""
from __future__ import annotations

from topologymanager.observer import ALREADY_PRESENT, MEMORY_MANAGER, POD_LEVEL_RESOURCES  # noqa: F401 (shared words)

# "Exclusive memory allocation skipped, pod QoS is not guaranteed" (hints and allocations alike)
NOT_GUARANTEED = "pod QoS is not guaranteed"
# "Failed to get container (pod) requested resources": a request that is no int64
REQUEST_UNREADABLE = "failed to get the requested resources"
# "Exclusive memory allocation skipped, container requests no memory resources" (and, for hints with
# PodLevelResourceManagers on, a container living in its pod's shared pool)
NOTHING_REQUESTED = "requests no memory resources"
# pod-scope hints of a pod whose pod-level budget leaves its shared pool empty: an empty hint list
# per resource (KEP-5526)
EMPTY_SHARED_POOL = "the pod-level budget leaves the shared pool empty"
# AllocatePod with PodLevelResources or PodLevelResourceManagers off: nothing to do at pod level
POD_LEVEL_OFF = "pod-level resource managers are off"
