"""The reference hint merge: kubelet's HintMerger.Merge written as the plain cross product.

`reference_merge_hints` is kept as the literal kubelet algorithm: every permutation of
one hint per list, in kubelet's odometer order (itertools.product varies the last list
fastest, like kubelet's recursion), merged with `merge_permutation` and folded with
`HintMerger.compare`, no shortcuts. It is used as the oracle of the production
`fast_merge.fast_merge_hints` in differential tests (tests/topology/test_merge_differential.py),
and, having the same signature (`merge.MergeFn`), is selectable as a policy's `merge_fn`:
`memorymanager run --merge reference`.
"""
from __future__ import annotations

from itertools import product
from typing import Optional, Sequence

from topologymanager.errors import BoundedWorkError
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.merge import merge_permutation, new_hint_merger
from topologymanager.numa_info import NUMAInfo


def reference_merge_hints(
    numa_info: NUMAInfo, hint_lists: Sequence[Sequence[TopologyHint]], policy_name: str, prefer_closest: bool
) -> TopologyHint:
    """The best merged hint over every permutation; `{all nodes, not preferred}` if none has a node."""
    hint_lists = [_listed(hints) for hints in hint_lists]
    default = numa_info.default_affinity_mask()
    merger = new_hint_merger(numa_info, hint_lists, policy_name, prefer_closest)
    best: Optional[TopologyHint] = None
    for permutation in product(*hint_lists):
        candidate = merge_permutation(default, permutation)
        best = merger.compare(best, candidate)
    if best is None:
        return TopologyHint(default, False)
    return best


class ReferenceRefusal(BoundedWorkError):
    """The reference merge will not write out a hint family this long (the runner reports the
    scenario as skipped under `--merge reference`)."""


# The reference lists a hint family (a large machine's memory hints) only up to this many hints.
REFERENCE_MAX_FAMILY = 1 << 16


def _listed(hints: Sequence[TopologyHint]) -> Sequence[TopologyHint]:
    """A hint family written out as kubelet's list (short ones by the family, up to 24 nodes by the
    enumerating code), or a clean refusal when it is too long to write out."""
    if not isinstance(hints, HintFamily):
        return hints
    listed = hints.as_list(REFERENCE_MAX_FAMILY)
    if listed is None and hints.relist is not None:
        listed = hints.kubelet_list()  # up to 24 nodes: today's enumerating lists, as before families
    if listed is None:
        raise ReferenceRefusal(
            f"kubelet would enumerate 2^{hints.nodes.bit_count()} NUMA masks here; the reference merge "
            f"(the literal cross product) lists at most {REFERENCE_MAX_FAMILY} hints of a provider and refuses"
        )
    return listed
