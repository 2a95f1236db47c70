"""The metric cards: a metric's latest value, its change since the previous step, a sparkline,
and a highlight when the change departs from the recent trend the wrong way. For a bucket's
step statistics (the trends page) and a training run's points (the Training page) alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .reading import CARD_KEYS, METRICS, Metric, StepMetrics, as_number, noise

SPARK_POINTS = 30  # steps drawn in a metric card's trend line
CARD_RECENT = 10  # the steps before the latest whose trend and noise judge its change
RELATIVE_FLOOR = 0.02
ABNORMAL_NOISE = 3.0  # a change beyond this many times the recent noise is highlighted


def metric_cards(points: Sequence[StepMetrics]) -> list[dict[str, Any]]:
    """The metric cards of CARD_KEYS (see `card`)."""
    by_key = {m.key: m for m in METRICS}
    found = (metric_card(points, by_key[key]) for key in CARD_KEYS)
    return [c for c in found if c is not None]


def metric_card(points: Sequence[StepMetrics], metric: Metric) -> dict[str, Any] | None:
    """One metric card: latest value, change since the previous step, a trend line, and a
    highlight when the change departs from the recent trend, the wrong way, by more than
    ABNORMAL_NOISE times the recent point-to-point noise (and the metric's floor)."""
    key = metric.key
    steps = _last_finite(points, key, max(SPARK_POINTS, CARD_RECENT + 1))
    if not steps:
        return None
    values = [v for _, v in steps]
    latest = values[-1]
    previous = values[-2] if len(values) > 1 else None
    delta = latest - previous if previous is not None else None
    result: dict[str, Any] = {
        "key": key,
        "label": metric.label,
        "direction": metric.direction,
        "step": steps[-1][0],
        "latest": latest,
        "previous": previous,
        "delta": delta,
        "spark": [{"step": s, "value": v} for s, v in steps[-SPARK_POINTS:]],
        "abnormal": False,
        "why": None,
    }
    recent = values[-CARD_RECENT - 1 : -1]  # the trend and noise of the steps before the latest
    if delta is not None and len(recent) >= 3:
        # A jump is a change unlike the recent ones: a steady climb is the reading's
        # business, not an alarm. Surprise = the change minus the recent mean change.
        trend = (recent[-1] - recent[0]) / (len(recent) - 1)
        surprise = delta - trend
        # Floors: the metric's own, and 2 % of its level (a perfectly steady curve has
        # no noise, and a neutral metric no floor of its own).
        allowed = max(
            ABNORMAL_NOISE * noise(recent), metric.floor, RELATIVE_FLOOR * abs(recent[-1])
        )
        result.update(trend=trend, surprise=surprise, threshold=allowed)
        wrong_way = surprise * metric.direction < 0 if metric.direction else True
        if wrong_way and abs(surprise) > allowed:
            result["abnormal"] = True
            result["why"] = (
                f"changed by {delta:+.4g} since the previous step, {surprise:+.4g} against "
                f"its recent trend ({trend:+.4g} a step): more than {ABNORMAL_NOISE:g} x its "
                f"recent noise ({allowed:.4g})"
            )
    return result


def _last_finite(points: Sequence[StepMetrics], key: str, count: int) -> list[tuple[int, float]]:
    """The last `count` (step, value) of `key` with a finite value, oldest first: read from the
    end, so a card costs the same for 50 points as for 5,000."""
    found: list[tuple[int, float]] = []
    for p in reversed(points):
        if math.isfinite(v := as_number(p.metrics.get(key))):
            found.append((p.step, v))
            if len(found) == count:
                break
    found.reverse()
    return found
