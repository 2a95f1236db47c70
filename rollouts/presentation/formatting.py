"""Numbers and sizes as people read them, the same on every page, in JSON labels and in the
terminal: ints as they are, floats to 4 decimals (exponent form when tiny or huge), array items
exactly, sizes in kB/MB/GB."""

from __future__ import annotations

import math
from typing import Any

# Exponent form outside this range of magnitudes; 4 decimals inside it.
_SMALL, _LARGE = 1e-3, 1e6
_WHOLE_ENOUGH = 100  # from here up a statistic shows one decimal: 388.3, not 388.3438


def format_number(value: Any) -> str:
    """Numbers for reading: ints as they are, floats to 4 decimals or in exponent form."""
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
        magnitude = abs(value)
        if magnitude and (magnitude < _SMALL or magnitude >= _LARGE):
            return f"{value:.3e}"
        return f"{value:.4f}"
    return str(value)


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
    """A statistic for reading: whole numbers without decimals (a max length of 4096 tokens is
    "4096", not "4096.0000"), one decimal from 100 up (a mean length "388.3"), else as
    `format_number`."""
    if isinstance(value, float) and math.isfinite(value):
        if value.is_integer() and abs(value) < _LARGE:
            return str(int(value))
        if _WHOLE_ENOUGH <= abs(value) < _LARGE:
            return f"{value:.1f}"
    return format_number(value)


def format_share(value: float) -> str:
    """A share as a percentage with one decimal, its "%" held to the number (no-break space)."""
    return f"{100 * value:.1f}\N{NO-BREAK SPACE}%"


def format_compact(value: Any, integral: bool = False) -> str:
    """A chart's tick or bin edge: as short as it can be read ("0", "204.8", "0.05"); with
    `integral` (a column of whole numbers) rounded to a whole number."""
    if isinstance(value, float) and math.isfinite(value):
        if integral or value.is_integer():
            return str(round(value))
        magnitude = abs(value)
        if magnitude < _SMALL or magnitude >= _LARGE:
            return f"{value:.3g}"
        if magnitude >= _WHOLE_ENOUGH:
            return f"{value:.1f}".rstrip("0").rstrip(".")
        return f"{value:.4g}"
    return format_number(value)
