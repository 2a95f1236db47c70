"""The charts of one step as SVG geometry: histogram bars and the reward x length scatter.

Pure numbers in a fixed user space that keeps its aspect ratio (circles stay round, labels are
not stretched); the template draws them, so the charts work without JavaScript. Each chart has
its plot area inside margins that hold the axes' tick labels, and every bar and point carries the
link the caller makes for it (a bar filters the step's samples to its bin, a point opens its
sample). A point is kept clear of the plot's edges by more than its radius, so none is clipped.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode

from ..store import TRUNCATED, Columns, ValueRange, format_compact

# SVG user units. A histogram sits in half a row, the scatter in a whole one.
HISTOGRAM_BOX = {"width": 600, "height": 240, "left": 48, "right": 8, "top": 18, "bottom": 34}
SCATTER_BOX = {"width": 900, "height": 360, "left": 56, "right": 12, "top": 12, "bottom": 34}
SCATTER_MAX_POINTS = 2000  # beyond this, every k-th sample is drawn (and the page says so)
POINT_CLEARANCE = 7  # a point's centre stays this far inside the plot: radius 4 + stroke
JITTER = 10  # total vertical spread of equal rewards
TICKS = 5  # at most this many intervals between ticks on an axis


def _plot(box: dict[str, int]) -> dict[str, float]:
    """The plot area inside the margins, with the box's own size."""
    return {
        **box,
        "x0": box["left"],
        "x1": box["width"] - box["right"],
        "y0": box["top"],
        "y1": box["height"] - box["bottom"],
        "plot_height": box["height"] - box["bottom"] - box["top"],
    }


def nice_ticks(low: float, high: float, count: int = TICKS) -> list[float]:
    """Round tick values covering [low, high] (1, 2 or 5 times a power of ten apart)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high == low:
        return [low]
    span = high - low
    power = 10 ** math.floor(math.log10(span / count))
    step = next(m * power for m in (1, 2, 5, 10, 20) if span / (m * power) <= count)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    value = first * step
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def histogram_bars(
    name: str, label: str, histogram: dict, step_link: str, integral: bool = False
) -> dict[str, Any]:
    """Bars of a `stats.histogram` with their counts and a y axis of counts, each with the link
    that filters the step's samples to its bin (`?range=name:[low,high)`). `integral`: the
    column holds whole numbers only, so a bin is labelled by the integers it holds (0 to 204)."""
    counts = histogram["counts"]
    discrete = histogram["kind"] == "values"
    if discrete:  # one bar per value: the range [v, v]
        edges = histogram["values"]
        ranges = [ValueRange(name, v, v, closed=True) for v in edges]
    else:
        edges = histogram["edges"]
        last = len(counts) - 1
        ranges = [ValueRange(name, edges[i], edges[i + 1], i == last) for i in range(len(counts))]
    box = _plot(HISTOGRAM_BOX)
    plot_height = box["y1"] - box["y0"]
    tallest = max(counts, default=0) or 1
    count_ticks = nice_ticks(0, tallest)
    if count_ticks[-1] < tallest:  # the axis goes up to a round count above the tallest bar
        count_ticks.append(count_ticks[-1] + (count_ticks[1] if len(count_ticks) > 1 else 1))
    top = count_ticks[-1]
    width = (box["x1"] - box["x0"]) / max(len(counts), 1)
    bars = []
    for i, (count, value_range) in enumerate(zip(counts, ranges, strict=True)):
        height = plot_height * count / top
        x = box["x0"] + i * width
        bars.append(
            {
                "x": round(x + 0.5, 2),
                "y": round(box["y1"] - height, 2),
                "width": round(max(width - 1, 0.5), 2),
                "height": round(height, 2),
                "middle": round(x + width / 2, 2),
                "count_y": round(box["y1"] - height - 4, 2),
                "count": count,
                "label": range_label(value_range, integral),
                "range": str(value_range),
                "url": step_link + "?" + urlencode({"range": str(value_range)}),
            }
        )
    y_ticks = [
        {"y": round(box["y1"] - plot_height * t / top, 2), "label": format_compact(int(t))}
        for t in count_ticks
        if t == int(t)  # counts are whole: no tick between two of them
    ]
    if discrete:
        x_ticks = [{"x": b["middle"], "label": b["label"]} for b in bars]
    else:
        every = max(1, math.ceil(len(counts) / TICKS))
        x_ticks = [
            {"x": round(box["x0"] + i * width, 2), "label": format_compact(edges[i], integral)}
            for i in range(0, len(edges), every)
        ]
        if (len(edges) - 1) % every:  # the last edge too, where the range ends
            x_ticks.append({"x": box["x1"], "label": format_compact(edges[-1], integral)})
    return {
        "name": name,
        "label": label,
        "bars": bars,
        "discrete": discrete,
        "box": box,
        "y_ticks": y_ticks,
        "x_ticks": x_ticks,
        "low": format_compact(edges[0], integral) if edges else None,
        "high": format_compact(edges[-1], integral) if edges else None,
        "outside": outside_note(histogram, integral),
        "below": histogram.get("below", 0),
        "above": histogram.get("above", 0),
    }


def outside_note(histogram: dict, integral: bool = False) -> str:
    """What a clipped histogram (`store.clipped_histogram`) leaves out, said against the range
    it draws: "3 values above 100 not shown"; empty when it leaves out nothing."""
    edges = histogram.get("edges") or histogram.get("values") or []
    parts = []
    for key, word, edge in (("below", "below", 0), ("above", "above", -1)):
        count = histogram.get(key, 0)
        if count and edges:
            plural = "value" if count == 1 else "values"
            limit = format_compact(edges[edge], integral)
            parts.append(f"{format_compact(count)} {plural} {word} {limit}")
    return "; ".join(parts) + " not shown" if parts else ""


def range_label(value_range: ValueRange, integral: bool = False) -> str:
    """A bin as the page labels it: "1", "[0.5, 0.75)", or whole numbers "0-204"."""
    low, high = value_range.low, value_range.high
    if low == high:
        return format_compact(low, integral)
    if integral:
        first = math.ceil(low)
        last = math.floor(high) if value_range.closed else math.ceil(high) - 1
        if first == last:
            return str(first)
        if first < last:
            return f"{first}\N{EN DASH}{last}"
    closing = "]" if value_range.closed else ")"
    return f"[{format_compact(low)}, {format_compact(high)}{closing}"


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
    box = _plot(SCATTER_BOX)
    stride = math.ceil(len(rows) / SCATTER_MAX_POINTS)
    x_low, x_high = min(length[r] for r in rows), max(length[r] for r in rows)
    y_low, y_high = min(reward[r] for r in rows), max(reward[r] for r in rows)
    x_scale = _scale(x_low, x_high, box["x0"], box["x1"])
    y_scale = _scale(y_low, y_high, box["y1"], box["y0"])  # up is more reward
    # Binary (or few-valued) rewards would stack every sample on a few lines: spread each
    # line a little, the same way on every load, and say so on the page.
    jitter = len({reward[r] for r in rows}) <= 10
    status = columns.categorical.get("status")
    statuses = columns.categories.get("status", [])
    truncated_code = statuses.index(TRUNCATED) if TRUNCATED in statuses else None
    points = []
    for r in rows[::stride]:
        y = y_scale(reward[r])
        if jitter:
            y += (zlib.crc32(str(r).encode()) % 1000 / 1000 - 0.5) * JITTER
        is_truncated = status is not None and status[r] == truncated_code
        points.append(
            {
                "x": round(x_scale(length[r]), 2),
                "y": round(min(max(y, box["y0"] + 5), box["y1"] - 5), 2),  # radius 4 + stroke
                "position": r,
                "line": lines[r],
                "reward": format_compact(reward[r]),
                "length": format_compact(length[r]),
                "truncated": is_truncated,
                "url": sample_url(r),
            }
        )
    return {
        "points": points,
        "box": box,
        "x_ticks": [
            {"x": round(x_scale(t), 2), "label": format_compact(t)}
            for t in nice_ticks(x_low, x_high)
        ],
        "y_ticks": [
            {"y": round(y_scale(t), 2), "label": format_compact(t)}
            for t in nice_ticks(y_low, y_high)
        ],
        "total": len(rows),
        "stride": stride,
        "jitter": jitter,
        "x_low": format_compact(x_low),
        "x_high": format_compact(x_high),
        "y_low": format_compact(y_low),
        "y_high": format_compact(y_high),
        "truncated": sum(p["truncated"] for p in points),
    }


def _scale(low: float, high: float, start: float, end: float) -> Callable[[float], float]:
    """Values in [low, high] to [start, end] with POINT_CLEARANCE kept at both ends (a single
    value to the middle)."""
    inner_start = start + math.copysign(POINT_CLEARANCE, end - start)
    inner_end = end - math.copysign(POINT_CLEARANCE, end - start)
    if high == low:
        return lambda value: (start + end) / 2
    return lambda value: inner_start + (value - low) / (high - low) * (inner_end - inner_start)
