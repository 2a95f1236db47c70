"""Numbers and sizes as people read them, the same on every page, in JSON labels and in the
terminal, and the same as the scripts print them (lib/numbers.js; both are checked against one
table, tests/js/numbers.cases.json).

The rule (`format_number`): ints, and floats of whole value, as integers; other floats to 4
significant digits without trailing zeros (0.05, 36.3, 2206); from 10,000 up as whole numbers
(12346); below 0.001 and from 1,000,000 up in a short exponent form (1.234e-4, 1.235e6). A tie
rounds away from zero, on the float's exact value, as JavaScript's `toFixed` does. Array items
(`format_scalar`) stay exact: log-probs are compared digit by digit."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

_DIGITS = 4  # significant digits of a float
# Exponent form outside this range of magnitudes; whole numbers from _WHOLE up to it.
_SMALL, _LARGE = 1e-3, 1e6
_WHOLE = 1e4
# Floats of whole value below this print every digit (beyond it a float's digits are not exact).
_EXACT_WHOLE = 1e15
_NBSP = "\N{NO-BREAK SPACE}"  # holds a unit to its number: "927 timesteps/s" never wraps


def format_number(value: Any) -> str:
    """Numbers for reading, by the rule above; NaN and infinities by name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return _rounded(value)
    return str(value)


def _rounded(value: float) -> str:
    magnitude = abs(value)
    if value.is_integer() and magnitude < _EXACT_WHOLE:
        return str(int(value))
    if magnitude < _SMALL or magnitude >= _LARGE:
        return _exponent(value)
    if magnitude >= _WHOLE:
        return _fixed(value, 0)
    # The decimal exponent of the shortest text that reads back as the value (what `repr` and
    # JavaScript's `toExponential()` print), so both sides count the same digits.
    exponent = Decimal(repr(value)).adjusted()
    return _trimmed(_fixed(value, max(0, _DIGITS - 1 - exponent)))


def _fixed(value: float, decimals: int) -> str:
    """`value` with `decimals` decimals, a tie away from zero (JavaScript's `toFixed`)."""
    exact = Decimal(value + 0.0).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return format(exact, "f")


def _exponent(value: float) -> str:
    """4 significant digits and a power of ten: 1.234e-4, -5e-5, 1.235e6."""
    exact = Decimal(value)
    exponent = exact.adjusted()
    rounded = exact.quantize(Decimal(1).scaleb(exponent - _DIGITS + 1), rounding=ROUND_HALF_UP)
    exponent = rounded.adjusted()  # 9.9996e-4 rounds up to 1e-3
    return f"{_trimmed(format(rounded.scaleb(-exponent), 'f'))}e{exponent}"


def _trimmed(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_delta(delta: Any) -> str:
    """A change with its sign, the sign a cue besides any colour: +0.5, -2, ±0 for none."""
    if not isinstance(delta, int | float) or isinstance(delta, bool) or not math.isfinite(delta):
        return format_number(delta)
    return _sign(delta) + format_number(abs(delta))


def format_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def format_scalar(value: Any) -> str:
    """An array item: exact, not rounded (log-probs are compared digit by digit)."""
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return format_number(value)


def format_stat(value: Any) -> str:
    """A statistic: the same rule as `format_number` (a max length of 4096 tokens is "4096", a
    mean length "388.3"); the name stays for the templates' `stat` filter."""
    return format_number(value)


def format_share(value: float) -> str:
    """A share as a percentage with one decimal, its "%" held to the number: "12.5 %"."""
    return f"{_fixed(100 * value, 1)}{_NBSP}%"


def format_share_delta(delta: float) -> str:
    """A change of a share in percentage points, with its sign: "+5.0 pp", "±0.0 pp"."""
    return f"{_sign(delta)}{_fixed(100 * abs(delta), 1)}{_NBSP}pp"


def format_unit(value: Any, unit: str) -> str:
    """A number and its unit, held together: "927 timesteps/s"."""
    return f"{format_number(value)}{_NBSP}{unit}"


def _sign(delta: float) -> str:
    return "+" if delta > 0 else "-" if delta < 0 else "±"


def format_compact(value: Any, integral: bool = False) -> str:
    """A chart's tick or bin edge: as `format_number` ("0", "204.8", "0.05"); with `integral` (a
    column of whole numbers) rounded to a whole number."""
    if integral and isinstance(value, float) and math.isfinite(value):
        return str(round(value))
    return format_number(value)
