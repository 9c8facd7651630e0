"""The static policy's hints as a family: calculateHints on 34- and 64-NUMA-node machines.

kubelet's calculateHints walks every NUMA mask (2^34 on a GB200 tray) and keeps the
ones that can hold the request. The rules it applies per mask are few, and they give
the kept masks a shape that `topologymanager.hint_family` can search without a list:

* a single node is kept when it is not part of a multi-NUMA group and its free memory
  (plus the pod's re-usable init memory on it) covers the request;
* a mask of two or more nodes touching a node that holds memory is kept only if it *is*
  that node's group (and all the checks pass): one candidate per existing group;
* any other mask of two or more nodes uses only nodes holding nothing (the universe U),
  and is kept when its summed allocatable and free memory cover the request: adding a
  node of U never hurts, so this part is monotone;
* masks with re-usable memory are checked one by one (they are few);
* preferred means "as few nodes as the narrowest mask whose *allocatable* memory fits".

So the family is: X = the kept singles, groups and re-use masks; U; per node of U the
weight vector (free and allocatable per requested resource); capacity = U's totals minus
the request. The preferred width is the smallest k such that some k nodes' allocatable
memory covers every resource, found by the same pruned search over all nodes.

Worked example: three nodes with 4, 4 and 4 GiB free and allocatable, nothing assigned,
a request of 6 GiB of memory. No node alone fits, every pair does (8 >= 6):

>>> from state.types import MemoryTable, NUMANodeState
>>> GiB = 1 << 30
>>> def node(): return NUMANodeState(memory_map={"memory": MemoryTable(
...     total_mem_size=4 * GiB, allocatable=4 * GiB, free=4 * GiB)}, cells=[])
>>> fam = family_hints({0: node(), 1: node(), 2: node()}, {"memory": 6 * GiB})["memory"]
>>> fam.preferred_width, [bin(h.numa_node_affinity) for h in fam], fam.best_hint()
(2, ['0b11', '0b101', '0b110', '0b111'], TopologyHint([0, 1], preferred=True))

This is exactly the list kubelet builds ({0,1} {0,2} {1,2} preferred, {0,1,2} not), but a
64-node machine costs the same few steps.

Side effects are kubelet's: comparing groups sorts the `cells` lists of the nodes kubelet's
loop would compare, and only those (see `_sort_compared_cells`).

Boundary: negative free or allocatable amounts (never produced by kubelet) break
monotonicity; such inputs raise BoundedWorkError, as does a re-use look-up that cannot
list its masks.
"""
from __future__ import annotations

from typing import Optional

from state.types import NUMANodeMap
from topologymanager.errors import BoundedWorkError
from topologymanager.hint_family import HintFamily, WorkBudget, bits_of, monotone_members

from memorymanager.hint_inputs import hint_inputs
from memorymanager.reusable_memory import ReusableLookup, no_reuse

# calculate_hints hands machines with more NUMA nodes than this to the family path; up to
# here today's enumerating code answers in well under a second.
FAMILY_MIN_NODES = 17


class MemoryHintFamily(HintFamily):
    """The memory manager's hints for one request on one machine state (real NUMA ids)."""

    def __init__(self, nodes: int, explicit: list[int], universe: int, weights: dict[int, tuple[int, ...]],
                 capacity: Optional[tuple[int, ...]], preferred_width: int, resources: list[str]):
        """The family's parts, and the resources it answers for (every one has the same list)."""
        super().__init__(nodes, explicit, universe, weights, capacity, preferred_width)
        self.resources = resources


def family_hints(machine_state: NUMANodeMap, requested: dict[str, int], reusable: ReusableLookup = no_reuse,
                 budget: Optional[WorkBudget] = None) -> dict[str, HintFamily]:
    """calculate_hints as a family: {resource: the same family} or {} when nothing fits.

    Raises the reference loop's errors for missing nodes or tables (read in its order).
    """
    numa_nodes = sorted(machine_state)
    budget = budget or WorkBudget(what="the memory manager's hints", nodes=len(numa_nodes))
    inputs = hint_inputs(machine_state, numa_nodes, requested, reusable)
    n = len(numa_nodes)
    real = [1 << i for i in numa_nodes]
    if any(v < 0 for table in (*inputs.free, *inputs.allocatable) for v in table):
        raise BoundedWorkError(
            f"kubelet would enumerate 2^{n} NUMA masks here; negative free or allocatable memory "
            "makes the hint family non-monotone, so the shortcut cannot answer"
        )
    sizes = inputs.sizes
    all_pos = (1 << n) - 1

    def sums(table: list[int], m: int) -> int:
        return sum(table[b.bit_length() - 1] for b in bits_of(m))

    def alloc_ok(m: int) -> bool:
        return all(sums(t, m) >= s for t, s in zip(inputs.allocatable, sizes))

    preferred_width = _min_fitting_width(inputs.allocatable, sizes, all_pos, alloc_ok, budget)
    if preferred_width is None:
        return {}

    reuse_masks: list[int] = []
    if reusable is not no_reuse:
        masks = getattr(reusable, "masks", None)
        if masks is None:
            raise BoundedWorkError(
                f"kubelet would enumerate 2^{n} NUMA masks here; the re-usable memory look-up cannot list its masks"
            )
        position = {1 << node_id: p for p, node_id in enumerate(numa_nodes)}
        for mask in masks():
            if mask and all(b in position for b in bits_of(mask)):
                reuse_masks.append(sum(1 << position[b] for b in bits_of(mask)))

    def to_real(m: int) -> int:
        return sum(real[b.bit_length() - 1] for b in bits_of(m))

    def free_ok(m: int) -> bool:
        mask = to_real(m)
        for t, resource, size in zip(inputs.free, inputs.resources, sizes):
            extra = reusable(mask, resource) if reusable is not no_reuse else 0
            if sums(t, m) + extra < size:
                return False
        return True

    group = _groups(inputs)
    in_group, assigned, single_cell = inputs.in_group, inputs.assigned, inputs.single_cell

    def member(m: int) -> bool:
        if not alloc_ok(m):
            return False
        if m & (m - 1) == 0:
            return not m & in_group and free_ok(m)
        for b in bits_of(m & assigned):
            if b & single_cell or group[b.bit_length() - 1] != m:
                return False
        return free_ok(m)

    if not (reusable is no_reuse and assigned == single_cell):
        _sort_compared_cells(inputs, group, alloc_ok)

    candidates = set(1 << p for p in range(n))
    for b in bits_of(assigned & ~single_cell):
        g = group[b.bit_length() - 1]
        if g > 0 and g.bit_count() >= 2:
            candidates.add(g)
    candidates.update(reuse_masks)
    explicit = [to_real(m) for m in candidates if member(m)]

    universe = all_pos & ~assigned
    weights = {numa_nodes[b.bit_length() - 1]: tuple(t[b.bit_length() - 1] for t in (*inputs.free, *inputs.allocatable))
               for b in bits_of(universe)}
    capacity = tuple(sums(t, universe) - s for t, s in zip((*inputs.free, *inputs.allocatable), (*sizes, *sizes)))
    family = MemoryHintFamily(to_real(all_pos), explicit, to_real(universe), weights, capacity, preferred_width,
                              list(inputs.resources))
    if not family:
        return {}
    return {resource: family for resource in inputs.resources}


def _min_fitting_width(tables: list[list[int]], sizes: list[int], universe: int, ok, budget: WorkBudget) -> Optional[int]:
    """The fewest nodes whose summed values reach every size (None: not even all nodes)."""
    if not ok(universe):
        return None
    n = universe.bit_count()
    start = 1
    for table, size in zip(tables, sizes):
        total, k = 0, 0
        for v in sorted(table, reverse=True):
            if total >= size:
                break
            total += v
            k += 1
        start = max(start, k)
    threshold = ({1 << p: tuple(t[p] for t in tables) for p in range(n)}, tuple(sizes))
    for w in range(max(start, 1), n + 1):
        # the threshold is exactly `ok` (summed values reach the sizes), so no other check is needed
        if next(monotone_members(universe, w, 0, _any, budget, threshold=threshold), None) is not None:
            return w
    return n


def _any(mask: int) -> bool:
    return True


def _groups(inputs) -> list[int]:
    """Position mask of each node's group (-1 for none, an unknown node or a duplicate), without sorting."""
    position = {node_id: p for p, node_id in enumerate(inputs.numa_nodes)}
    out = []
    for node in inputs.nodes:
        cells = node.cells
        g = 0
        for node_id in cells or []:
            if node_id not in position or g >> position[node_id] & 1:
                g = -1
                break
            g |= 1 << position[node_id]
        out.append(g if cells else -1)
    return out


def _sort_compared_cells(inputs, group: list[int], alloc_ok) -> None:
    """Sort, in place, the `cells` of exactly the nodes whose group kubelet's loop compares.

    The loop compares node p's group when some candidate mask m (two or more nodes,
    allocatable fits) contains p and every node holding memory below p in m is in group m.
    Either no node holding memory lies below p in m (then the largest such m is p, every
    node above p and every free node below p: allocatable fits are monotone), or m is the
    group of such a node.
    """
    assigned, single_cell = inputs.assigned, inputs.single_cell
    n = len(inputs.nodes)
    for p in range(n):
        bit = 1 << p
        if not bit & assigned or bit & single_cell:
            continue
        reached = False
        widest = bit | (((1 << n) - 1) & ~((bit << 1) - 1)) | ((bit - 1) & ~assigned)
        if widest.bit_count() >= 2 and alloc_ok(widest):
            reached = True
        for q in range(p):
            if reached:
                break
            qb = 1 << q
            g = group[q]
            if not qb & assigned or qb & single_cell or g <= 0 or not g & bit or g.bit_count() < 2 or not alloc_ok(g):
                continue
            below = g & assigned & (bit - 1)
            if all(not b & single_cell and group[b.bit_length() - 1] == g for b in bits_of(below)):
                reached = True
        if reached and inputs.nodes[p].cells is not None:
            inputs.nodes[p].cells.sort()
