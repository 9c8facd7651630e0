"""The Linux cpuset list format (k8s.io/utils/cpuset): kubelet's CPU sets and their text form.

`cpuset_string` writes ids as kubelet's `CPUSet.String()` does (what kubelet puts in `cpuset.mems`,
`cpuset.cpus` and the CPU manager's checkpoint): sorted ids, runs of consecutive ids written as
`first-last`, joined by commas.

>>> cpuset_string([3, 0, 1, 2, 5])
'0-3,5'
>>> cpuset_string([1])
'1'
>>> cpuset_string([])
''

`CPUSet` is kubelet's immutable `cpuset.CPUSet`, held as a Python int bitmask (bit i = CPU i) so
that unions, differences and sizes cost one machine-word operation per 64 CPUs. `CPUSet.parse`
reads the list format exactly as `cpuset.Parse` does, with its error texts:

>>> str(CPUSet.parse("0-3,8,10-11").union(CPUSet.new(4)))
'0-4,8,10-11'
>>> CPUSet.parse("3-1")
Traceback (most recent call last):
...
kubeinputs.cpuset.CPUSetError: invalid range "3-1" (3 > 1)
"""
from __future__ import annotations

from typing import Iterable, Iterator

from kubeinputs.errors import Error
from kubeinputs.goformat import go_quote
from kubeinputs.limits import WorkLimitError

# CPU ids this simulator holds in a set: kubelet's Go maps take any int, but a range such as
# "0-4000000000" would make kubelet build a map of four billion entries. Linux itself numbers CPUs
# below CONFIG_NR_CPUS (at most 8192 on x86, 16384 elsewhere).
MAX_CPU_ID = (1 << 22) - 1

_INT64_MAX = (1 << 63) - 1


class CPUSetError(Error, ValueError):
    """A cpuset list kubelet's cpuset.Parse refuses; str() is its error text."""


def cpuset_string(ids: Iterable[int]) -> str:
    """The ids as a cpuset list (`0-1,3`); duplicates are counted once, the empty set is ``""``."""
    return str(CPUSet.new(*ids))


def _go_atoi(text: str) -> int:
    """strconv.Atoi: an optional sign and ASCII digits, within int64; Go's error texts."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= ch <= "9" for ch in digits):
        raise CPUSetError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    if len(digits) > 19 or int(digits) > _INT64_MAX + (1 if text[0] == "-" else 0):
        raise CPUSetError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return -int(digits) if text[0] == "-" else int(digits)


def _bit_ids(mask: int) -> Iterator[int]:
    """The positions of the set bits of `mask`, ascending. Cost: O(bits set) big-int steps."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class CPUSet:
    """kubelet's immutable set of CPU ids (non-negative ints)."""

    __slots__ = ("mask",)

    def __init__(self, mask: int = 0) -> None:
        """The set whose bitmask is `mask` (bit i = CPU i)."""
        self.mask = mask

    # ----- construction ---------------------------------------------------------------------------

    @classmethod
    def new(cls, *ids: int) -> "CPUSet":
        """cpuset.New(ids...): the set of these ids (each 0 <= id <= MAX_CPU_ID)."""
        mask = 0
        for cpu in ids:
            if cpu < 0 or cpu > MAX_CPU_ID:
                raise ValueError(f"CPU id {cpu} out of range 0..{MAX_CPU_ID}")
            mask |= 1 << cpu
        return cls(mask)

    @classmethod
    def parse(cls, text: str) -> "CPUSet":
        """cpuset.Parse: `0-5,34,46-48`; "" is the empty set. Raises CPUSetError with kubelet's text,
        or WorkLimitError for ids past MAX_CPU_ID (which kubelet would accept)."""
        if text == "":
            return cls()
        mask = 0
        for part in text.split(","):
            first, sep, last = part.partition("-")
            if not sep:
                start = end = _go_atoi(first)
            else:
                start, end = _go_atoi(first), _go_atoi(last)
                if start > end:
                    raise CPUSetError(f"invalid range {go_quote(part)} ({start} > {end})")
            if end > MAX_CPU_ID or start < 0:
                raise WorkLimitError(
                    f"cpuset {go_quote(text[:80])} names CPU {end if end > MAX_CPU_ID else start}: kubelet would "
                    f"build a set that large; this simulator holds CPU ids 0..{MAX_CPU_ID}"
                )
            mask |= ((1 << (end - start + 1)) - 1) << start
        return cls(mask)

    # ----- queries --------------------------------------------------------------------------------

    def size(self) -> int:
        """How many CPUs."""
        return self.mask.bit_count()

    def is_empty(self) -> bool:
        """No CPU at all."""
        return self.mask == 0

    def contains(self, cpu: int) -> bool:
        """Whether CPU `cpu` is in the set."""
        return cpu >= 0 and (self.mask >> cpu) & 1 == 1

    def equals(self, other: "CPUSet") -> bool:
        """Same CPUs."""
        return self.mask == other.mask

    def is_subset_of(self, other: "CPUSet") -> bool:
        """Every CPU of this set is in `other`."""
        return self.mask & ~other.mask == 0

    def is_superset_of(self, other: "CPUSet") -> bool:
        """Every CPU of `other` is in this set."""
        return other.mask & ~self.mask == 0

    def list(self) -> list[int]:
        """The ids, ascending (cpuset.List)."""
        return list(_bit_ids(self.mask))

    def unsorted_list(self) -> list[int]:
        """The ids (Go returns them in random order; ascending here)."""
        return self.list()

    # ----- operations -----------------------------------------------------------------------------

    def union(self, *others: "CPUSet") -> "CPUSet":
        """CPUs in this set or any of `others`."""
        mask = self.mask
        for other in others:
            mask |= other.mask
        return CPUSet(mask)

    def intersection(self, other: "CPUSet") -> "CPUSet":
        """CPUs in both sets."""
        return CPUSet(self.mask & other.mask)

    def difference(self, other: "CPUSet") -> "CPUSet":
        """CPUs of this set not in `other`."""
        return CPUSet(self.mask & ~other.mask)

    def clone(self) -> "CPUSet":
        """The same set (sets are immutable: itself)."""
        return self

    # ----- text -----------------------------------------------------------------------------------

    def __str__(self) -> str:
        """kubelet's canonical cpuset string (`0-3,8,10-11`)."""
        mask = self.mask
        runs: list[str] = []
        while mask:
            start = (mask & -mask).bit_length() - 1
            run_mask = mask >> start
            length = (~run_mask & (run_mask + 1)).bit_length() - 1  # trailing ones of run_mask
            end = start + length - 1
            runs.append(str(start) if start == end else f"{start}-{end}")
            mask &= ~(((1 << length) - 1) << start)
        return ",".join(runs)

    def __repr__(self) -> str:
        return f"CPUSet({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CPUSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(self.mask)

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __iter__(self) -> Iterator[int]:
        return _bit_ids(self.mask)

    def __contains__(self, cpu: object) -> bool:
        return isinstance(cpu, int) and self.contains(cpu)

    def __bool__(self) -> bool:
        return self.mask != 0
