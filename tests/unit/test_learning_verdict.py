"""Is it learning? One verdict (presentation/learning.py) for every reading state, made from real
readings of the store's rules, and a failure over any trend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from rollouts.presentation import TONES, learning_verdict, tone_class
from rollouts.store import trend_reading, update_rules

RISING = [0.1 * n for n in range(12)]
FLAT = [0.5, 0.51, 0.5, 0.49, 0.5, 0.51, 0.5, 0.49, 0.5, 0.51, 0.5, 0.5]
FALLING = [1.0 - 0.05 * n for n in range(12)]


def reading(
    rewards: list[float], kl: float | None = None, ev: Sequence[float] = ()
) -> dict[str, Any]:
    return update_rules(trend_reading(rewards), kl, ev)


@pytest.mark.parametrize(
    ("rewards", "kl", "ev", "state", "label", "tone"),
    [
        ([], None, [], "waiting", "waiting", "neutral"),
        ([0.1, 0.2], None, [], "warming up", "warming up", "neutral"),
        (RISING, None, [], "rising", "rising", "good"),
        (FLAT, None, [], "plateau", "plateau", "warn"),
        (FALLING, None, [], "not rising", "not rising", "bad"),
        (RISING, 0.2, [], "kl too large", "KL too large", "bad"),
        (RISING, None, [-0.5, -0.4, -0.3], "value not fitted", "value not fitted", "bad"),
    ],
)
def test_each_reading_state_has_its_words_and_tone(rewards, kl, ev, state, label, tone):
    read = reading(rewards, kl, ev)
    assert read["reading"] == state  # the input really is that state
    verdict = learning_verdict(read)
    assert verdict == {"state": state, "label": label, "tone": tone, "why": read["why"]}


def test_a_rule_overrides_a_rising_trend_and_its_why_says_the_rule():
    verdict = learning_verdict(reading(RISING, kl=0.2))
    assert (verdict["tone"], verdict["label"]) == ("bad", "KL too large")
    assert "above 0.05" in verdict["why"]


def test_a_failed_job_dominates_a_rising_curve():
    read = reading(RISING)
    assert learning_verdict(read)["tone"] == "good"
    verdict = learning_verdict(read, outcome="failed")
    assert (verdict["state"], verdict["label"], verdict["tone"]) == ("failed", "failed", "bad")
    assert verdict["why"].startswith("the job failed; before it failed the curve read rising")


def test_a_reading_the_training_core_already_marked_failed_stays_failed():
    read = {**reading(RISING), "reading": "failed", "why": "the job failed (exit code 1)"}
    verdict = learning_verdict(read, outcome="failed")
    assert verdict == {
        "state": "failed",
        "label": "failed",
        "tone": "bad",
        "why": "the job failed (exit code 1)",
    }


@pytest.mark.parametrize("outcome", [None, "finished", "stopped", "forced"])
def test_an_ending_that_is_no_failure_leaves_the_curve_reading(outcome):
    assert learning_verdict(reading(RISING), outcome)["tone"] == "good"


def test_an_unknown_state_is_shown_by_its_name_neutral():
    verdict = learning_verdict({"reading": "some new rule", "why": "w"})
    assert (verdict["label"], verdict["tone"]) == ("some new rule", "neutral")


def test_each_tone_has_one_class_and_unknown_ones_are_neutral():
    assert [tone_class(t) for t in TONES] == [f"rv-learning-{t}" for t in TONES]
    assert tone_class("green") == "rv-learning-neutral"
