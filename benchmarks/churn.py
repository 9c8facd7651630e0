"""B4's churn: admissions and removals on a simulated node kept partly full, like a busy node."""
from __future__ import annotations

import time

from kubeinputs.pod import Pod
from memorymanager.node.simulated_node import SimulatedNode

LIVE_PODS = 16


def churn_seconds(node: SimulatedNode, batch: list[Pod]) -> float:
    """Seconds to admit every pod of `batch` (each must be admitted) and remove it again, at most
    LIVE_PODS + 1 live at a time; 2 x len(batch) operations."""
    live: list[Pod] = []
    start = time.perf_counter()
    for pod in batch:
        outcome = node.admit(pod)
        assert outcome.admit, outcome
        live.append(pod)
        if len(live) > LIVE_PODS:
            node.remove(live.pop(0))
    for pod in live:
        node.remove(pod)
    return time.perf_counter() - start
