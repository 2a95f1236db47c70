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
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .flags import FLAGS, flag_rates


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
    for name, rate in flag_rates(stats).items():
        flat[f"flag.{name}"] = rate
    return flat


WINDOW = 10  # recent steps read, at least (a tenth of the steps on a long run)
MIN_STEPS = 3  # fewer: warming up
PLATEAU_CV = 0.15  # std / |mean| at most this
PLATEAU_RANGE = 0.15  # (max - min) / |mean| at most this
DISCLAIMER = "a heuristic reading of the recent curve, not a statistical test"


def slope(values: Sequence[float], xs: Sequence[float] | None = None) -> float:
    """Least-squares slope of `values` against `xs` (default: evenly spaced, per step); 0 for
    fewer than two points or no spread in x."""
    n = len(values)
    if n < 2:
        return 0.0
    x = list(xs) if xs is not None else list(range(n))
    mean_x, mean_y = math.fsum(x) / n, math.fsum(values) / n
    num = math.fsum((a - mean_x) * (v - mean_y) for a, v in zip(x, values, strict=True))
    den = math.fsum((a - mean_x) ** 2 for a in x)
    return num / den if den else 0.0


def noise(values: Sequence[float]) -> float:
    """Point-to-point noise: the std of successive differences over sqrt(2), which a steady
    trend barely moves (unlike the plain std)."""
    diffs = [b - a for a, b in itertools.pairwise(values)]
    if len(diffs) < 2:
        return 0.0
    mean = math.fsum(diffs) / len(diffs)
    return math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / len(diffs)) / math.sqrt(2)


def trend_reading(
    rewards: Sequence[float],
    truncation: Sequence[float] = (),
    zero_signal: Sequence[float] = (),
    window: int | None = None,
    flag_rates: Mapping[str, Sequence[float]] | None = None,
    falling_first: bool = False,
    xs: Sequence[float] | None = None,
    x_unit: str = "step",
) -> dict[str, Any]:
    """The reading of per-step mean rewards (NaN steps left out), plus warnings.

    The window is the last WINDOW steps, or the last tenth of a long run: ten steps of a
    400-step run are too few to tell a slow climb from its noise. `falling_first`: a negative
    slope reads "not rising" even when the curve is flat enough for a plateau (the training
    reading's order, training/convergence.py). `xs`: each reward's x (a training run's env
    timesteps), so the slope is per `x_unit` rather than per point.
    """
    finite = [n for n, v in enumerate(rewards) if math.isfinite(v)]
    points = [rewards[n] for n in finite]
    at = [float(xs[n]) for n in finite] if xs is not None else None
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
        "warnings": _warnings(truncation, zero_signal, window)
        + _flag_warnings(flag_rates or {}, window),
        "notes": [],
    }
    if not points:
        return {**result, "reading": "waiting", "why": "no step has a reward yet", "numbers": {}}
    if len(points) < MIN_STEPS:
        why = f"{len(points)} step(s) with a reward; at least {MIN_STEPS} are needed"
        return {**result, "reading": "warming up", "why": why, "numbers": {"steps": len(points)}}
    recent = points[-window:]
    recent_x = at[-window:] if at is not None else None
    half = len(recent) // 2
    first, second = recent[:half], recent[len(recent) - half :]
    level = math.fsum(recent) / len(recent)
    std = math.sqrt(math.fsum((v - level) ** 2 for v in recent) / len(recent))
    numbers = {
        "steps": len(points),
        "window_steps": len(recent),
        "slope": slope(recent, recent_x),
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
    per = f"per {x_unit}"
    counted = "steps" if recent_x is None else "points"
    span = ""
    if recent_x is not None:
        numbers["window_span"] = recent_x[-1] - recent_x[0]
        span = f" ({numbers['window_span']:,.0f} {x_unit}s)"
    plateau = (
        f"the halves differ by {numbers['shift']:+.4g}, within the noise "
        f"{numbers['noise']:.4g}; cv {numbers['cv']:.3f} <= {PLATEAU_CV}, range "
        f"{numbers['range_ratio']:.3f} of the level <= {PLATEAU_RANGE}"
    )
    trend = f"slope {numbers['slope']:+.4g} {per} over the last {len(recent)} {counted}{span}"
    if flat and not (falling_first and falling):
        name, why = "plateau", plateau
    elif falling:
        name = "not rising"
        why = (
            f"the slope of the last {len(recent)} {counted}{span} is {numbers['slope']:+.4g} {per}"
        )
    else:
        name = "rising"
        why = (
            f"slope {numbers['slope']:+.4g} {per}, and the halves differ by "
            f"{numbers['shift']:+.4g} against noise {numbers['noise']:.4g}"
        )
    result["notes"] = [
        f"reward: {trend} (not rising below 0)",
        f"plateau: halves differ by {numbers['shift']:+.4g} against noise"
        f" {numbers['noise']:.4g}, cv {numbers['cv']:.3f} (at most {PLATEAU_CV}), range"
        f" {numbers['range_ratio']:.3f} of the level (at most {PLATEAU_RANGE})",
    ]
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


FLAG_RISE_MIN = 0.02  # a flag's rate must rise by this much (2 points) to be warned about


def _flag_warnings(rates: Mapping[str, Sequence[float]], window: int) -> list[str]:
    """A warning for each flag whose share of the step's samples rises over the window (the
    truncation rule's slope and ends, and at least FLAG_RISE_MIN up: one flagged sample of 64
    more is noise)."""
    warnings = []
    for name, series in rates.items():
        recent = [v for v in series if math.isfinite(v)][-window:]
        if len(recent) < MIN_STEPS or slope(recent) <= 0:
            continue
        if recent[-1] - recent[0] >= FLAG_RISE_MIN:
            warnings.append(
                f"flag {name} is rising: {recent[0]:.3f} -> {recent[-1]:.3f} of the samples over"
                f" {len(recent)} steps (warned from a rise of {FLAG_RISE_MIN})"
            )
    return warnings


# The policy-update rules of the training front end (its document's order: KL first, then the
# value function), shared by the training reading and the trends' TensorBoard scalars.
KL_MAX = 0.05  # the latest KL above this: "kl too large"
EV_MIN = 0.0  # the median recent explained variance below this: "value not fitted"
EV_WINDOW = 10  # updates the explained-variance rule reads
EV_MIN_VALUES = 3  # fewer: the rule does not judge


def update_rules(
    result: dict[str, Any],
    kl: float | None,
    ev_recent: Sequence[float] = (),
    kl_name: str = "approx_kl",
    ev_name: str = "explained_variance",
) -> dict[str, Any]:
    """The reading with the policy-update rules applied, each number, threshold and window
    returned and said in `notes`:

    - KL first, from the first point on (a warming-up run that already blows up its KL says
      so): the latest `kl` above KL_MAX reads "kl too large";
    - the value function over a window, not one update: the median of the last EV_WINDOW
      explained variances (`ev_recent`, oldest first) below EV_MIN reads "value not fitted".
      One update below 0 is common on a healthy run (13 of 48 on SB3's CartPole); a median
      moves only when most recent updates agree. Needs EV_MIN_VALUES of them, and a trend.
    """
    result["thresholds"].update(
        kl_max=KL_MAX, explained_variance_min=EV_MIN, explained_variance_window=EV_WINDOW
    )
    notes = result.setdefault("notes", [])
    recent = [v for v in ev_recent if math.isfinite(v)][-EV_WINDOW:]
    median = statistics.median(recent) if recent else None
    judged = result["reading"] not in ("waiting", "warming up")
    if kl is not None:
        result["numbers"]["approx_kl"] = kl
        notes.append(f"KL: the latest {kl_name} is {kl:.4g} (too large above {KL_MAX})")
    if median is not None:
        below = sum(v < EV_MIN for v in recent)
        result["numbers"].update(explained_variance=median, explained_variance_below=below)
        notes.append(
            f"value function: the median {ev_name} of the last {len(recent)} updates is"
            f" {median:.3g}, {below} of them below {EV_MIN:g} (not fitted when the median is"
            f" below {EV_MIN:g}, over at least {EV_MIN_VALUES})"
        )
    if kl is not None and kl > KL_MAX:
        result["reading"] = "kl too large"
        result["why"] = (
            f"the latest {kl_name} {kl:.4g} is above {KL_MAX}: the policy updates may be too"
            " large (lower the learning rate or the clip range)"
        )
    elif judged and median is not None and len(recent) >= EV_MIN_VALUES and median < EV_MIN:
        result["reading"] = "value not fitted"
        result["why"] = (
            f"the median {ev_name} of the last {len(recent)} updates is {median:.3g}, below"
            f" {EV_MIN:g}: the value function does not predict the returns yet"
        )
    return result


def series(points: Sequence[StepMetrics], key: str) -> list[float]:
    """One metric over the points, NaN where a step lacks it."""
    return [as_number(p.metrics.get(key)) for p in points]


def convergence(points: Sequence[StepMetrics]) -> dict[str, Any]:
    return trend_reading(
        series(points, "reward_mean"),
        truncation=series(points, "truncation_rate"),
        zero_signal=series(points, "zero_signal_share"),
        flag_rates={name: series(points, f"flag.{name}") for name in FLAGS},
    )


def as_number(value: Any) -> float:
    """A metric as a float: NaN for a missing or non-numeric value (a gap in its curve)."""
    return float(value) if isinstance(value, int | float) else math.nan


CURVE_KINDS = (  # prefixed metrics (see metrics_of): key prefix, kind, label
    ("status.", "status", "Share {}"),
    ("dataset.", "dataset", "Accuracy {}"),
    ("reward.", "component", "Reward component {}"),
    ("flag.", "flag", "Flagged {}"),
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
