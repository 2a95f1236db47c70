"""The charts of one step as SVG geometry: histogram bars and the reward x length scatter.

Pure numbers in a fixed user space (the SVG scales to its box); the template draws them, so the
charts work without JavaScript, and every bar and point carries the link the caller makes for
it (a bar filters the step's samples to its bin, a point opens its sample).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode

from ..store import Columns, ValueRange
from ..store.stats import TRUNCATED
from .formatting import format_number

CHART_WIDTH, CHART_HEIGHT = 600, 160  # SVG user units
SCATTER_MAX_POINTS = 2000  # beyond this, every k-th sample is drawn (and the page says so)
_MARGIN = 4  # user units kept free at the scatter's edges


def histogram_bars(name: str, label: str, histogram: dict, step_link: str) -> dict[str, Any]:
    """Bars of a `stats.histogram`, each with the link that filters the step's samples to its
    bin (`?range=name:[low,high)`)."""
    counts = histogram["counts"]
    if histogram["kind"] == "values":  # one bar per value: the range [v, v]
        edges = histogram["values"]
        ranges = [ValueRange(name, v, v, closed=True) for v in edges]
    else:
        edges = histogram["edges"]
        last = len(counts) - 1
        ranges = [ValueRange(name, edges[i], edges[i + 1], i == last) for i in range(len(counts))]
    bars = []
    tallest = max(counts, default=0) or 1
    width = CHART_WIDTH / max(len(counts), 1)
    for i, (count, value_range) in enumerate(zip(counts, ranges, strict=True)):
        height = CHART_HEIGHT * count / tallest
        bars.append(
            {
                "x": round(i * width + 0.5, 2),
                "y": round(CHART_HEIGHT - height, 2),
                "width": round(max(width - 1, 0.5), 2),
                "height": round(height, 2),
                "count": count,
                "label": range_label(value_range),
                "range": str(value_range),
                "url": step_link + "?" + urlencode({"range": str(value_range)}),
            }
        )
    return {
        "name": name,
        "label": label,
        "bars": bars,
        "discrete": histogram["kind"] == "values",
        "low": format_number(edges[0]) if edges else None,
        "high": format_number(edges[-1]) if edges else None,
    }


def range_label(value_range: ValueRange) -> str:
    """A bin as the page labels it: "1", or "[0.5000, 0.7500)"."""
    low, high = format_number(value_range.low), format_number(value_range.high)
    if value_range.low == value_range.high:
        return low
    return f"[{low}, {high}{']' if value_range.closed else ')'}"


def scatter(
    columns: Columns,
    invalid: dict[int, str],
    lines: Sequence[int],
    sample_url: Callable[[int], str],
) -> dict[str, Any] | None:
    """Reward against response length, one linked point per sample; truncated samples marked.

    `lines` maps positions to line numbers (for the tooltips); None without both columns.
    """
    reward, length = columns.numeric.get("reward"), columns.numeric.get("response_length")
    if reward is None or length is None:
        return None
    rows = [
        r
        for r in range(columns.rows)
        if r not in invalid and math.isfinite(reward[r]) and math.isfinite(length[r])
    ]
    if not rows:
        return None
    stride = math.ceil(len(rows) / SCATTER_MAX_POINTS)
    x_low, x_high = min(length[r] for r in rows), max(length[r] for r in rows)
    y_low, y_high = min(reward[r] for r in rows), max(reward[r] for r in rows)
    # Binary (or few-valued) rewards would stack every sample on a few lines: spread each
    # line a little, the same way on every load, and say so on the page.
    jitter = len({reward[r] for r in rows}) <= 10
    status = columns.categorical.get("status")
    statuses = columns.categories.get("status", [])
    truncated_code = statuses.index(TRUNCATED) if TRUNCATED in statuses else None
    points = []
    for r in rows[::stride]:
        x = _scale(length[r], x_low, x_high, CHART_WIDTH)
        y = CHART_HEIGHT - _scale(reward[r], y_low, y_high, CHART_HEIGHT)
        if jitter:
            y += (zlib.crc32(str(r).encode()) % 1000 / 1000 - 0.5) * 12
        is_truncated = status is not None and status[r] == truncated_code
        points.append(
            {
                "x": round(x, 2),
                "y": round(min(max(y, 2), CHART_HEIGHT - 2), 2),
                "position": r,
                "line": lines[r],
                "reward": format_number(reward[r]),
                "length": format_number(length[r]),
                "truncated": is_truncated,
                "url": sample_url(r),
            }
        )
    return {
        "points": points,
        "total": len(rows),
        "stride": stride,
        "jitter": jitter,
        "x_low": format_number(x_low),
        "x_high": format_number(x_high),
        "y_low": format_number(y_low),
        "y_high": format_number(y_high),
        "truncated": sum(p["truncated"] for p in points),
    }


def _scale(value: float, low: float, high: float, size: float) -> float:
    if high == low:
        return size / 2
    return _MARGIN + (value - low) / (high - low) * (size - 2 * _MARGIN)
