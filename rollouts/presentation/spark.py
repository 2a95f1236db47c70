"""A sparkline as SVG path geometry (the run picker draws one per run without a script)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def spark_path(values: Sequence[float], width: float = 120, height: float = 28) -> str:
    """The `d` of a line through the finite values, scaled to width x height ('' for none);
    a flat or one-point series is drawn across the middle."""
    ys = [v for v in values if math.isfinite(v)]
    if not ys:
        return ""
    low, high = min(ys), max(ys)
    pad = 2.0
    moves = []
    for i, v in enumerate(ys):
        x = pad + i * (width - 2 * pad) / (len(ys) - 1) if len(ys) > 1 else width / 2
        y = (
            height - pad - (v - low) * (height - 2 * pad) / (high - low)
            if high > low
            else height / 2
        )
        moves.append(f"{'L' if i else 'M'}{x:.1f},{y:.1f}")
    return "".join(moves) + ("h1" if len(ys) == 1 else "")
