"""The convergence reading: each outcome from a curve built for it, numbers shown."""

from __future__ import annotations

import math
import random

import pytest

from rollouts.store.reading import noise, slope, trend_reading


def test_slope_is_least_squares_per_step():
    assert slope([1.0, 2.0, 3.0]) == pytest.approx(1.0)
    # x centred at 1, y at 2: ((-1)(1) + 0 + (1)(0)) / ((-1)² + 0 + 1²) = -1/2
    assert slope([3.0, 1.0, 2.0]) == pytest.approx(-0.5)
    assert slope([5.0]) == 0.0


def test_noise_ignores_a_steady_trend():
    assert noise([0.0, 0.1, 0.2, 0.3, 0.4]) == pytest.approx(0.0)
    assert noise([0.5, 0.6, 0.5, 0.6, 0.5]) > 0.05


def test_no_data_is_waiting_and_few_steps_are_warming_up():
    assert trend_reading([])["reading"] == "waiting"
    assert trend_reading([math.nan, math.nan])["reading"] == "waiting"
    warm = trend_reading([0.1, 0.2])
    assert warm["reading"] == "warming up" and warm["numbers"] == {"steps": 2}


def test_falling_reward_is_not_rising():
    result = trend_reading([0.8, 0.7, 0.75, 0.6, 0.5, 0.45])
    assert result["reading"] == "not rising"
    assert result["numbers"]["slope"] < 0


def test_noisy_flat_curve_is_a_plateau_with_its_numbers():
    values = [0.60, 0.63, 0.59, 0.62, 0.60, 0.63, 0.59, 0.62]
    result = trend_reading(values)
    assert result["reading"] == "plateau"
    numbers = result["numbers"]
    assert abs(numbers["shift"]) <= numbers["noise"]
    assert numbers["cv"] <= 0.15 and numbers["range_ratio"] <= 0.15
    assert result["thresholds"]["plateau_cv"] == 0.15
    assert "heuristic" in result["disclaimer"]


def test_slow_steady_climb_is_rising_not_a_plateau():
    values = [0.60 + 0.005 * i for i in range(10)]  # cv and range are small, but it climbs
    result = trend_reading(values)
    numbers = result["numbers"]
    assert numbers["cv"] <= 0.15 and numbers["range_ratio"] <= 0.15
    assert abs(numbers["shift"]) > numbers["noise"]
    assert result["reading"] == "rising"


def test_only_the_recent_window_is_read():
    values = [0.9, 0.9, 0.9, 0.9] + [0.1 + 0.05 * i for i in range(10)]
    assert trend_reading(values, window=10)["reading"] == "rising"
    assert trend_reading(values, window=14)["reading"] == "not rising"


def test_rising_truncation_and_zero_signal_share_are_warned_about():
    result = trend_reading(
        [0.1, 0.2, 0.3], truncation=[0.01, 0.05, 0.2], zero_signal=[0.3, 0.3, 0.3]
    )
    assert result["warnings"] == ["truncation rate is rising: 0.010 -> 0.200 over 3 steps"]
    assert trend_reading([0.1, 0.2, 0.3], zero_signal=[0.1, 0.2, 0.4])["warnings"] == [
        "zero-signal group share is rising: 0.100 -> 0.400 over 3 steps"
    ]


def test_a_long_run_is_read_over_its_last_tenth():
    # 400 steps climbing 0.002 a step under noise of sd 0.03 (seeded): the last 10 steps look
    # flat (their climb, 0.02, is within the noise); the last 40 (a tenth) show the climb.
    rng = random.Random(0)
    values = [0.1 + 0.002 * i + rng.gauss(0, 0.03) for i in range(400)]
    result = trend_reading(values)
    assert result["thresholds"]["window"] == 40 and result["numbers"]["window_steps"] == 40
    assert result["reading"] == "rising"
    assert trend_reading(values, window=10)["reading"] == "plateau"
    assert trend_reading(values[:50])["thresholds"]["window"] == 10
