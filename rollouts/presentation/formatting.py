"""Numbers and sizes as people read them, the same on every page, in JSON labels and in the
terminal: ints as they are, floats to 4 decimals (exponent form when tiny or huge), array items
exactly, sizes in kB/MB/GB."""

from __future__ import annotations

import math
from typing import Any

# Exponent form outside this range of magnitudes; 4 decimals inside it.
_SMALL, _LARGE = 1e-3, 1e6


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
