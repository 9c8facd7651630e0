"""takeByTopology: which free CPUs an exclusive request gets (kubelet's cpu_assignment.go).

The packed algorithm (`take_by_topology_numa_packed`, the default) fills the machine level
by level, always taking from the element with the fewest free CPUs first (best fit):

1. whole NUMA nodes and whole sockets, if the request needs at least one's worth: the larger
   of the two levels first (NUMA nodes when there are at least as many sockets as NUMA nodes);
2. with `prefer-align-cpus-by-uncorecache`: whole uncore caches (L3 groups), then a part of one
   cache that holds the rest of the request on whole cores;
3. whole cores (skipped with `distribute-cpus-across-cores`, the "spread" order);
4. single CPUs, core by core ("packed") or socket by socket in id order ("spread").

Elements are sorted by their free CPUs, fewest first, ties by id; lower levels are sorted
inside each element of the level above (so the free cores of the fullest NUMA node come
first). The distributed algorithm (`take_by_topology_numa_distributed`,
`distribute-cpus-across-numa`) splits a request evenly over the fewest NUMA nodes that can
hold equal shares, choosing the combination that leaves the NUMA nodes most balanced.

Worked example, one socket of 4 cores with 2 threads each (core n holds CPUs n and n+4),
CPUs 0, 1, 3 and 7 taken; a request of 2 CPUs gets the only whole free core, CPUs 2 and 6:

>>> from cpumanager.topology import CPUInfo, CPUTopology
>>> topo = CPUTopology(8, 4, 1, {c: CPUInfo(0, 0, c % 4, 0) for c in range(8)})
>>> str(take_by_topology_numa_packed(topo, CPUSet.new(2, 4, 5, 6), 2))
'2,6'

Sets are int bitmasks (bit i = CPU i) from start to end; every ordering is a total order
(ties broken by id), so the result is the one kubelet computes whatever Go's map order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Optional

from kubeinputs.cpuset import CPUSet
from kubeinputs.limits import WorkLimitError

from cpumanager.errors import CPUManagerError
from cpumanager.topology import CPUTopology

# CPUSortingStrategy: the order of single CPUs (and whether whole cores are taken first).
CPU_SORTING_STRATEGY_PACKED = "packed"
CPU_SORTING_STRATEGY_SPREAD = "spread"

# The stages of takeByTopology a CPU can be taken in (`TakeStep.stage`), for tools that say why.
STAGE_NUMA_NODES = "whole NUMA nodes"
STAGE_SOCKETS = "whole sockets"
STAGE_UNCORE = "uncore cache"
STAGE_CORES = "whole cores"
STAGE_CPUS = "single CPUs"
STAGE_DISTRIBUTED = "distributed across NUMA nodes"


@dataclass
class TakeStep:
    """CPUs one stage of takeByTopology took (`steps` sink of the take functions): the stage, the CPUs, and
    for the distributed algorithm the NUMA node; `phase` is set by the caller (the static policy: aligned
    to the hint first, then the rest)."""

    stage: str
    cpus: CPUSet
    numa_node: Optional[int] = None
    phase: str = ""


def _ids(masks: dict[int, int], mask: int) -> list[int]:
    """Ids (ascending) of `masks` whose CPUs meet `mask`."""
    return [key for key, m in masks.items() if m & mask]


class CPUAccumulator:
    """kubelet's cpuAccumulator: the free CPUs (`avail`), what was taken (`result`) and how many
    are still needed. Sets are bitmasks over the topology's CPUs."""

    __slots__ = ("topo", "avail", "result", "needed", "numa_first", "strategy")

    def __init__(self, topo: CPUTopology, available: CPUSet, num_cpus: int,
                 strategy: str = CPU_SORTING_STRATEGY_PACKED):
        """newCPUAccumulator: the CPUs of `available` the topology knows, `num_cpus` to take."""
        self.topo = topo
        self.avail = available.mask & topo.all_mask
        self.result = 0
        self.needed = num_cpus
        # NUMA nodes are the larger level when there are at least as many sockets as NUMA nodes
        self.numa_first = topo.num_sockets >= topo.num_numa_nodes
        self.strategy = strategy

    # ----- counting ---------------------------------------------------------------------------------

    def _free(self, mask: int) -> int:
        """How many free CPUs `mask` holds."""
        return (self.avail & mask).bit_count()

    def _sort(self, ids: list[int], masks: dict[int, int]) -> list[int]:
        """sort(): by free CPUs ascending, then id ascending (in place, and returned)."""
        avail = self.avail
        ids.sort(key=lambda key: ((avail & masks.get(key, 0)).bit_count(), key))
        return ids

    # ----- the per-level orders ---------------------------------------------------------------------

    def sort_available_numa_nodes(self) -> list[int]:
        """NUMA nodes with a free CPU: fewest free first; below sockets when sockets are the larger level."""
        topo = self.topo
        if self.numa_first:
            return self._sort(_ids(topo.numa_masks, self.avail), topo.numa_masks)
        result: list[int] = []
        for socket in self.sort_available_sockets():
            result += self._sort(_ids(topo.numa_masks, self.avail & topo.socket_masks[socket]), topo.numa_masks)
        return result

    def sort_available_sockets(self) -> list[int]:
        """Sockets with a free CPU, fewest free first (inside each sorted NUMA node when NUMA nodes are larger)."""
        topo = self.topo
        if not self.numa_first:
            return self._sort(_ids(topo.socket_masks, self.avail), topo.socket_masks)
        result: list[int] = []
        for numa in self.sort_available_numa_nodes():
            result += self._sort(_ids(topo.socket_masks, self.avail & topo.numa_masks[numa]), topo.socket_masks)
        return result

    def sort_available_cores(self) -> list[int]:
        """Cores with a free CPU, fewest free first, inside the sorted lower of the two big levels."""
        topo = self.topo
        result: list[int] = []
        if self.numa_first:
            for socket in self.sort_available_sockets():
                result += self._sort(_ids(topo.core_masks, self.avail & topo.socket_masks[socket]), topo.core_masks)
        else:
            for numa in self.sort_available_numa_nodes():
                result += self._sort(_ids(topo.core_masks, self.avail & topo.numa_masks[numa]), topo.core_masks)
        return result

    def sort_available_uncore_caches(self) -> list[int]:
        """Uncore caches with a free CPU, fewest free first, inside each sorted NUMA node."""
        topo = self.topo
        result: list[int] = []
        for numa in self.sort_available_numa_nodes():
            result += self._sort(_ids(topo.uncore_masks, self.avail & topo.numa_masks[numa]), topo.uncore_masks)
        return result

    def sort_available_cpus_packed(self) -> list[int]:
        """Free CPUs core by core (cores in sort_available_cores order), ids ascending within a core."""
        core_masks = self.topo.core_masks
        result: list[int] = []
        for core in self.sort_available_cores():
            result += CPUSet(self.avail & core_masks[core]).list()
        return result

    def sort_available_cpus_spread(self) -> list[int]:
        """Free CPUs socket by socket (sort_available_sockets order), ids ascending within a socket."""
        socket_masks = self.topo.socket_masks
        result: list[int] = []
        for socket in self.sort_available_sockets():
            result += CPUSet(self.avail & socket_masks[socket]).list()
        return result

    def free_cpus(self) -> list[int]:
        """The free CPUs in the strategy's order."""
        if self.strategy == CPU_SORTING_STRATEGY_PACKED:
            return self.sort_available_cpus_packed()
        return self.sort_available_cpus_spread()

    # ----- whole elements ---------------------------------------------------------------------------

    def is_numa_node_free(self, numa: int) -> bool:
        """Every CPU of the NUMA node is free."""
        mask = self.topo.numa_masks.get(numa, 0)
        return self._free(mask) == mask.bit_count()

    def is_socket_free(self, socket: int) -> bool:
        """As many free CPUs in the socket as a socket holds (num_cpus / num_sockets)."""
        return self._free(self.topo.socket_masks.get(socket, 0)) == self.topo.cpus_per_socket()

    def is_uncore_cache_free(self, uncore: int) -> bool:
        """Every CPU of the uncore cache is free."""
        mask = self.topo.uncore_masks.get(uncore, 0)
        return self._free(mask) == mask.bit_count()

    def is_core_free(self, core: int) -> bool:
        """As many free CPUs in the core as a core holds (num_cpus / num_cores)."""
        return self._free(self.topo.core_masks.get(core, 0)) == self.topo.cpus_per_core()

    def free_numa_nodes(self) -> list[int]:
        """Wholly free NUMA nodes, in sort order."""
        return [n for n in self.sort_available_numa_nodes() if self.is_numa_node_free(n)]

    def free_sockets(self) -> list[int]:
        """Wholly free sockets, in sort order."""
        return [s for s in self.sort_available_sockets() if self.is_socket_free(s)]

    def free_uncore_caches(self) -> list[int]:
        """Wholly free uncore caches, in sort order."""
        return [u for u in self.sort_available_uncore_caches() if self.is_uncore_cache_free(u)]

    def free_cores(self) -> list[int]:
        """Wholly free cores, in sort order."""
        return [c for c in self.sort_available_cores() if self.is_core_free(c)]

    # ----- taking -----------------------------------------------------------------------------------

    def take(self, cpus: int) -> None:
        """take(): add CPUs to the result; they are no longer free; the need drops by their number."""
        self.result |= cpus
        self.avail &= ~self.result
        self.needed -= cpus.bit_count()

    def needs_at_least(self, n: int) -> bool:
        """Still needs n CPUs or more."""
        return self.needed >= n

    def is_satisfied(self) -> bool:
        """Needs nothing more."""
        return self.needed < 1

    def is_failed(self) -> bool:
        """Needs more than the free CPUs."""
        return self.needed > self.avail.bit_count()

    def _take_whole(self, ids: list[int], masks: dict[int, int]) -> None:
        """Take each listed element's CPUs (all of them, per the topology) while the need covers it."""
        for key in ids:
            cpus = masks[key]
            if not self.needs_at_least(cpus.bit_count()):
                continue
            self.take(cpus)

    def take_full_numa_nodes(self) -> None:
        """takeFullNUMANodes (nothing to look at while the need is below the smallest node: none is taken)."""
        if self.needed >= self.topo.smallest["numa"]:
            self._take_whole(self.free_numa_nodes(), self.topo.numa_masks)

    def take_full_sockets(self) -> None:
        """takeFullSockets (skipped below the smallest socket, as above)."""
        if self.needed >= self.topo.smallest["socket"]:
            self._take_whole(self.free_sockets(), self.topo.socket_masks)

    def take_full_first_level(self) -> None:
        """The larger of NUMA nodes and sockets."""
        if self.numa_first:
            self.take_full_numa_nodes()
        else:
            self.take_full_sockets()

    def take_full_second_level(self) -> None:
        """The smaller of NUMA nodes and sockets."""
        if self.numa_first:
            self.take_full_sockets()
        else:
            self.take_full_numa_nodes()

    def take_full_uncore(self) -> None:
        """takeFullUncore (skipped below the smallest uncore cache, as above)."""
        if self.needed >= self.topo.smallest["uncore"]:
            self._take_whole(self.free_uncore_caches(), self.topo.uncore_masks)

    def take_partial_uncore(self, uncore: int) -> None:
        """takePartialUncore: the rest of the request from the lowest free cores of one cache, if they
        hold exactly what is needed (an odd need on SMT drops the last CPU of those cores)."""
        per_core = self.topo.cpus_per_core()
        if per_core == 0:
            return  # no cores: kubelet would divide by zero here (unreachable with a CPU free)
        num_cores_needed = (self.needed + per_core - 1) // per_core
        cores = self.topo.details().keep_only(CPUSet(self.avail)).cores_needed_in_uncore_cache(num_cores_needed,
                                                                                                 uncore)
        free = 0
        for core in cores:
            free |= self.topo.core_masks[core]
        free &= self.avail
        if self.needed % 2 != 0 and per_core > 1:
            ids = CPUSet(free).list()
            if len(ids) > self.needed:
                free &= ~(1 << ids[-1])
        if self.needed == free.bit_count():
            self.take(free)

    def take_uncore_cache(self) -> None:
        """takeUncoreCache: per cache (sort order), whole caches while the need covers one, then a part."""
        per_uncore = self.topo.cpus_per_uncore()
        for uncore in self.sort_available_uncore_caches():
            if self.needs_at_least(per_uncore):
                self.take_full_uncore()
            if self.is_satisfied():
                return
            self.take_partial_uncore(uncore)
            if self.is_satisfied():
                return

    def take_full_cores(self) -> None:
        """takeFullCores (skipped below the smallest core, as above)."""
        if self.needed >= self.topo.smallest["core"]:
            self._take_whole(self.free_cores(), self.topo.core_masks)

    def take_remaining_cpus(self) -> None:
        """takeRemainingCPUs: single CPUs in the strategy's order until satisfied."""
        for cpu in self.free_cpus():
            self.take(1 << cpu)
            if self.is_satisfied():
                return

    # ----- distribution helpers ---------------------------------------------------------------------

    def range_numa_nodes_needed_to_satisfy(self, cpu_group_size: int) -> tuple[int, int]:
        """rangeNUMANodesNeededToSatisfy: the fewest and most NUMA nodes the request can span,
        counting in groups of `cpu_group_size` CPUs."""
        num_numa_nodes = len(self.topo.numa_masks)
        num_numa_available = len(_ids(self.topo.numa_masks, self.avail))
        num_cpus = len(self.topo.cpu_details)
        num_cpu_groups = (num_cpus - 1) // cpu_group_size + 1
        groups_per_numa = (num_cpu_groups - 1) // num_numa_nodes + 1
        groups_needed = (self.needed - 1) // cpu_group_size + 1
        min_numas = (groups_needed - 1) // groups_per_numa + 1
        max_numas = min(groups_needed, num_numa_available)
        return min_numas, max_numas


def _not_enough(requested: int, available: CPUSet) -> CPUManagerError:
    """kubelet's error when fewer CPUs are free than requested."""
    return CPUManagerError(
        f"not enough cpus available to satisfy request: requested={requested}, available={available.size()}"
    )


def take_by_topology_numa_packed(topo: CPUTopology, available: CPUSet, num_cpus: int,
                                 strategy: str = CPU_SORTING_STRATEGY_PACKED,
                                 prefer_align_by_uncore_cache: bool = False,
                                 steps: Optional[list[TakeStep]] = None) -> CPUSet:
    """takeByTopologyNUMAPacked: `num_cpus` CPUs of `available`, packed (see module doc); `steps`, when
    given, receives the CPUs each stage took, in order (the answer does not change).

    Raises CPUManagerError with kubelet's text when fewer are free."""
    acc = CPUAccumulator(topo, available, num_cpus, strategy)
    if acc.is_satisfied():
        return CPUSet(acc.result)
    if acc.is_failed():
        raise _not_enough(num_cpus, available)
    first, second = (STAGE_NUMA_NODES, STAGE_SOCKETS) if acc.numa_first else (STAGE_SOCKETS, STAGE_NUMA_NODES)
    stages = [(first, acc.take_full_first_level), (second, acc.take_full_second_level)]
    if prefer_align_by_uncore_cache:
        stages.append((STAGE_UNCORE, acc.take_uncore_cache))
    if strategy != CPU_SORTING_STRATEGY_SPREAD:
        stages.append((STAGE_CORES, acc.take_full_cores))
    stages.append((STAGE_CPUS, acc.take_remaining_cpus))
    for stage, run in stages:
        before = acc.result
        run()
        if steps is not None and acc.result != before:
            steps.append(TakeStep(stage, CPUSet(acc.result & ~before)))
        if acc.is_satisfied():
            return CPUSet(acc.result)
    raise CPUManagerError("failed to allocate cpus")


def _go_round(x: float) -> float:
    """math.Round: to the nearest integer, halves away from zero."""
    whole = math.floor(abs(x))
    if abs(x) - whole >= 0.5:
        whole += 1
    return math.copysign(whole, x)


def _endless(what: str) -> WorkLimitError:
    """kubelet loops forever here (a remainder no NUMA node of the chosen set can take in whole groups)."""
    return WorkLimitError(
        f"kubelet's takeByTopologyNUMADistributed would loop forever {what}: the remaining CPUs cannot be handed "
        "out in whole groups; the simulation stops instead"
    )


def _packed_or_empty(topo: CPUTopology, available: CPUSet, num_cpus: int, strategy: str) -> int:
    """takeByTopologyNUMAPacked with the error dropped, as the distributed algorithm calls it (an empty set)."""
    try:
        return take_by_topology_numa_packed(topo, available, num_cpus, strategy, False).mask
    except CPUManagerError:
        return 0


def _note(steps: Optional[list[TakeStep]], taken: int, numa: int) -> None:
    """Record what one NUMA node gave the distributed algorithm (merged with its earlier share)."""
    if steps is None or not taken:
        return
    for step in steps:
        if step.stage == STAGE_DISTRIBUTED and step.numa_node == numa:
            step.cpus = step.cpus.union(CPUSet(taken))
            return
    steps.append(TakeStep(STAGE_DISTRIBUTED, CPUSet(taken), numa))


def standard_deviation(values: list[int]) -> float:
    """kubelet's standardDeviation: population deviation around the rounded mean, rounded to 3 decimals."""
    m = _go_round(sum(float(v) for v in values) / len(values) * 1000) / 1000
    total = 0.0
    for v in values:
        total += (float(v) - m) * (float(v) - m)
    return _go_round(math.sqrt(total / len(values)) * 1000) / 1000


def take_by_topology_numa_distributed(topo: CPUTopology, available: CPUSet, num_cpus: int, cpu_group_size: int,
                                      strategy: str = CPU_SORTING_STRATEGY_PACKED,
                                      steps: Optional[list[TakeStep]] = None) -> CPUSet:
    """takeByTopologyNUMADistributed (KEP-2902): spread `num_cpus` evenly over the fewest NUMA nodes,
    in groups of `cpu_group_size` CPUs; packed when the request is not a whole number of groups or
    no combination balances. `steps` receives what each NUMA node gave (or the packed stages).
    Raises CPUManagerError with kubelet's texts."""
    if num_cpus % cpu_group_size != 0:
        return take_by_topology_numa_packed(topo, available, num_cpus, strategy, False, steps)
    acc = CPUAccumulator(topo, available, num_cpus, strategy)
    if acc.is_satisfied():
        return CPUSet(acc.result)
    if acc.is_failed():
        raise _not_enough(num_cpus, available)
    numas = acc.sort_available_numa_nodes()
    min_numas, max_numas = acc.range_numa_nodes_needed_to_satisfy(cpu_group_size)
    numa_masks = topo.numa_masks

    def free_in(numa: int) -> int:
        return (acc.avail & numa_masks[numa]).bit_count()

    for k in range(min_numas, max_numas + 1):
        best_balance = math.inf
        best_remainder: Optional[tuple[int, ...]] = None
        best_combo: Optional[tuple[int, ...]] = None
        for combo in combinations(numas, k):
            if best_balance == 0:
                break
            if sum(free_in(n) for n in combo) < num_cpus:
                continue
            if sum(free_in(n) // cpu_group_size for n in combo) * cpu_group_size < num_cpus:
                continue
            distribution = (num_cpus // len(combo) // cpu_group_size) * cpu_group_size
            if any(free_in(n) < distribution for n in combo):
                continue
            after = {n: free_in(n) for n in numas}
            for n in combo:
                after[n] -= distribution
            remainder = num_cpus - distribution * len(combo)
            remainder_combo = [n for n in combo if after[n] >= cpu_group_size]
            best_local_balance = math.inf
            best_local_remainder: Optional[tuple[int, ...]] = None
            if remainder == 0:
                best_local_balance = standard_deviation(list(after.values()))
            j = len(remainder_combo)
            while remainder > 0 and j >= 1:
                for subset in combinations(remainder_combo, j):
                    left = dict(after)
                    if sum(left[n] for n in subset) < remainder:
                        continue
                    rest = remainder
                    while rest > 0:
                        before = rest
                        for n in subset:
                            if rest == 0:
                                break
                            if left[n] < cpu_group_size:
                                continue
                            left[n] -= cpu_group_size
                            rest -= cpu_group_size
                        if rest == before:
                            raise _endless("while scoring the remainder")
                    balance = standard_deviation(list(left.values()))
                    if balance < best_local_balance:
                        best_local_balance = balance
                        best_local_remainder = subset
                j -= 1
            if best_local_balance < best_balance:
                best_balance = best_local_balance
                best_remainder = best_local_remainder
                best_combo = combo
        if best_combo is None:
            continue
        distribution = (num_cpus // len(best_combo) // cpu_group_size) * cpu_group_size
        for n in best_combo:
            taken = _packed_or_empty(topo, CPUSet(acc.avail & numa_masks[n]), distribution, strategy)
            acc.take(taken)
            _note(steps, taken, n)
        remainder = num_cpus - distribution * len(best_combo)
        while remainder > 0:
            before = remainder
            for n in best_remainder or ():
                if remainder == 0:
                    break
                if free_in(n) < cpu_group_size:
                    continue
                taken = _packed_or_empty(topo, CPUSet(acc.avail & numa_masks[n]), cpu_group_size, strategy)
                acc.take(taken)
                _note(steps, taken, n)
                remainder -= cpu_group_size
            if remainder == before:
                raise _endless("while taking the remainder")
        if acc.needed > 0:
            raise CPUManagerError(f"accounting error, not enough CPUs allocated, remaining: {acc.needed}")
        if acc.needed < 0:
            raise CPUManagerError(f"accounting error, too many CPUs allocated, remaining: {acc.needed}")
        return CPUSet(acc.result)
    return take_by_topology_numa_packed(topo, available, num_cpus, strategy, False, steps)
