"""kubelet's bitmask_test.go, translated: masks are ints, asserted through bitmask_string like upstream."""
import pytest
from hypothesis import given, settings, strategies as st

from topologymanager import bitmask as bm
from topologymanager.bitmask import BitMaskError


def test_new_empty_bitmask():
    assert bm.bitmask_string(bm.new_empty_bitmask()) == "00"


@pytest.mark.parametrize(
    "bits, expected",
    [
        ([], "00"),
        ([0], "01"),
        ([1, 0], "11"),
        ([63], "1" + "0" * 63),
    ],
)
def test_new_bitmask(bits, expected):
    assert bm.bitmask_string(bm.new_bitmask(*bits)) == expected


@pytest.mark.parametrize("bits", [[-1], [64], [0, 64], [1, -1, 2]])
def test_new_bitmask_out_of_range(bits):
    with pytest.raises(BitMaskError, match="^bit number must be in range 0-63$"):
        bm.new_bitmask(*bits)


@pytest.mark.parametrize(
    "start, bits, expected",
    [
        (0, [0], "01"),
        (0, [1], "10"),
        (0, [0, 1], "11"),
        (0, [0, 1, 2], "0111"),
        (1, [2], "0101"),
        (0, [3], "1000"),
        (0, [0, 63], "1" + "0" * 62 + "1"),
    ],
)
def test_add(start, bits, expected):
    assert bm.bitmask_string(bm.add(start, *bits)) == expected


@pytest.mark.parametrize("bits", [[-1, 64], [0, 64], [64, 0]])
def test_add_out_of_range_changes_nothing(bits):
    mask = bm.new_empty_bitmask()
    with pytest.raises(BitMaskError, match="bit number must be in range 0-63"):
        mask = bm.add(mask, *bits)
    assert bm.bitmask_string(mask) == "00"


@pytest.mark.parametrize(
    "start, bits, expected",
    [
        ([0], [0], "00"),
        ([0, 1], [0], "10"),
        ([0, 1], [0, 1], "00"),
        ([0, 1, 2], [0, 1], "100"),
        ([0, 1, 2], [1], "0101"),
        ([0, 1, 2], [2], "11"),
        ([0, 1], [3], "11"),
    ],
)
def test_remove(start, bits, expected):
    assert bm.bitmask_string(bm.remove(bm.new_bitmask(*start), *bits)) == expected


def test_remove_out_of_range_changes_nothing():
    mask = bm.new_bitmask(0)
    with pytest.raises(BitMaskError):
        mask = bm.remove(mask, -1, 64)
    assert bm.bitmask_string(mask) == "01"
    with pytest.raises(BitMaskError):
        bm.remove(mask, 0, 64)  # the valid bit is not removed either
    assert mask == 1


@pytest.mark.parametrize(
    "masks, expected",
    [
        ([[0], [1]], "00"),
        ([[0, 1], [0, 1]], "11"),
        ([[0, 1], [0, 1, 2]], "11"),
        ([[0, 1, 2], [0, 1]], "11"),
        ([[0, 1, 2, 3], [0, 1, 2], [0, 1]], "11"),
        ([[0, 1, 2, 3], [1, 2, 3], [2, 3], [3]], "1000"),
        ([[0], [0], [1], [0, 1]], "00"),
    ],
)
def test_and(masks, expected):
    values = [bm.new_bitmask(*m) for m in masks]
    first = values[0]
    assert bm.bitmask_string(bm.and_(first, *values[1:])) == expected
    assert first == values[0]  # the package-level fold does not change its first argument


@pytest.mark.parametrize(
    "masks, expected",
    [
        ([[0], [1]], "11"),
        ([[0, 1], [0, 1]], "11"),
        ([[0, 1, 2], [3]], "1111"),
        ([[3], [2], [1], [0]], "1111"),
        ([[0], [0], [0]], "01"),
    ],
)
def test_or(masks, expected):
    values = [bm.new_bitmask(*m) for m in masks]
    assert bm.bitmask_string(bm.or_(values[0], *values[1:])) == expected


def test_clear_and_fill():
    assert bm.bitmask_string(bm.clear(bm.new_bitmask(0, 1))) == "00"
    assert bm.bitmask_string(bm.fill(0)) == "1" * 64
    assert bm.fill(bm.new_bitmask(3)) == (1 << 64) - 1


@pytest.mark.parametrize("bits, expected", [([], True), ([0], False), ([63], False)])
def test_is_empty(bits, expected):
    assert bm.is_empty(bm.new_bitmask(*bits)) is expected


@pytest.mark.parametrize(
    "bits, check, expected",
    [
        ([], 0, False),
        ([0], 0, True),
        ([1], 0, False),
        ([0, 1], 1, True),
        ([63], 63, True),
        ([0], -1, False),
        ([0], 64, False),
    ],
)
def test_is_set(bits, check, expected):
    assert bm.is_set(bm.new_bitmask(*bits), check) is expected


@pytest.mark.parametrize(
    "bits, checks, expected",
    [
        ([], [0], False),
        ([0], [0], True),
        ([1], [0, 2], False),
        ([0, 2], [1, 2], True),
        ([0], [-1, 64], False),
        ([0], [], False),
    ],
)
def test_any_set(bits, checks, expected):
    assert bm.any_set(bm.new_bitmask(*bits), checks) is expected


@pytest.mark.parametrize(
    "a, b, expected",
    [([], [], True), ([0], [0], True), ([0], [1], False), ([0, 1], [0], False), ([63], [63], True)],
)
def test_is_equal(a, b, expected):
    assert bm.is_equal(bm.new_bitmask(*a), bm.new_bitmask(*b)) is expected


@pytest.mark.parametrize("bits, expected", [([], 0), ([0], 1), ([0, 1, 2], 3), (list(range(64)), 64)])
def test_count(bits, expected):
    assert bm.count(bm.new_bitmask(*bits)) == expected


@pytest.mark.parametrize("bits", [[], [0], [1], [0, 5, 63], list(range(64))])
def test_get_bits(bits):
    assert bm.get_bits(bm.new_bitmask(*bits)) == sorted(bits)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([0], [1], True),   # same size: numerically lower
        ([1], [0], False),
        ([0], [0, 1], True),  # fewer bits
        ([0, 1], [0], False),
        ([0, 1], [0, 1], False),
        ([1, 2], [0, 3], True),  # 6 < 9: numeric, not "lowest bit wins"
        ([0, 3], [1, 2], False),
        ([7], [0, 1], True),
    ],
)
def test_is_narrower_than(a, b, expected):
    assert bm.is_narrower_than(bm.new_bitmask(*a), bm.new_bitmask(*b)) is expected


@pytest.mark.parametrize(
    "a, b, less, greater",
    [([0], [1], True, False), ([1], [0], False, True), ([0], [0], False, False), ([1, 2], [0, 3], True, False)],
)
def test_is_less_and_greater_than(a, b, less, greater):
    ma, mb = bm.new_bitmask(*a), bm.new_bitmask(*b)
    assert bm.is_less_than(ma, mb) is less
    assert bm.is_greater_than(ma, mb) is greater


@pytest.mark.parametrize(
    "value, expected",
    [(0, "00"), (1, "01"), (2, "10"), (3, "11"), (4, "100"), (5, "0101"), (8, "1000"), (16, "10000"),
     (17, "010001"), ((1 << 64) - 1, "1" * 64)],
)
def test_string_padding_quirk(value, expected):
    assert bm.bitmask_string(value) == expected


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16])
def test_iterate_bit_masks_count(n):
    masks = list(bm.iterate_bit_masks(list(range(n))))
    assert len(masks) == 2 ** n - 1
    assert len(set(masks)) == 2 ** n - 1


def test_iterate_bit_masks_order():
    got = [bm.get_bits(m) for m in bm.iterate_bit_masks([0, 1, 2])]
    assert got == [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]
    # combinations follow the positions in the input list, not numeric order
    got = [bm.get_bits(m) for m in bm.iterate_bit_masks([2, 0, 1])]
    assert got == [[2], [0], [1], [0, 2], [1, 2], [0, 1], [0, 1, 2]]
    assert list(bm.iterate_bit_masks([])) == []


def test_iterate_bit_masks_rejects_bad_bits_at_call():
    with pytest.raises(BitMaskError):
        bm.iterate_bit_masks([0, 64])


@pytest.mark.parametrize("bad", ["1", 1.0, None, True])
def test_non_integer_bits_are_named(bad):
    with pytest.raises(BitMaskError, match="integer"):
        bm.new_bitmask(bad)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 63), max_size=10), st.lists(st.integers(0, 63), max_size=10))
def test_narrower_is_a_strict_total_order(a, b):
    ma, mb = bm.new_bitmask(*a), bm.new_bitmask(*b)
    if ma == mb:
        assert not bm.is_narrower_than(ma, mb)
    else:
        assert bm.is_narrower_than(ma, mb) != bm.is_narrower_than(mb, ma)
    assert set(bm.get_bits(ma)) == set(a)
    assert bm.count(ma) == len(set(a))
