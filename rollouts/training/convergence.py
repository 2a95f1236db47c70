"""The training convergence reading and metric cards, on the trends' own code (store/reading.py).

The rules, in the order the training front end's document gives them: waiting for the first
rollout; warming up (fewer than 3 points); KL too large (latest `approx_kl` > 0.05, the highest
priority, from the first point on); value function not fitted (the median `explained_variance`
of the last 10 updates < 0); not rising (negative slope, per env step, over the window);
plateau; rising. Every number, threshold and window is returned, and said in `notes`, so a
person can check it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..store import (
    EV_MIN,
    EV_WINDOW,
    KL_MAX,
    Metric,
    metric_card,
    series,
    trend_reading,
    update_rules,
)

KL_KEY = "approx_kl"
EV_KEY = "explained_variance"
CARD_EXTRA = ("trend", "surprise", "threshold")


def latest(points: Sequence[Any], key: str) -> float | None:
    for point in reversed(points):
        value = point.metrics.get(key)
        if isinstance(value, int | float) and math.isfinite(value):
            return float(value)
    return None


def recent(points: Sequence[Any], key: str, count: int = EV_WINDOW) -> list[float]:
    """The last `count` finite values of `key`, oldest first."""
    values: list[float] = []
    for point in reversed(points):
        value = point.metrics.get(key)
        if isinstance(value, int | float) and math.isfinite(value):
            values.append(float(value))
            if len(values) == count:
                break
    return values[::-1]


def convergence(points: Sequence[Any], main: str) -> dict[str, Any]:
    """The reading of a training run's points (its effective history across resumes): the
    reward's trend against env timesteps, then the KL (from the first point) and the value
    function (over a window of updates) rules."""
    result = trend_reading(
        series(points, main),
        falling_first=True,
        xs=[p.step for p in points],
        x_unit="env step",
    )
    result["thresholds"]["metric"] = main
    if result["reading"] == "waiting":
        result["why"] = f"waiting for the first rollout: no point has {main} yet"
    return update_rules(result, latest(points, KL_KEY), recent(points, EV_KEY))


def cards(points: Sequence[Any], spec_metrics: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A card per metric: the spec's dictionary first, then any other key seen, in order."""
    described = {m["key"]: m for m in spec_metrics}
    keys = list(described) + [k for k in metric_keys(points) if k not in described]
    result = []
    for key in keys:
        info = described.get(key, {"label": key, "unit": "", "direction": 0})
        metric = Metric(key, info["label"], info["direction"])
        card = metric_card(points, metric)
        if card is None:
            continue
        if key == KL_KEY and card["latest"] > KL_MAX and not card["abnormal"]:
            card.update(abnormal=True, why=f"above the reference {KL_MAX}")
        if key == EV_KEY and card["latest"] < EV_MIN and not card["abnormal"]:
            card.update(abnormal=True, why=f"below {EV_MIN:g}: the value function is not fitted")
        result.append({"unit": info["unit"], **{k: None for k in CARD_EXTRA}, **card})
    return result


def metric_keys(points: Sequence[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for point in points:
        seen.update(dict.fromkeys(point.metrics))
    return list(seen)
