"""The Linux cpuset list format (k8s.io/utils/cpuset `String()`): what kubelet writes to
`cpuset.mems` from the memory manager's NUMA nodes.

Sorted ids, runs of consecutive ids written as `first-last`, joined by commas:

>>> cpuset_string([3, 0, 1, 2, 5])
'0-3,5'
>>> cpuset_string([1])
'1'
>>> cpuset_string([])
''
"""
from __future__ import annotations

from typing import Iterable


def cpuset_string(ids: Iterable[int]) -> str:
    """The ids as a cpuset list (`0-1,3`); duplicates are counted once, the empty set is ``""``."""
    ordered = sorted(set(ids))
    runs: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(runs)
