"""NUMA bitmasks as plain Python ints (kubelet's `topologymanager/bitmask` package).

Bit i set = NUMA node i. kubelet stores a mask in one uint64, so only bits 0..63
exist; every function that takes bit numbers range-checks them first and raises
`BitMaskError` (text `bit number must be in range 0-63`) before computing anything,
which mirrors kubelet's "validate everything, then write back" Add/Remove.

kubelet's mutating methods (Add, Remove, And, Or, Clear, Fill) become pure
functions returning a new int; the value passed in is never changed (ints are
immutable anyway).
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterable, Iterator, Sequence

MAX_BITS = 64
"""Number of bits in a kubelet bitmask (a uint64)."""

FULL_MASK = (1 << MAX_BITS) - 1
"""All 64 bits set: the value of `fill()`."""

RANGE_ERROR = "bit number must be in range 0-63"


class BitMaskError(ValueError):
    """A bit number outside 0-63 (or not an integer) was given to a bitmask function."""


def _check_bits(bits: Iterable[int]) -> list[int]:
    """Validate every bit number before any is used; returns them as a list."""
    checked = []
    for bit in bits:
        if isinstance(bit, bool) or not isinstance(bit, int):
            raise BitMaskError(f"bit number must be an integer, got {bit!r}")
        if bit < 0 or bit >= MAX_BITS:
            raise BitMaskError(RANGE_ERROR)
        checked.append(bit)
    return checked


def _check_mask(mask: int) -> int:
    """Validate a mask value: an int in the uint64 range."""
    if isinstance(mask, bool) or not isinstance(mask, int):
        raise BitMaskError(f"bitmask must be an integer, got {mask!r}")
    if mask < 0 or mask > FULL_MASK:
        raise BitMaskError(f"bitmask {mask} is outside the 64-bit range")
    return mask


def new_empty_bitmask() -> int:
    """kubelet's NewEmptyBitMask: no bit set."""
    return 0


def new_bitmask(*bits: int) -> int:
    """kubelet's NewBitMask: a mask with exactly `bits` set (duplicates allowed)."""
    return add(0, *bits)


def add(mask: int, *bits: int) -> int:
    """`mask` with `bits` also set; on a bad bit nothing is applied (BitMaskError)."""
    result = _check_mask(mask)
    for bit in _check_bits(bits):
        result |= 1 << bit
    return result


def remove(mask: int, *bits: int) -> int:
    """`mask` with `bits` cleared; on a bad bit nothing is applied (BitMaskError)."""
    result = _check_mask(mask)
    for bit in _check_bits(bits):
        result &= ~(1 << bit)
    return result


def and_(first: int, *masks: int) -> int:
    """Package-level And: `first` AND every mask in `masks`."""
    result = _check_mask(first)
    for m in masks:
        result &= _check_mask(m)
    return result


def or_(first: int, *masks: int) -> int:
    """Package-level Or: `first` OR every mask in `masks`."""
    result = _check_mask(first)
    for m in masks:
        result |= _check_mask(m)
    return result


def clear(_mask: int = 0) -> int:
    """kubelet's Clear: the empty mask."""
    return 0


def fill(_mask: int = 0) -> int:
    """kubelet's Fill: all 64 bits set (not just the machine's NUMA nodes)."""
    return FULL_MASK


def is_empty(mask: int) -> bool:
    """True when no bit is set."""
    return mask == 0


def is_set(mask: int, bit: int) -> bool:
    """Whether `bit` is set; bits outside 0-63 (or non-ints) are never set."""
    if isinstance(bit, bool) or not isinstance(bit, int) or bit < 0 or bit >= MAX_BITS:
        return False
    return (mask >> bit) & 1 == 1


def any_set(mask: int, bits: Iterable[int]) -> bool:
    """Whether any of `bits` is set in `mask`."""
    return any(is_set(mask, b) for b in bits)


def is_equal(a: int, b: int) -> bool:
    """Value equality (two empty masks are equal)."""
    return a == b


def count(mask: int) -> int:
    """Number of set bits."""
    return mask.bit_count()


def get_bits(mask: int) -> list[int]:
    """The set bit numbers, ascending (empty list for the empty mask)."""
    bits = []
    i = 0
    while mask:
        if mask & 1:
            bits.append(i)
        mask >>= 1
        i += 1
    return bits


def is_less_than(a: int, b: int) -> bool:
    """kubelet's IsLessThan: plain unsigned comparison of the mask values."""
    return a < b


def is_greater_than(a: int, b: int) -> bool:
    """kubelet's IsGreaterThan: plain unsigned comparison of the mask values."""
    return a > b


def is_narrower_than(a: int, b: int) -> bool:
    """kubelet's IsNarrowerThan: fewer bits set, or as many bits and numerically smaller."""
    ca, cb = a.bit_count(), b.bit_count()
    if ca == cb:
        return a < b
    return ca < cb


def bitmask_string(mask: int) -> str:
    """kubelet's String(): binary digits, zero-padded to a width that grows in steps of two.

    The width is s + 2 for the largest even s (62 down to 2) with mask strictly
    greater than 2**s, else 2; so 4 renders as `100` (kubelet's quirk) and 5 as `0101`.
    """
    for shift in range(MAX_BITS - 2, 0, -2):
        if mask > (1 << shift):
            return format(mask, f"0{shift + 2}b")
    return format(mask, "02b")


def iterate_bit_masks(bits: Sequence[int]) -> Iterator[int]:
    """Every non-empty combination of `bits` as a mask, in kubelet's IterateBitMasks order.

    Sizes 1..len(bits); within a size, combinations in the lexicographic order of
    positions in `bits` (so the input order matters). 2**n - 1 masks in total.
    """
    checked = _check_bits(bits)  # eager: a bad bit fails at the call, not at the first next()
    return _iterate_checked(checked)


def _iterate_checked(bits: list[int]) -> Iterator[int]:
    """The generator behind iterate_bit_masks (bits already validated)."""
    for size in range(1, len(bits) + 1):
        for combo in combinations(bits, size):
            mask = 0
            for bit in combo:
                mask |= 1 << bit
            yield mask
