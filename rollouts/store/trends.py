"""A convergence reading of a per-step metric (mean reward), with the numbers behind it.

A heuristic, and it says so: it reads the recent window of the curve and names one of
waiting, warming up, not rising, plateau or rising, returning every threshold and every number
it compared, so a person can check it. A plateau needs all three: the shift between the two
halves of the window is within the point-to-point noise, the coefficient of variation is at
most 0.15, and the range is at most 15 % of the level; a slow steady climb fails the first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

WINDOW = 10  # recent steps read, at least (a tenth of the steps on a long run)
MIN_STEPS = 3  # fewer: warming up
PLATEAU_CV = 0.15  # std / |mean| at most this
PLATEAU_RANGE = 0.15  # (max - min) / |mean| at most this
DISCLAIMER = "a heuristic reading of the recent curve, not a statistical test"


def slope(values: Sequence[float]) -> float:
    """Least-squares slope per step of evenly spaced values (0 for fewer than two)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, math.fsum(values) / n
    num = math.fsum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = math.fsum((i - mean_x) ** 2 for i in range(n))
    return num / den


def noise(values: Sequence[float]) -> float:
    """Point-to-point noise: the std of successive differences over sqrt(2), which a steady
    trend barely moves (unlike the plain std)."""
    diffs = [b - a for a, b in itertools.pairwise(values)]
    if len(diffs) < 2:
        return 0.0
    mean = math.fsum(diffs) / len(diffs)
    return math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / len(diffs)) / math.sqrt(2)


def reading(
    rewards: Sequence[float],
    truncation: Sequence[float] = (),
    zero_signal: Sequence[float] = (),
    window: int | None = None,
) -> dict[str, Any]:
    """The reading of per-step mean rewards (NaN steps left out), plus warnings.

    The window is the last WINDOW steps, or the last tenth of a long run: ten steps of a
    400-step run are too few to tell a slow climb from its noise.
    """
    points = [v for v in rewards if math.isfinite(v)]
    if window is None:
        window = max(WINDOW, len(points) // 10)
    result: dict[str, Any] = {
        "disclaimer": DISCLAIMER,
        "thresholds": {
            "window": window,
            "min_steps": MIN_STEPS,
            "plateau_cv": PLATEAU_CV,
            "plateau_range": PLATEAU_RANGE,
        },
        "warnings": _warnings(truncation, zero_signal, window),
    }
    if not points:
        return {**result, "reading": "waiting", "why": "no step has a reward yet", "numbers": {}}
    if len(points) < MIN_STEPS:
        why = f"{len(points)} step(s) with a reward; at least {MIN_STEPS} are needed"
        return {**result, "reading": "warming up", "why": why, "numbers": {"steps": len(points)}}
    recent = points[-window:]
    half = len(recent) // 2
    first, second = recent[:half], recent[len(recent) - half :]
    level = math.fsum(recent) / len(recent)
    std = math.sqrt(math.fsum((v - level) ** 2 for v in recent) / len(recent))
    numbers = {
        "steps": len(points),
        "window_steps": len(recent),
        "slope": slope(recent),
        "level": level,
        "shift": math.fsum(second) / len(second) - math.fsum(first) / len(first),
        "noise": noise(recent),
        "cv": std / abs(level) if level else math.inf,
        "range_ratio": (max(recent) - min(recent)) / abs(level) if level else math.inf,
    }
    flat = (
        abs(numbers["shift"]) <= numbers["noise"]
        and numbers["cv"] <= PLATEAU_CV
        and numbers["range_ratio"] <= PLATEAU_RANGE
    )
    if flat:
        name = "plateau"
        why = (
            f"the halves differ by {numbers['shift']:+.4g}, within the noise "
            f"{numbers['noise']:.4g}; cv {numbers['cv']:.3f} <= {PLATEAU_CV}, range "
            f"{numbers['range_ratio']:.3f} of the level <= {PLATEAU_RANGE}"
        )
    elif numbers["slope"] < 0:
        name = "not rising"
        why = f"the slope of the last {len(recent)} steps is {numbers['slope']:+.4g} per step"
    else:
        name = "rising"
        why = (
            f"slope {numbers['slope']:+.4g} per step, and the halves differ by "
            f"{numbers['shift']:+.4g} against noise {numbers['noise']:.4g}"
        )
    return {**result, "reading": name, "why": why, "numbers": numbers}


def _warnings(truncation: Sequence[float], zero_signal: Sequence[float], window: int) -> list[str]:
    warnings = []
    for name, series in (("truncation rate", truncation), ("zero-signal group share", zero_signal)):
        recent = [v for v in series if math.isfinite(v)][-window:]
        if len(recent) >= MIN_STEPS and slope(recent) > 0 and recent[-1] > recent[0]:
            warnings.append(
                f"{name} is rising: {recent[0]:.3f} -> {recent[-1]:.3f} over {len(recent)} steps"
            )
    return warnings
