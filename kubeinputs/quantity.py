"""Kubernetes resource quantities, parsed and printed exactly as apimachinery's `resource.Quantity`.

Why exact: kubelet's admission and its error texts depend on quantity details (a `1000m` memory request
cannot be converted to int64; `1Gi + 100Mi` prints as `1124Mi`). This module reproduces
`ParseQuantity` (grammar, suffixes, error texts, rounding up below 1n, the BinarySI cap),
`String()` (canonical forms, including the verbatim reuse of an input that is already canonical),
`AsInt64`, `Value`, `Add`, `Sub` and `Cmp`.

A value is kept as `unscaled * 10**exp10` in one of Go's two internal forms: the int64 fast path
(`int64Amount`, where `unscaled` fits an int64) or the big-decimal form (`inf.Dec`, `is_dec`). The form
matters only for `as_int64()`, which like Go fails for every big-decimal value (`0.5Gi`, `1.5Gi`, `100Ti`)
and for every int64 value with a negative scale (`1000m`, `1.5`).

Upstream read: kubernetes/apimachinery pkg/api/resource quantity.go (357557a), amount.go, math.go,
scale_int.go, suffix.go, quantity_test.go (cb59c81e). Newest behaviour followed where versions differ:
exponents outside +-(2^31-1) are rejected, and a DecimalSI/BinarySI value with no suffix large (or small)
enough prints in exponent notation (`1000E` -> `1e21`) instead of silently dropping the magnitude.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Optional, Union

from kubeinputs.limits import DEFAULT_LIMITS, number_too_long

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"
FORMATS = (BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT)

SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_INT64 = "failed to represent quantity as int64"

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
_MAX_INT32 = (1 << 31) - 1
_NANO = -9
# Exponent spans this large would make Go (and us) build astronomically large numbers; refused instead.
_MAX_MATERIALISED_DIGITS = 100_000

_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {exp // 10: suffix for suffix, exp in _BINARY_SUFFIXES.items()}
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_GO_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_DEC_VALUE_RE = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?$")
# Go's unicode.IsSpace set, used by strings.TrimSpace in Quantity.UnmarshalJSON.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; str() is apimachinery's error text."""


def _fits_int64(value: int) -> bool:
    """Whether `value` is within int64."""
    return INT64_MIN <= value <= INT64_MAX


def _wrap_int64(value: int) -> int:
    """`value` reduced to a two's-complement int64, as Go's integer overflow wraps."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= (1 << 63) else value


def _big_int64(value: int) -> int:
    """Go's big.Int.Int64(): the low 64 bits of |value|, negated for negative values."""
    low = _wrap_int64(abs(value))
    return _wrap_int64(-low) if value < 0 else low


def _float_to_int64(value: float) -> int:
    """Go's int64(float64) on amd64: truncation, and the "integer indefinite" value when out of range."""
    if math.isnan(value) or value >= 2.0 ** 63 or value < -(2.0 ** 63):
        return INT64_MIN
    return int(value)


def _positive_scale(base: int, scale: int) -> tuple[int, bool]:
    """base * 10**scale for scale >= 0, with Go's overflow report (saturating to the int64 rail)."""
    if base == 0 or scale == 0:
        return base, True
    if scale >= 19:
        return (INT64_MIN if base < 0 else INT64_MAX), False
    result = base * 10 ** scale
    if not _fits_int64(result):
        return (INT64_MIN if base < 0 else INT64_MAX), False
    return result, True


def _negative_scale(base: int, scale: int) -> tuple[int, bool]:
    """base / 10**scale rounded away from zero, and whether it was exact (Go's negativeScaleInt64)."""
    if scale == 0:
        return base, True
    magnitude = abs(base)
    quotient, remainder = divmod(magnitude, 10 ** scale)
    if remainder:
        quotient += 1
    return (quotient if base >= 0 else -quotient), remainder == 0


def _strip_tens(value: int) -> tuple[int, int]:
    """value == result * 10**times with result not divisible by 10 (0 stays 0)."""
    if value == 0:
        return 0, 0
    sign = -1 if value < 0 else 1
    value = abs(value)
    text = str(value)
    stripped = text.rstrip("0")
    times = len(text) - len(stripped)
    return sign * int(stripped), times


def _strip_factor(value: int, factor: int) -> tuple[int, int]:
    """value == result * factor**times with result not divisible by factor (0 stays 0)."""
    times = 0
    while value != 0 and value % factor == 0:
        value //= factor
        times += 1
    return value, times


def _round_away(unscaled: int, exp10: int) -> tuple[int, bool]:
    """The integer nearest to unscaled*10**exp10 away from zero, and whether it is exact."""
    if exp10 >= 0:
        if exp10 > _MAX_MATERIALISED_DIGITS:
            raise QuantityError("quantity too large to represent exactly")
        return unscaled * 10 ** exp10, True
    digits = len(str(abs(unscaled)))
    if -exp10 > digits + 1:
        return (0 if unscaled == 0 else (1 if unscaled > 0 else -1)), unscaled == 0
    return _negative_scale(unscaled, -exp10)


@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact quantity: `unscaled * 10**exp10` in `format` ("BinarySI", "DecimalSI", "DecimalExponent").

    `is_dec` marks Go's big-decimal form (AsInt64 fails for it); `cached` is the input string Go
    reuses as String() when it was already canonical. Comparison and hashing are by value, like
    Go's Cmp/Equal. Use `parse_quantity`, `Quantity.from_int` or `zero_quantity` to build one.
    """

    unscaled: int
    exp10: int
    format: str = DECIMAL_SI
    is_dec: bool = False
    cached: Optional[str] = None

    # -- construction -------------------------------------------------------------------------------------
    @classmethod
    def from_int(cls, value: int, format: str = DECIMAL_SI) -> "Quantity":
        """NewQuantity(value, format): an integer number of units (a big-decimal beyond int64)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"Quantity.from_int needs an int, got {type(value).__name__}")
        return cls(value, 0, format, is_dec=not _fits_int64(value))

    # -- values -------------------------------------------------------------------------------------------
    @property
    def value(self) -> Fraction:
        """The exact value as a Fraction (builds 10**exp10: avoid on absurd exponents)."""
        if self.exp10 >= 0:
            return Fraction(self.unscaled * 10 ** self.exp10)
        return Fraction(self.unscaled, 10 ** -self.exp10)

    def is_zero(self) -> bool:
        """Whether the value is 0."""
        return self.unscaled == 0

    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self.unscaled > 0) - (self.unscaled < 0)

    def as_int64(self) -> int:
        """Go's AsInt64(): the value when the int64 fast form holds it exactly, else QuantityError.

        Fails for big-decimal values (`0.5Gi`, `1.5Gi`, `100Ti`, more than 18 digits), for any int64-form
        value with a negative scale (`1000m`, `1.5`, `1.0`), and on overflow (`10E`)."""
        if self.is_dec or self.exp10 < 0:
            raise QuantityError(ERR_INT64)
        result, ok = _positive_scale(self.unscaled, self.exp10)
        if not ok:
            raise QuantityError(ERR_INT64)
        return result

    def try_as_int64(self) -> Optional[int]:
        """as_int64(), or None where Go's AsInt64 returns ok=false."""
        try:
            return self.as_int64()
        except QuantityError:
            return None

    def value_bytes(self) -> int:
        """Go's Value(): the value as an integer, rounded up. The int64 form rounds away from zero and saturates
        at the int64 limits; the big-decimal form adds one to the truncated quotient when there is a remainder
        (so -1.5 in that form gives 0) and wraps beyond int64, exactly as Go's scaledValue does."""
        if not self.is_dec:
            value, scale = self.unscaled, self.exp10
            if value == 0:
                return 0
            if scale < 0:
                if -scale >= 19:
                    return 1 if value > 0 else -1
                return _negative_scale(value, -scale)[0]
            return _positive_scale(value, scale)[0]
        unscaled, dif = self.unscaled, -self.exp10
        if dif == 0:
            return _big_int64(unscaled)
        if dif < 0:
            return _wrap_int64(_big_int64(unscaled) * _float_to_int64(10.0 ** -dif if -dif < 309 else math.inf))
        if abs(unscaled) < INT64_MAX and dif < 19:
            divisor = 10 ** dif
            quotient = abs(unscaled) // divisor * (1 if unscaled >= 0 else -1)
            remainder = unscaled - quotient * divisor
            return quotient + 1 if remainder != 0 else quotient
        if dif > _MAX_MATERIALISED_DIGITS:
            return 1 if unscaled > 0 else 0
        quotient, remainder = divmod(unscaled, 10 ** dif)
        return _big_int64(quotient) + 1 if remainder else _big_int64(quotient)

    # -- arithmetic ---------------------------------------------------------------------------------------
    def add(self, other: "Quantity") -> "Quantity":
        """Go's q.Add(other), returned as a new Quantity. A zero receiver takes `other`'s format."""
        if not self.is_dec and not other.is_dec:
            fmt = other.format if self.unscaled == 0 else self.format
            summed = _int64_add((self.unscaled, self.exp10), (other.unscaled, other.exp10))
            if summed is not None:
                return Quantity(summed[0], summed[1], fmt)
        else:
            fmt = other.format if self.is_zero() else self.format
        unscaled, exp10 = _dec_add((self.unscaled, self.exp10), (other.unscaled, other.exp10))
        return Quantity(unscaled, exp10, fmt, is_dec=True)

    def sub(self, other: "Quantity") -> "Quantity":
        """Go's q.Sub(other), returned as a new Quantity. A zero receiver takes `other`'s format."""
        fmt = other.format if self.is_zero() else self.format
        if not self.is_dec and not other.is_dec and _fits_int64(-other.unscaled):
            summed = _int64_add((self.unscaled, self.exp10), (-other.unscaled, other.exp10))
            if summed is not None:
                return Quantity(summed[0], summed[1], fmt)
        unscaled, exp10 = _dec_add((self.unscaled, self.exp10), (-other.unscaled, other.exp10))
        return Quantity(unscaled, exp10, fmt, is_dec=True)

    def neg(self) -> "Quantity":
        """Go's q.Neg(), returned as a new Quantity."""
        if not self.is_dec and _fits_int64(-self.unscaled):
            return Quantity(-self.unscaled, self.exp10, self.format)
        return Quantity(-self.unscaled, self.exp10, self.format, is_dec=True)

    def cmp(self, other: "Quantity") -> int:
        """-1, 0 or 1 as self is less than, equal to or greater than `other` (by value)."""
        return _cmp_values((self.unscaled, self.exp10), (other.unscaled, other.exp10))

    def equal(self, other: "Quantity") -> bool:
        """Equal by value (Go's Equal), whatever the formats."""
        return self.cmp(other) == 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) == 0

    def __lt__(self, other: "Quantity") -> bool:
        return self.cmp(other) < 0

    def __le__(self, other: "Quantity") -> bool:
        return self.cmp(other) <= 0

    def __gt__(self, other: "Quantity") -> bool:
        return self.cmp(other) > 0

    def __ge__(self, other: "Quantity") -> bool:
        return self.cmp(other) >= 0

    def __hash__(self) -> int:
        unscaled, times = _strip_tens(self.unscaled)
        return hash((unscaled, self.exp10 + times if unscaled else 0))

    # -- printing -----------------------------------------------------------------------------------------
    def __str__(self) -> str:
        if self.cached:
            return self.cached
        return _canonical(self)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, {self.format})"


def size_text(size: int) -> str:
    """A byte count for people, in the one style of every report (checkpoint inspect, explain, run -v):
    Kubernetes' own BinarySI quantity, exact and short (`1Gi`, `3996Mi`, `1536`, `0`)."""
    return str(Quantity.from_int(size, BINARY_SI))


def zero_quantity(format: str = DECIMAL_SI) -> Quantity:
    """A zero quantity in `format` (Go's NewQuantity(0, format))."""
    return Quantity(0, 0, format)


# -- arithmetic helpers (Go's int64Amount and inf.Dec behaviour) -------------------------------------------
def _int64_add(a: tuple[int, int], b: tuple[int, int]) -> Optional[tuple[int, int]]:
    """int64Amount.Add: the aligned sum, or None where Go falls back to big decimals."""
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return av, ascale
    if av == 0:
        return bv, bscale
    if ascale == bscale:
        total = av + bv
        return (total, ascale) if _fits_int64(total) else None
    if ascale > bscale:
        scaled, ok = _positive_scale(av, ascale - bscale)
        if not ok:
            return None
        total = scaled + bv
        return (total, bscale) if _fits_int64(total) else None
    scaled, ok = _positive_scale(bv, bscale - ascale)
    if not ok:
        return None
    total = av + scaled
    return (total, ascale) if _fits_int64(total) else None


def _dec_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """inf.Dec addition: both operands aligned to the smaller exponent."""
    (av, ae), (bv, be) = a, b
    low = min(ae, be)
    if max(ae, be) - low > _MAX_MATERIALISED_DIGITS:
        raise QuantityError("quantity sum too large to represent exactly")
    return av * 10 ** (ae - low) + bv * 10 ** (be - low), low


def _cmp_values(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Compare unscaled*10**exp pairs without building huge powers of ten."""
    (av, ae), (bv, be) = a, b
    sa, sb = (av > 0) - (av < 0), (bv > 0) - (bv < 0)
    if sa != sb:
        return 1 if sa > sb else -1
    if sa == 0:
        return 0
    magnitude_a = len(str(abs(av))) + ae
    magnitude_b = len(str(abs(bv))) + be
    if magnitude_a != magnitude_b:
        return sa if magnitude_a > magnitude_b else -sa
    low = min(ae, be)
    x, y = av * 10 ** (ae - low), bv * 10 ** (be - low)
    return (x > y) - (x < y)


# -- canonical String() --------------------------------------------------------------------------------------
def _canonical_base10(unscaled: int, exp10: int) -> tuple[int, int]:
    """Mantissa and exponent with the exponent the largest multiple of 3 that keeps an integer mantissa."""
    mantissa, times = _strip_tens(unscaled)
    exponent = exp10 + times
    shift = exponent % 3
    return mantissa * 10 ** shift, exponent - shift


def _exponent_suffix(exponent: int) -> str:
    """The DecimalExponent suffix for a base-10 exponent (none for 0)."""
    return "" if exponent == 0 else f"e{exponent}"


def _canonical(q: Quantity) -> str:
    """Go's CanonicalizeBytes: the shortest exact form in the quantity's format."""
    if q.is_zero():
        return "0"
    fmt = q.format
    rounded: Optional[int] = None
    if fmt == BINARY_SI:
        if _cmp_values((q.unscaled, q.exp10), (-1024, 0)) > 0 and _cmp_values((q.unscaled, q.exp10), (1024, 0)) < 0:
            fmt = DECIMAL_SI
        else:
            rounded, exact = _round_away(q.unscaled, q.exp10)
            if not exact:
                fmt = DECIMAL_SI
    elif fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
        fmt = DECIMAL_EXPONENT
    if fmt in (DECIMAL_SI, DECIMAL_EXPONENT):
        mantissa, exponent = _canonical_base10(q.unscaled, q.exp10)
        if fmt == DECIMAL_SI and exponent in _DECIMAL_BY_EXP:
            return f"{mantissa}{_DECIMAL_BY_EXP[exponent]}"
        return f"{mantissa}{_exponent_suffix(exponent)}"
    assert rounded is not None
    mantissa, power = _strip_factor(rounded, 1024)
    if power == 0:
        return str(mantissa)
    if power in _BINARY_BY_POWER:
        return f"{mantissa}{_BINARY_BY_POWER[power]}"
    mantissa, exponent = _canonical_base10(q.unscaled, q.exp10)
    return f"{mantissa}{_exponent_suffix(exponent)}"


# -- ParseQuantity ---------------------------------------------------------------------------------------------
def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split a quantity string into (positive, value, numerator, denominator, suffix) like Go's scanner."""
    positive = True
    pos, end = 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while True:
        if pos >= end:
            return positive, "0", "0", "", ""
        if text[pos] != "0":
            break
        pos += 1
    i = pos
    while i < end and text[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, text, text[pos:], "", ""
    num, pos = text[pos:i], i
    if not num:
        num = "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        i = pos
        while i < end and text[i] in _DIGITS:
            i += 1
        if i >= end:
            return positive, text, num, text[pos:], ""
        denom, pos = text[pos:i], i
    value = text[:pos]
    suffix_start = pos
    i = pos
    while i < end and text[i] in _SUFFIX_CHARS:
        i += 1
    if i >= end:
        return positive, value, num, denom, text[suffix_start:]
    pos = i
    if text[pos] in "+-":
        pos += 1
    i = pos
    while i < end and text[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, value, num, denom, text[suffix_start:]
    raise QuantityError(ERR_FORMAT_WRONG)


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix, or QuantityError(unable to parse quantity's suffix)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT_RE.match(suffix[1:]):
        exponent = int(suffix[1:])
        if -_MAX_INT32 <= exponent <= _MAX_INT32:
            return 10, exponent, DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _go_parse_int64(digits: str) -> Optional[int]:
    """strconv.ParseInt(digits, 10, 64) for a string of ASCII digits: None on overflow."""
    value = int(digits)
    return value if value <= INT64_MAX else None


def _parse_string(text: str, max_digits: int = DEFAULT_LIMITS.max_number_digits) -> Quantity:
    """Go's ParseQuantity on a string: the int64 fast path first, else the big-decimal path; a string
    past `max_digits` characters (max_number_digits) is refused."""
    if not isinstance(text, str):
        raise TypeError(f"parse_quantity needs a string, got {type(text).__name__}")
    if text == "":
        raise QuantityError(ERR_FORMAT_WRONG)
    if len(text) > max_digits:
        raise QuantityError(number_too_long(len(text), max_digits))
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, cached="0")
    positive, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)

    mantissa = 1
    if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
        scale = exponent
        precision = 19 - (len(num) + len(denom))
    else:
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - (exponent * 3) // 10 - 1
        else:
            precision = -1

    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            parsed = _go_parse_int64(shifted)
            if parsed is None:
                raise QuantityError(ERR_NUMERIC)
            result = parsed * mantissa
            if _fits_int64(result):
                if not positive:
                    result = -result
                cached: Optional[str] = None
                if fmt == BINARY_SI:
                    if exponent % 10 == 0 and parsed & 0x07 != 0:
                        cached = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = text
                return Quantity(result, scale, fmt, cached=cached)

    return _parse_big(value, base, exponent, fmt)


def _parse_big(value: str, base: int, exponent: int, fmt: str) -> Quantity:
    """The big-decimal path of ParseQuantity: exact value, rounded up to 1n, BinarySI capped at 2^63-1."""
    match = _DEC_VALUE_RE.match(value)
    if not match or not (match.group(2) or match.group(3)):
        raise QuantityError(ERR_NUMERIC)
    sign_text, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
    negative = sign_text == "-"
    magnitude = int((whole + fraction) or "0")
    exp10 = -len(fraction)
    if base == 10:
        exp10 += exponent
    else:
        magnitude <<= exponent

    if magnitude != 0:
        if exp10 < _NANO:
            shift = _NANO - exp10
            if shift > len(str(magnitude)) + 1:
                magnitude = 1
            else:
                quotient, remainder = divmod(magnitude, 10 ** shift)
                magnitude = quotient + (1 if remainder else 0)
        elif exp10 > _NANO:
            if exp10 - _NANO > _MAX_MATERIALISED_DIGITS:
                raise QuantityError("quantity too large to represent exactly")
            magnitude *= 10 ** (exp10 - _NANO)
        exp10 = _NANO

    if fmt == BINARY_SI and _cmp_values((magnitude, exp10), (INT64_MAX, 0)) > 0:
        magnitude, exp10 = INT64_MAX, 0
    if fmt == BINARY_SI and magnitude != 0 and _cmp_values((magnitude, exp10), (1, 0)) < 0:
        fmt = DECIMAL_SI
    return Quantity(-magnitude if negative else magnitude, exp10, fmt, is_dec=True)


def go_json_float(value: float) -> str:
    """How Go's encoding/json writes a float64 (what a YAML float becomes before Quantity.UnmarshalJSON)."""
    if math.isnan(value) or math.isinf(value):
        raise QuantityError(ERR_FORMAT_WRONG)
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    shortest = Decimal(repr(value)).normalize()
    if 1e-6 <= abs(value) < 1e21:
        return format(shortest, "f")
    sign, digits, exp = shortest.as_tuple()
    text = "".join(str(d) for d in digits)
    point_exp = exp + len(text) - 1
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    # strconv writes at least two exponent digits; encoding/json then shortens "e-07" to "e-7".
    exp_text = f"+{point_exp:02d}" if point_exp >= 0 else f"-{-point_exp}"
    return ("-" if sign else "") + mantissa + "e" + exp_text


def parse_quantity(value: Union[str, int, float], max_digits: int = DEFAULT_LIMITS.max_number_digits) -> Quantity:
    """Go's ParseQuantity for a string (no trimming); an int or float is read as the JSON number it is;
    one of more than `max_digits` characters (the reader's max_number_digits) is refused.

    Raises QuantityError with apimachinery's text (`quantities must match the regular expression ...`,
    `unable to parse quantity's suffix`, `unable to parse numeric part of quantity`)."""
    if isinstance(value, bool):
        return _parse_string("true" if value else "false", max_digits)
    if isinstance(value, int):
        if value.bit_length() > max_digits * 3.33:  # str() would fail past 4,300 digits
            raise QuantityError(number_too_long(int(value.bit_length() * 0.30103) + 1, max_digits))
        return _parse_string(str(value), max_digits)
    if isinstance(value, float):
        return _parse_string(go_json_float(value), max_digits)
    if isinstance(value, str):
        return _parse_string(value, max_digits)
    raise QuantityError(ERR_FORMAT_WRONG)


def unmarshal_quantity(value: Union[str, int, float, None],
                       max_digits: int = DEFAULT_LIMITS.max_number_digits) -> Quantity:
    """A quantity as it arrives in a decoded manifest (Go's Quantity.UnmarshalJSON).

    Strings have surrounding whitespace trimmed, bare numbers are accepted, and null is zero."""
    if value is None:
        return zero_quantity()
    if isinstance(value, str):
        return _parse_string(value.strip(_GO_SPACE), max_digits)
    return parse_quantity(value, max_digits)
