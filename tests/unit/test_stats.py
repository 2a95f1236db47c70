"""Per-step statistics from the columns, against values worked out by hand from tiny inputs."""

from __future__ import annotations

import json
import math

import pytest

from rollouts.store import Catalog
from rollouts.store.stats import group_stats, histogram, percentile, step_stats, summarize
from tests.support.data import sample


def stats_of(write_step, lines) -> dict:
    path = write_step("train", 0, lines)
    catalog = Catalog(path.parent.parent)
    index = catalog.open_step("train", "0.jsonl")
    columns = catalog.columns(index)
    return step_stats(columns, index.invalid)


def test_summary_is_population_statistics_of_finite_values():
    s = summarize([1.0, 2.0, 3.0, 4.0, math.nan, math.inf])
    assert (s.n, s.mean, s.min, s.max) == (4, 2.5, 1.0, 4.0)
    assert s.std == pytest.approx(math.sqrt(1.25))  # ((1.5² + 0.5²) * 2) / 4
    assert summarize([math.nan]).n == 0 and summarize([]).mean is None


def test_percentile_is_nearest_rank():
    ordered = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    assert percentile(ordered, 50) == 50.0
    assert percentile(ordered, 90) == 90.0
    assert percentile(ordered, 91) == 100.0
    assert percentile([], 50) is None


def test_histogram_bins_cover_min_to_max_inclusive():
    values = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, math.nan]
    h = histogram(values, bins=2)
    # [0, 0.5): 0 .. 0.4 (5 values); [0.5, 1]: 0.5 .. 1.0 (7 values, the maximum included).
    assert h == {"kind": "bins", "edges": [0.0, 0.5, 1.0], "counts": [5, 7]}


def test_histogram_of_few_distinct_values_has_one_bar_per_value():
    assert histogram([1.0, 0.0, 1.0, math.nan]) == {
        "kind": "values",
        "values": [0.0, 1.0],
        "counts": [1, 2],
    }
    assert histogram([2.0, 2.0]) == {"kind": "values", "values": [2.0], "counts": [2]}
    assert histogram([]) == {"kind": "values", "values": [], "counts": []}


def test_groups_zero_signal_success_and_mean_std(write_step):
    # group 0: rewards 1, 0 (signal, success, std 0.5); group 1: 0, 0 (no signal, no success,
    # std 0); group 2: a single sample, reward 1 (no signal, success, std 0); group 3 has only a
    # NaN reward and is left out.
    groups, rewards = [0, 0, 1, 1, 2, 3], [1.0, 0.0, 0.0, 0.0, 1.0, math.nan]
    lines = [sample(i, group_index=g, reward=r) for i, (g, r) in enumerate(zip(groups, rewards))]
    g = stats_of(write_step, lines)["groups"]
    assert g == {
        "groups": 3,
        "zero_signal_share": 2 / 3,
        "success_share": 2 / 3,
        "mean_std": pytest.approx(0.5 / 3),
    }
    assert group_stats([])["groups"] == 0


def test_step_stats_counts_status_reward_lengths_and_invalid_lines(write_step):
    lines = [
        sample(0, reward=1.0, response_length=10, status="completed", group_index=0),
        sample(1, reward=0.0, response_length=30, status="truncated", group_index=0),
        "{broken\n",
        json.dumps(sample(2, reward=0.0, response_length=20, group_index=1)).replace(
            '"reward": 0.0', '"reward": NaN'
        )
        + "\n",
        sample(3, reward=0.5, response_length=40, status="aborted", group_index=1),
    ]
    stats = stats_of(write_step, lines)
    assert stats["samples"] == 4 and stats["invalid"] == 1
    assert stats["status"] == {"completed": 2, "truncated": 1, "aborted": 1}
    assert stats["truncation_rate"] == 0.25
    reward = stats["reward"]
    assert (reward["n"], reward["mean"], reward["min"], reward["max"]) == (3, 0.5, 0.0, 1.0)
    lengths = stats["response_length"]
    assert lengths == {"n": 4, "mean": 25.0, "p50": 20.0, "p90": 40.0, "max": 40.0}
    # Group 1 keeps only the finite 0.5 (the NaN is left out): a one-sample group, no signal.
    assert stats["groups"]["groups"] == 2
    assert stats["groups"]["zero_signal_share"] == 0.5


def test_eval_reward_per_dataset_and_object_reward_components(write_step):
    lines = [
        sample(0, dataset="gsm8k", reward=1.0),
        sample(1, dataset="gsm8k", reward=0.0),
        sample(0, dataset="math", reward=1.0),
        sample(1, reward={"acc": 1, "format": 0.5}),
        sample(2, reward={"acc": 0, "format": 1.0}),
    ]
    stats = stats_of(write_step, lines)
    by_dataset = stats["reward_by_dataset"]
    assert list(by_dataset) == ["gsm8k", "math"]
    assert (by_dataset["gsm8k"]["n"], by_dataset["gsm8k"]["mean"]) == (2, 0.5)
    assert (by_dataset["math"]["n"], by_dataset["math"]["mean"]) == (1, 1.0)
    assert stats["reward_components"]["acc"]["mean"] == 0.5
    assert stats["reward_components"]["format"]["mean"] == 0.75


def test_empty_step_has_counts_of_zero_and_no_numbers(write_step):
    stats = stats_of(write_step, [])
    assert stats["samples"] == 0 and stats["truncation_rate"] is None
    assert stats["reward"]["n"] == 0 and stats["reward"]["mean"] is None
    assert stats["response_length"]["p50"] is None
    assert stats["groups"]["zero_signal_share"] is None


# -- clipped histograms: the far outliers left out and counted (issue 29) --------------------
def test_a_clipped_histogram_leaves_out_the_far_outliers_and_counts_them():
    from rollouts.store.stats import HISTOGRAM_BINS, OUTLIER_FENCE, clipped_histogram

    body = [float(v) for v in range(1, 101)]
    values = [*body, 4096.0, 4096.0, 4096.0, math.nan]
    ordered = sorted(v for v in values if math.isfinite(v))
    q1 = ordered[math.ceil(0.25 * len(ordered)) - 1]  # nearest rank, worked out here
    q3 = ordered[math.ceil(0.75 * len(ordered)) - 1]
    fence = q3 + OUTLIER_FENCE * (q3 - q1)
    kept = [v for v in ordered if v <= fence]
    h = clipped_histogram(values)
    assert h["kind"] == "bins"
    assert h["above"] == sum(v > fence for v in ordered) == 3
    assert h["below"] == 0
    assert (h["edges"][0], h["edges"][-1]) == (min(kept), max(kept)) == (1.0, 100.0)
    assert sum(h["counts"]) == len(kept) and len(h["counts"]) == HISTOGRAM_BINS
    # the whole histogram still spans the outliers
    assert histogram(values)["edges"][-1] == 4096.0


def test_a_clipped_histogram_counts_low_outliers_too():
    from rollouts.store.stats import clipped_histogram

    values = [-1000.0, *[float(v) for v in range(50, 80)]]
    h = clipped_histogram(values)
    assert (h["below"], h["above"]) == (1, 0)
    assert h["edges"][0] == 50.0


@pytest.mark.parametrize(
    "values",
    [
        [0.0, 1.0] * 50 + [4096.0],  # few distinct values: one bar each, nothing left out
        [5.0] * 90 + [float(v) for v in range(20)],  # equal quartiles: no spread to judge by
        [float(v) for v in range(100)],  # nothing beyond the fences
    ],
)
def test_a_clipped_histogram_leaves_out_nothing_without_far_outliers(values):
    from rollouts.store.stats import clipped_histogram

    h = clipped_histogram(values)
    assert (h["below"], h["above"]) == (0, 0)
    assert sum(h["counts"]) == len(values)
    assert {k: v for k, v in h.items() if k not in ("below", "above")} == histogram(values)
