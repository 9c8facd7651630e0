"""Part 3 of an explanation: one topology manager merge, recomputed with the fast merge's
building blocks (preferred candidates, produced masks, BestNonPreferredAffinityCount and the
fitness keys), with the rule that decided and the nearest rivals."""
from __future__ import annotations

import math
from itertools import islice
from typing import Sequence

from memorymanager.node.render import hint_to_obj
from memorymanager.explain.model import MergePart, ProviderList, Rival
from memorymanager.explain.recorder import HAND_WRITTEN, MergeCall
from topologymanager import bitmask
from topologymanager.fast_merge import produced_masks
from topologymanager.family_merge import family_merge_hints
from topologymanager.hint import TopologyHint
from topologymanager.hint_family import HintFamily
from topologymanager.merge import filter_providers_hints, max_of_min_affinity_counts
from topologymanager.merge_order import fitter_key_for, non_preferred_rank, preferred_candidates
from topologymanager.policy import POLICY_NONE, POLICY_SINGLE_NUMA_NODE, Policy
from topologymanager.policy_single_numa_node import filter_single_numa_hints
from topologymanager.observer import CPU_MANAGER as OBSERVED_CPU, DEVICE_MANAGER as OBSERVED_DEVICES
from topologymanager.observer import MEMORY_MANAGER as OBSERVED_MEMORY

MAX_RIVALS = 3
MEMORY_MANAGER = "memory manager"
CPU_MANAGER = "CPU manager"
DEVICE_MANAGER = "device manager"
INJECTED = "hand-written hints (providers)"
NO_PREFERENCE = "(no preference)"
# observer provider names (topologymanager.observer, recorder.HAND_WRITTEN) -> how explain names them
PROVIDER_LABELS = {OBSERVED_MEMORY: MEMORY_MANAGER, OBSERVED_CPU: CPU_MANAGER, OBSERVED_DEVICES: DEVICE_MANAGER,
                   HAND_WRITTEN: INJECTED}


def _list_labels(call: MergeCall) -> list[tuple[str, str]]:
    """(provider, resource) of each list `filter_providers_hints` makes, in its order: each provider named by
    the event that announced its hints (registration order), never by its position."""
    labels = []
    names = call.providers or [HAND_WRITTEN] * len(call.providers_hints)
    for name, hints in zip(names, call.providers_hints):
        provider = PROVIDER_LABELS.get(name, name)
        if not hints:
            labels.append((provider, NO_PREFERENCE))
        else:
            labels.extend((provider, resource) for resource in hints)
    return labels


def _hint_dicts(hints: Sequence[TopologyHint]) -> list[dict]:
    """Hints as JSON-ready dicts (a hint family: its first hints only, too many masks to list)."""
    if isinstance(hints, HintFamily):
        return [hint_to_obj(h) for h in islice(hints, FAMILY_HINTS_SHOWN)]
    return [hint_to_obj(h) for h in hints]


# Machines with more NUMA nodes than this are explained without listing masks.
MAX_LISTED_NODES = 16
FAMILY_HINTS_SHOWN = 12


def _large_merge_part(part: MergePart, policy: Policy, filtered: list, call: MergeCall, single: bool) -> MergePart:
    """A merge on a large machine: too many masks to list; the result recomputed by the family merge."""
    result = family_merge_hints(policy.numa_info, filtered, policy.name, bool(policy.opts.prefer_closest_numa))
    default = policy.numa_info.default_affinity_mask()
    part.path = "preferred" if result.preferred else "non-preferred"
    part.rule = (f"too many masks to list ({len(policy.numa_info.nodes)} NUMA nodes): the family merge walked "
                 "kubelet's comparison order (preferred masks first, then BestNonPreferredAffinityCount)")
    if single and result.numa_node_affinity == default:
        result = TopologyHint(None, result.preferred)
    part.winner = hint_to_obj(result)
    part.consistent = result == call.best
    part.admit = call.admit
    admit = policy.can_admit_pod_result(call.best)
    part.admit_rule = f"{policy.name}: {'admit' if admit else 'reject'}"
    return part


def _key_rule(winner: tuple, rival: tuple, uses_distance: bool) -> str:
    """Which component of the fitness key (width, distance, mask) separated two merged masks."""
    if winner[0] != rival[0]:
        return f"narrower: {winner[0]} node(s) against {rival[0]}"
    if uses_distance and winner[1] != rival[1]:
        return f"closer (prefer-closest-numa-nodes): average distance {winner[1]:.2f} against {rival[1]:.2f}"
    return "same width" + (" and distance" if uses_distance else "") + ": the lower mask wins"


def _rank_rule(winner: int, rival: int, best: int, key, uses_distance: bool) -> str:
    """The rule by which a non-preferred merged mask beat another (the fast merge's order)."""
    rw, rr = non_preferred_rank(winner, best), non_preferred_rank(rival, best)
    cw, cr = winner.bit_count(), rival.bit_count()
    if rw == rr:
        return _key_rule(key(winner), key(rival), uses_distance)
    if rw[0] == 0:
        return f"exactly BestNonPreferredAffinityCount = {best} node(s) beats {cr}"
    if rw[0] == 1 and rr[0] == 1:
        return f"below BestNonPreferredAffinityCount = {best}, more nodes win: {cw} against {cr}"
    return f"below BestNonPreferredAffinityCount = {best} ({cw} node(s)) beats above it ({cr})"


def build_merge_part(policy: Policy, target: str, call: MergeCall) -> MergePart:
    """Part 3 for one merge, recomputed with the fast merge's building blocks."""
    labels = _list_labels(call)
    if policy.name == POLICY_NONE:
        return MergePart(target, policy.name, False, [], 0, "policy-none", None, 0, 0, hint_to_obj(call.best),
                         "topology manager policy none: nothing is merged; every pod gets the empty hint",
                         admit=call.admit, admit_rule="none admits every pod")
    numa_info = policy.numa_info
    prefer_closest = bool(policy.opts.prefer_closest_numa)
    lists = filter_providers_hints(call.providers_hints)
    single = policy.name == POLICY_SINGLE_NUMA_NODE
    filtered = filter_single_numa_hints(lists) if single else lists
    provider_lists = [ProviderList(p, r, _hint_dicts(raw), _hint_dicts(kept))
                      for (p, r), raw, kept in zip(labels, lists, filtered)]
    large = len(numa_info.nodes) > MAX_LISTED_NODES or any(isinstance(h, HintFamily) for h in filtered)
    combinations = -1 if large else math.prod(len(hints) for hints in filtered)  # -1: too many to count
    default = numa_info.default_affinity_mask()
    key = fitter_key_for(numa_info, policy.name, prefer_closest)
    uses_distance = prefer_closest and not single
    part = MergePart(target, policy.name, prefer_closest, provider_lists, combinations, "", None, 0, 0, {}, "")
    if single:
        dropped = 0 if large else sum(len(a) - len(b) for a, b in zip(lists, filtered))
        part.single_numa_note = ("single-numa-node keeps only preferred hints on one node (or any node)"
                                 + (f": {dropped} hint(s) dropped" if dropped else ""))
    if large:
        return _large_merge_part(part, policy, filtered, call, single)
    if any(len(hints) == 0 for hints in filtered):
        empty = [f"{pl.provider} {pl.resource}" for pl, hints in zip(provider_lists, filtered) if not hints]
        result = TopologyHint(default, False)
        part.path = "empty-list"
        part.rule = (f"no combination exists: the list of {', '.join(empty)} is empty"
                     + (" after the filter" if single else "") + "; the result is all nodes, not preferred")
    else:
        preferred = preferred_candidates(default, filtered)
        produced = produced_masks(numa_info.nodes, default, filtered)
        part.preferred_candidates, part.produced_masks = len(preferred), len(produced)
        best_count = max_of_min_affinity_counts(filtered)
        if preferred:
            ranked = sorted(preferred, key=key)
            result = TopologyHint(ranked[0], True)
            part.path = "preferred"
            part.rule = (f"{len(preferred)} preferred merged mask(s) (every list offers the mask, or any node, "
                         f"as preferred); "
                         f"the fittest wins: fewest nodes" + (", then lowest average distance" if uses_distance else "")
                         + ", then the lowest mask")
            part.rivals = [Rival(bitmask.get_bits(m), True, _key_rule(key(ranked[0]), key(m), uses_distance))
                           for m in ranked[1:1 + MAX_RIVALS]]
            # masks only non-preferred combinations produce (a mask also produced preferred is that one)
            non_preferred = sorted(produced - preferred, key=key)
            if non_preferred:
                part.rivals.append(Rival(bitmask.get_bits(non_preferred[0]), False, "preferred beats non-preferred"))
        elif not produced:
            result = TopologyHint(default, False)
            part.path = "nothing-produced"
            part.rule = "every combination's masks have no node in common; the result is all nodes, not preferred"
        else:
            part.best_non_preferred_count = best_count

            def rank(m: int) -> tuple:
                """The fast merge's order of non-preferred masks."""
                return (non_preferred_rank(m, best_count), key(m))

            ranked = sorted(produced, key=rank)
            result = TopologyHint(ranked[0], False)
            part.path = "non-preferred"
            part.rule = (f"no mask is preferred by every list; {len(produced)} merged mask(s) come out, none "
                         f"preferred; BestNonPreferredAffinityCount (the widest of the lists' narrowest hints) "
                         f"is {best_count}: exactly {best_count} node(s) if possible, else the most nodes below, "
                         f"else the fewest above")
            part.rivals = [Rival(bitmask.get_bits(m), False, _rank_rule(ranked[0], m, best_count, key, uses_distance))
                           for m in ranked[1:1 + MAX_RIVALS]]
    if single and result.numa_node_affinity == default:
        result = TopologyHint(None, result.preferred)
        part.single_numa_note += "; a result on every node is reported as any node"
    part.winner = hint_to_obj(result)
    part.consistent = result == call.best
    part.admit = call.admit
    admit = policy.can_admit_pod_result(call.best)
    part.admit_rule = (f"{policy.name} admits "
                       + ("any hint" if policy.name not in ("restricted", POLICY_SINGLE_NUMA_NODE) else "only a preferred hint")
                       + f": {'admit' if admit else 'reject'}")
    return part
