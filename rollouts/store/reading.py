"""Reading per-step metrics: the curves a bucket offers and the convergence reading (the metric
cards are in `cards.py`).

Everything here works on numbers per step (`StepMetrics`), wherever they came from: a bucket's
step statistics today (`history.py`), a training run's logged metrics tomorrow.

The convergence reading is a heuristic, and it says so: it reads the recent window of the
curve and names one of waiting, warming up, not rising, plateau or rising, returning every
threshold and every number it compared, so a person can check it. A plateau needs all three:
the shift between the two halves of the window is within the point-to-point noise, the
coefficient of variation is at most 0.15, and the range is at most 15 % of the level; a slow
steady climb fails the first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class StepMetrics(Protocol):
    """One step's numbers: what the curves, the cards and the reading read."""

    @property
    def step(self) -> int: ...

    @property
    def metrics(self) -> Mapping[str, float | None]: ...


@dataclass(frozen=True, slots=True)
class Metric:
    key: str
    label: str
    direction: int  # +1: higher is better, -1: lower is better, 0: neither
    floor: float = 0.0  # a change smaller than this is never abnormal (rates jump by chance)


# The curves every bucket offers (when its steps have the field), in the order shown.
METRICS = (
    Metric("reward_mean", "Mean reward", +1),
    Metric("response_length_mean", "Mean response length", 0),
    Metric("truncation_rate", "Truncation rate", -1, 0.05),
    Metric("zero_signal_share", "Zero-signal groups", -1, 0.05),
    Metric("success_share", "Groups with a success", +1, 0.05),
    Metric("reward_std", "Reward std", 0),
    Metric("response_length_p90", "Response length p90", 0),
    Metric("response_length_max", "Response length max", 0),
    Metric("group_std_mean", "Mean within-group std", +1),
    Metric("samples", "Samples", 0),
    Metric("invalid", "Unreadable lines", -1, 0.5),
)
CARD_KEYS = ("reward_mean", "response_length_mean", "truncation_rate", "zero_signal_share")


def metrics_of(stats: dict[str, Any]) -> dict[str, float | None]:
    """One step's statistics as flat numbers: the y values of the trend curves.

    Besides the fixed METRICS: `status.<name>` (share of samples), `dataset.<name>` (mean
    reward of an eval dataset: its accuracy for 0/1 rewards) and `reward.<part>` (mean of one
    component of an object reward).
    """
    samples = stats["samples"]
    lengths, groups = stats["response_length"], stats["groups"]
    flat: dict[str, float | None] = {
        "reward_mean": stats["reward"]["mean"],
        "reward_std": stats["reward"]["std"],
        "response_length_mean": lengths["mean"],
        "response_length_p90": lengths["p90"],
        "response_length_max": lengths["max"],
        "truncation_rate": stats["truncation_rate"],
        "zero_signal_share": groups["zero_signal_share"],
        "success_share": groups["success_share"],
        "group_std_mean": groups["mean_std"],
        "samples": samples,
        "invalid": stats["invalid"],
    }
    for name, count in stats["status"].items():
        flat[f"status.{name}"] = count / samples if samples else None
    for name, summary in stats["reward_by_dataset"].items():
        flat[f"dataset.{name}"] = summary["mean"]
    for name, summary in stats["reward_components"].items():
        flat[f"reward.{name}"] = summary["mean"]
    return flat


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
    falling_first: bool = False,
) -> dict[str, Any]:
    """The reading of per-step mean rewards (NaN steps left out), plus warnings.

    The window is the last WINDOW steps, or the last tenth of a long run: ten steps of a
    400-step run are too few to tell a slow climb from its noise. `falling_first`: a negative
    slope reads "not rising" even when the curve is flat enough for a plateau (the training
    reading's order, training/convergence.py).
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
    falling = numbers["slope"] < 0
    if flat and not (falling_first and falling):
        name = "plateau"
        why = (
            f"the halves differ by {numbers['shift']:+.4g}, within the noise "
            f"{numbers['noise']:.4g}; cv {numbers['cv']:.3f} <= {PLATEAU_CV}, range "
            f"{numbers['range_ratio']:.3f} of the level <= {PLATEAU_RANGE}"
        )
    elif falling:
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


# The policy-update rules of the training front end (its document's order: KL first, then the
# value function), shared by the training reading and the trends' TensorBoard scalars.
KL_MAX = 0.05  # the latest KL above this: "kl too large"
EV_MIN = 0.0  # the latest explained variance below this: "value not fitted"


def update_rules(
    result: dict[str, Any],
    kl: float | None,
    ev: float | None,
    kl_name: str = "approx_kl",
    ev_name: str = "explained_variance",
) -> dict[str, Any]:
    """The reading with the KL and value-function rules applied to the latest `kl` and `ev`
    (None: not logged), each number and threshold returned. A reading still waiting or warming
    up stays so: there is no trend to judge yet."""
    result["thresholds"].update(kl_max=KL_MAX, explained_variance_min=EV_MIN)
    if result["reading"] in ("waiting", "warming up"):
        return result
    result["numbers"].update(approx_kl=kl, explained_variance=ev)
    if kl is not None and kl > KL_MAX:
        result["reading"] = "kl too large"
        result["why"] = (
            f"the latest {kl_name} {kl:.4g} is above {KL_MAX}: the policy updates may be too"
            " large (lower the learning rate or the clip range)"
        )
    elif ev is not None and ev < EV_MIN:
        result["reading"] = "value not fitted"
        result["why"] = f"the latest {ev_name} {ev:.3g} is below {EV_MIN:g}"
    return result


def series(points: Sequence[StepMetrics], key: str) -> list[float]:
    """One metric over the points, NaN where a step lacks it."""
    return [_number(p.metrics.get(key)) for p in points]


def convergence(points: Sequence[StepMetrics]) -> dict[str, Any]:
    return reading(
        series(points, "reward_mean"),
        truncation=series(points, "truncation_rate"),
        zero_signal=series(points, "zero_signal_share"),
    )


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


CURVE_KINDS = (  # prefixed metrics (see metrics_of): key prefix, kind, label
    ("status.", "status", "Share {}"),
    ("dataset.", "dataset", "Accuracy {}"),
    ("reward.", "component", "Reward component {}"),
)


def curves(keys: Iterable[str]) -> list[dict[str, Any]]:
    """The curves these metric keys offer, labelled: the fixed METRICS first (in their order),
    then status shares, dataset accuracies and reward components (in the order seen)."""
    keys = list(dict.fromkeys(keys))
    fixed = [
        {"key": m.key, "label": m.label, "direction": m.direction, "kind": "metric"}
        for m in METRICS
        if m.key in keys
    ]
    prefixed = [
        {"key": key, "label": label.format(key.removeprefix(prefix)), "direction": 0, "kind": kind}
        for prefix, kind, label in CURVE_KINDS
        for key in keys
        if key.startswith(prefix)
    ]
    return fixed + prefixed
