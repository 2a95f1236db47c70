"""The statistics page's chart geometry: round ticks, whole-number bins, counts on the bars,
and scatter points kept clear of the plot's edges (plain Python, no Django)."""

from __future__ import annotations

import pytest

from rollouts.presentation.charts import (
    HISTOGRAM_BOX,
    POINT_CLEARANCE,
    SCATTER_BOX,
    histogram_bars,
    nice_ticks,
    range_label,
    scatter,
)
from rollouts.store import ValueRange
from rollouts.store.numbers import format_compact, format_stat
from rollouts.store.stats import histogram


@pytest.mark.parametrize(
    ("low", "high", "ticks"),
    [(0, 10, [0, 2, 4, 6, 8, 10]), (0, 4096, [0, 1000, 2000, 3000, 4000]), (0.0, 1.0,
     [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), (3, 3, [3])],
)  # fmt: skip
def test_nice_ticks_are_round_and_inside_the_range(low, high, ticks):
    assert nice_ticks(low, high) == pytest.approx(ticks)


def test_statistics_read_as_integers_when_whole():
    assert [format_stat(v) for v in (4096.0, 388.34375, 0.4375, 1.0, 3)] == [
        "4096", "388.3", "0.4375", "1", "3"
    ]  # fmt: skip
    assert [format_compact(v) for v in (0.0, 204.8, 0.05, 12345.678)] == [
        "0", "204.8", "0.05", "12346"
    ]  # fmt: skip


def test_whole_number_bins_are_labelled_by_the_integers_they_hold():
    assert range_label(ValueRange("n", 0.0, 204.8, False), integral=True) == "0\N{EN DASH}204"
    assert (
        range_label(ValueRange("n", 3891.2, 4096.0, True), integral=True) == "3892\N{EN DASH}4096"
    )
    assert range_label(ValueRange("n", 0.0, 204.8, False)) == "[0, 204.8)"
    assert range_label(ValueRange("n", 1.0, 1.0, True)) == "1"


def test_histogram_bars_carry_counts_and_a_y_axis_of_counts():
    lengths = [float(v) for v in [*range(0, 4097, 64), 4096, 4096]]
    bars = histogram_bars("response_length", "Length", histogram(lengths), "/s/", integral=True)
    assert [b["count"] for b in bars["bars"]] == histogram(lengths)["counts"]
    assert bars["bars"][0]["label"] == "0\N{EN DASH}204"
    labels = [t["label"] for t in bars["y_ticks"]]
    assert labels[0] == "0" and all(label.isdigit() for label in labels)
    top = max(b["count"] for b in bars["bars"])
    assert int(labels[-1]) >= top  # the axis reaches the tallest bar
    tallest = min(b["y"] for b in bars["bars"])
    assert tallest >= HISTOGRAM_BOX["top"]  # and the tallest bar stays inside the plot
    assert bars["x_ticks"][0]["label"] == "0" and bars["x_ticks"][-1]["label"] == "4096"


class _Columns:
    def __init__(self, reward, length, status):
        self.rows = len(reward)
        self.numeric = {"reward": reward, "response_length": length}
        self.categorical = {"status": status}
        self.categories = {"status": ["completed", "truncated"]}


def test_scatter_points_stay_clear_of_every_edge():
    rewards = [0.0, 1.0, 0.0, 1.0, 0.5]
    lengths = [1.0, 4096.0, 4096.0, 1.0, 2000.0]
    columns = _Columns(rewards, lengths, [1, 1, 0, 0, 0])
    result = scatter(columns, {}, list(range(1, 6)), lambda p: f"/s/{p}/")  # type: ignore[arg-type]
    assert result is not None
    box = result["box"]
    for point in result["points"]:
        assert (
            box["x0"] + POINT_CLEARANCE - 0.01 <= point["x"] <= box["x1"] - POINT_CLEARANCE + 0.01
        )
        assert box["y0"] + 5 <= point["y"] <= box["y1"] - 5
    assert box["width"] / box["height"] == SCATTER_BOX["width"] / SCATTER_BOX["height"]
    assert [t["label"] for t in result["y_ticks"]] == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    assert result["truncated"] == 2


def test_the_count_axis_reaches_a_round_count_above_the_tallest_bar():
    hist = {"kind": "values", "values": [0.0, 0.5, 1.0], "counts": [14, 13, 13]}
    bars = histogram_bars("reward", "Reward", hist, "/s/")
    assert [t["label"] for t in bars["y_ticks"]] == ["0", "5", "10", "15"]
    assert [b["label"] for b in bars["x_ticks"]] == ["0", "0.5", "1"]
    assert bars["bars"][0]["y"] > HISTOGRAM_BOX["top"]  # 14 of 15: below the top tick


def test_a_clipped_histogram_says_what_it_leaves_out():
    from rollouts.store.stats import clipped_histogram

    h = clipped_histogram([float(v) for v in [*range(1, 101), 4096, 4096, 4096]])
    bars = histogram_bars("response_length", "Response length", h, "/s/", integral=True)
    assert (bars["below"], bars["above"]) == (0, 3)
    assert bars["outside"] == f"3 values above {format_compact(100.0, True)} not shown"
    whole = histogram_bars(
        "response_length", "Response length", histogram([float(v) for v in range(20)]), "/s/"
    )
    assert whole["outside"] == ""
    one = histogram_bars(
        "reward", "Reward", clipped_histogram([float(v) for v in [-500, *range(40)]]), "/s/"
    )
    assert one["outside"] == "1 value below 0 not shown"
