"""Is it learning? One verdict for a convergence reading, said the same on every page and in the
terminal: the run picker, a bucket's trends, the Training page and the terminal UI all show
`learning_verdict(reading, outcome)`, so the same state gets the same words and the same tone.

The reading (`store.reading`: `convergence`, `trend_reading`, `update_rules`; the training
reading of `training.convergence`) names a state; this maps it to a label, a tone and why. A
failure dominates any trend: a job that failed, or a rule that overrides the trend ("kl too
large", "value not fitted"), is never drawn as the curve's green. The tones are a small fixed
set, each one CSS class (`rv-learning-<tone>`) and one rich style in the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

Tone = Literal["good", "warn", "bad", "neutral"]
TONES: tuple[Tone, ...] = ("good", "warn", "bad", "neutral")


class LearningVerdict(TypedDict):
    """What every surface shows for a reading: `state` is the reading's own name (or "failed"),
    `label` the words, `tone` the colour, `why` the sentence behind it."""

    state: str
    label: str
    tone: Tone
    why: str


# The reading's states: its words and its tone. A state not listed (a newer rule) is shown by
# its own name, neutral, until it is given a place here.
STATES: dict[str, tuple[str, Tone]] = {
    "waiting": ("waiting", "neutral"),
    "warming up": ("warming up", "neutral"),
    "rising": ("rising", "good"),
    "plateau": ("plateau", "warn"),
    "not rising": ("not rising", "bad"),
    "kl too large": ("KL too large", "bad"),
    "value not fitted": ("value not fitted", "bad"),
    "failed": ("failed", "bad"),
}
# How a training job ended (`job.outcome`) that dominates the curve's reading.
FAILED_OUTCOMES = frozenset({"failed"})


def learning_verdict(reading: Mapping[str, Any], outcome: str | None = None) -> LearningVerdict:
    """The verdict on `reading`; `outcome`: how the training job ended (None while it runs, or
    for a bucket read from its files). A failed job reads "failed" whatever its curve did."""
    state = str(reading.get("reading") or "waiting")
    why = str(reading.get("why") or "")
    if outcome in FAILED_OUTCOMES and state != "failed":
        before = f"; before it failed the curve read {state}" if state else ""
        why = f"the job {outcome}{before}" + (f": {why}" if why else "")
        state = "failed"
    label, tone = STATES.get(state, (state, "neutral"))
    return {"state": state, "label": label, "tone": tone, "why": why}


def with_verdict(reading: dict[str, Any], outcome: str | None = None) -> dict[str, Any]:
    """The reading with its `verdict` added (every other key kept), as the JSON twins send it."""
    return {**reading, "verdict": learning_verdict(reading, outcome)}


def tone_class(tone: str) -> str:
    """The one CSS class of a tone (an unknown tone is neutral)."""
    return f"rv-learning-{tone if tone in TONES else 'neutral'}"
