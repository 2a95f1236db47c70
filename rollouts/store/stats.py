"""Per-step statistics, computed from the columns alone (never from sample bodies).

Counts and status mix, reward (overall, per eval dataset, per reward component), response
lengths, GRPO group signal, and histograms. Unreadable lines are counted and left out of every
aggregate; NaN and missing values are left out of the number they would distort. Everything
returned is plain JSON-able data, so the pages, the JSON API and the terminal UI share it.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .columns import Columns
from .flags import DEFAULT_RULES, TRUNCATED, FlagRules, flag_context
from .promptid import NO_PROMPT

STATUSES = ("completed", "truncated", "aborted", "failed", "pending")
HISTOGRAM_BINS = 20
DISCRETE_MAX = 10  # this many distinct values or fewer: one histogram bar per value
# A histogram leaves out the far outliers (Tukey's "far out" values): those more than
# OUTLIER_FENCE interquartile ranges beyond the quartiles, so three 4,096-token responses do not
# squeeze every other sample into one bar. The page says how many it left out.
OUTLIER_FENCE = 3.0
HISTOGRAM_COLUMNS = ("reward", "response_length")
# A sample "succeeds" when its reward is above this (0/1 accuracy rewards: reward 1).
SUCCESS_ABOVE = 0.0


@dataclass(frozen=True, slots=True)
class Summary:
    """Count, mean, population std, min and max of the finite values; None when there are none."""

    n: int
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None


def summarize(values: Iterable[float]) -> Summary:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return Summary(0)
    mean = math.fsum(finite) / len(finite)
    variance = math.fsum((v - mean) ** 2 for v in finite) / len(finite)
    return Summary(len(finite), mean, math.sqrt(variance), min(finite), max(finite))


def percentile(ordered: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of sorted values; None for none."""
    if not ordered:
        return None
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def histogram(values: Iterable[float], bins: int = HISTOGRAM_BINS) -> dict[str, Any]:
    """Equal-width bins over the finite values; the last bin includes its upper edge.

    Few distinct values (0/1 rewards, a handful of reward levels) get one bar per value
    instead: `kind` "values", with `values` beside `counts`.
    """
    finite = sorted(v for v in values if math.isfinite(v))
    distinct = sorted(set(finite))
    if len(distinct) <= DISCRETE_MAX:
        counts_of = {value: 0 for value in distinct}
        for v in finite:
            counts_of[v] += 1
        return {"kind": "values", "values": distinct, "counts": list(counts_of.values())}
    low, high = finite[0], finite[-1]
    width = (high - low) / bins
    # Rounded to 12 significant digits, so links read [0.15,0.2), not [0.15000000000000002,...
    edges = [float(f"{low + i * width:.12g}") for i in range(bins)] + [high]
    counts = [0] * bins
    # By the edges themselves, so that a bar's range filter [edge_i, edge_i+1) finds exactly
    # the samples it counts, rounding included.
    for v in finite:
        counts[min(bisect.bisect_right(edges, v) - 1, bins - 1)] += 1
    return {"kind": "bins", "edges": edges, "counts": counts}


def clipped_histogram(values: Iterable[float], bins: int = HISTOGRAM_BINS) -> dict[str, Any]:
    """`histogram` of the finite values inside Tukey's far-out fences, [Q1 - k IQR, Q3 + k IQR]
    with k = OUTLIER_FENCE (nearest-rank quartiles), with `below` and `above`: how many values
    lie outside them, not drawn. Nothing is left out when the quartiles are equal (no spread
    to measure outliers by) or when the whole histogram is one bar per value (few distinct
    values: every one is readable)."""
    finite = sorted(v for v in values if math.isfinite(v))
    whole = histogram(finite, bins)
    q1, q3 = percentile(finite, 25), percentile(finite, 75)
    if whole["kind"] == "values" or q1 is None or q3 is None or q3 <= q1:
        return {**whole, "below": 0, "above": 0}
    low, high = q1 - OUTLIER_FENCE * (q3 - q1), q3 + OUTLIER_FENCE * (q3 - q1)
    first = bisect.bisect_left(finite, low)
    last = bisect.bisect_right(finite, high)
    if first == 0 and last == len(finite):
        return {**whole, "below": 0, "above": 0}
    inside = histogram(finite[first:last], bins)
    return {**inside, "below": first, "above": len(finite) - last}


def clipped_histograms(columns: Columns, invalid: Collection[int]) -> dict[str, dict[str, Any]]:
    """`clipped_histogram` of each histogram column (HISTOGRAM_COLUMNS) of a step's readable
    rows: what the statistics page draws unless asked for the full range."""
    out = {}
    for name in HISTOGRAM_COLUMNS:
        col = columns.numeric.get(name)
        rows = [] if col is None else [col[r] for r in range(columns.rows) if r not in invalid]
        out[name] = clipped_histogram(rows)
    return out


def step_stats(
    columns: Columns, invalid: Collection[int], rules: FlagRules = DEFAULT_RULES
) -> dict[str, Any]:
    rows = [r for r in range(columns.rows) if r not in invalid]
    numeric = columns.numeric

    def values(name: str, among: Iterable[int] = rows) -> list[float]:
        col = numeric.get(name)
        return [] if col is None else [col[r] for r in among]

    statuses = _category_counts(columns, "status", rows)
    samples = len(rows)
    lengths = sorted(v for v in values("response_length") if math.isfinite(v))
    datasets = _rows_by_category(columns, "dataset", rows)
    components = sorted(name for name in numeric if name.startswith("reward."))
    return {
        "samples": samples,
        "invalid": len(invalid),
        "status": statuses,
        "truncation_rate": statuses.get(TRUNCATED, 0) / samples if samples else None,
        "reward": asdict(summarize(values("reward"))),
        "reward_by_dataset": {
            name: asdict(summarize(values("reward", among))) for name, among in datasets.items()
        },
        "reward_components": {
            name.removeprefix("reward."): asdict(summarize(values(name))) for name in components
        },
        "response_length": {
            "n": len(lengths),
            "mean": math.fsum(lengths) / len(lengths) if lengths else None,
            "p50": percentile(lengths, 50),
            "p90": percentile(lengths, 90),
            "max": lengths[-1] if lengths else None,
        },
        "groups": group_stats(group_table(columns, invalid)),
        "histograms": {
            "reward": histogram(values("reward")),
            "response_length": histogram(lengths),
        },
        "flags": flag_context(columns, invalid, rules),
    }


def group_rows(columns: Columns, invalid: Collection[int]) -> dict[int, list[int]]:
    """Positions of the readable samples of each integer `group_index`, in file order."""
    col = columns.numeric.get("group_index")
    groups: dict[int, list[int]] = {}
    if col is None:
        return groups
    for row in range(columns.rows):
        value = col[row]
        if math.isfinite(value) and value == int(value) and row not in invalid:
            groups.setdefault(int(value), []).append(row)
    return dict(sorted(groups.items()))


ADVANTAGE = "advantage"  # a column the writer may carry; else derived (group_advantages)


def has_advantage(columns: Columns) -> bool:
    """Whether the step has an advantage: its own column, or a reward to derive one from."""
    return ADVANTAGE in columns.numeric or "reward" in columns.numeric


def group_advantages(columns: Columns, invalid: Collection[int]) -> array:
    """Each row's advantage: the step's own `advantage` column when it has one, else its
    reward minus the mean finite reward of its group (the samples of its `group_index`, the
    group page's groups; without that column, the samples of the same prompt). NaN for a row
    without a finite reward or a group (a group of one has advantage 0: no signal).
    """
    own = columns.numeric.get(ADVANTAGE)
    out = array("d", [math.nan]) * columns.rows
    if own is not None:
        out[: len(own)] = own[: columns.rows]
        return out
    reward = columns.numeric.get("reward")
    if reward is None:
        return out
    groups: Iterable[Sequence[int]] = group_rows(columns, invalid).values()
    if "group_index" not in columns.numeric:
        groups = _prompt_groups(columns, invalid)
    for rows in groups:
        finite = [r for r in rows if r < len(reward) and math.isfinite(reward[r])]
        mean = summarize(reward[r] for r in finite).mean
        if mean is not None:
            for r in finite:
                out[r] = reward[r] - mean
    return out


def _prompt_groups(columns: Columns, invalid: Collection[int]) -> list[list[int]]:
    groups: dict[int, list[int]] = {}
    for row, prompt in enumerate(columns.prompt_ids):
        if prompt != NO_PROMPT and row not in invalid:
            groups.setdefault(prompt, []).append(row)
    return list(groups.values())


def group_summary(columns: Columns, group: int, rows: Sequence[int]) -> dict[str, Any]:
    """One GRPO group: its size, the summary of its finite rewards, and its learning signal.

    A group whose rewards are all equal (a single sample included) has zero advantage for every
    sample: no signal (`zero_signal` is None when no sample has a finite reward). It succeeds
    when a reward is above SUCCESS_ABOVE.
    """
    reward = columns.numeric.get("reward")
    finite = [v for v in (reward[r] for r in rows) if math.isfinite(v)] if reward else []
    return {
        "group": group,
        "samples": len(rows),
        **asdict(summarize(finite)),
        "zero_signal": len(set(finite)) == 1 if finite else None,
        "success": any(v > SUCCESS_ABOVE for v in finite),
    }


def group_table(columns: Columns, invalid: Collection[int]) -> list[dict[str, Any]]:
    """`group_summary` of every group, in group order."""
    return [
        group_summary(columns, group, rows) for group, rows in group_rows(columns, invalid).items()
    ]


def group_stats(table: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The groups of a step together: how many have a finite reward, and the shares of them
    without signal and with a success, and their mean within-group std."""
    counted = [group for group in table if group["n"]]
    if not counted:
        return {"groups": 0, "zero_signal_share": None, "success_share": None, "mean_std": None}
    return {
        "groups": len(counted),
        "zero_signal_share": sum(g["zero_signal"] for g in counted) / len(counted),
        "success_share": sum(g["success"] for g in counted) / len(counted),
        "mean_std": math.fsum(g["std"] for g in counted) / len(counted),
    }


def _category_counts(columns: Columns, name: str, rows: Iterable[int]) -> dict[str, int]:
    """Counts per value, the known statuses first; "(missing)" for rows without one."""
    counts: dict[str, int] = {}
    codes = columns.categorical.get(name)
    names = columns.categories.get(name, [])
    for row in rows:
        code = codes[row] if codes is not None else -1
        key = names[code] if code >= 0 else "(missing)"
        counts[key] = counts.get(key, 0) + 1
    known = [s for s in STATUSES if s in counts]
    return {k: counts[k] for k in [*known, *sorted(set(counts) - set(known))]}


def _rows_by_category(columns: Columns, name: str, rows: Iterable[int]) -> dict[str, list[int]]:
    codes = columns.categorical.get(name)
    if codes is None:
        return {}
    names = columns.categories[name]
    grouped: dict[str, list[int]] = {}
    for row in rows:
        if codes[row] >= 0:
            grouped.setdefault(names[codes[row]], []).append(row)
    return dict(sorted(grouped.items()))
