"""Right or wrong at a glance: the reward as coloured badges, the status, the answer the response
gives (``\\boxed{}`` or ``<answer>``) beside the label, and where a truncated response was cut.

Plain Python (no Django), so the sample page, its JSON twin and any other page (a group's
members) colour and compare the same way. A badge carries a *tone*, not a colour: the style
sheet maps tones to its theme's colours.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeGuard

from ..store import answers_match, find_answer, format_number

# A continuous reward is placed on this many steps from worst (0) to best, over the scale.
SCALE_STEPS = 5
DEFAULT_SCALE = (0.0, 1.0)  # when the step's range is unknown or empty
BAD_STATUSES = ("truncated", "aborted", "failed")


@dataclass(frozen=True, slots=True)
class Badge:
    """One chip: ``tone`` is "right", "wrong", "scale-0".."scale-4", "ok", "bad" or "none"."""

    name: str  # "reward", "reward.acc", "status"
    display: str
    tone: str
    kind: str  # "binary" | "scale" | "missing" | "status"

    @property
    def css_class(self) -> str:
        return f"rv-tone-{self.tone}"


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    source: str  # "boxed" (the last \boxed{...}) or "answer" (the last <answer> block)


@dataclass(frozen=True, slots=True)
class Verdict:
    rewards: tuple[Badge, ...]
    status: Badge | None
    answer: Answer | None
    label: str | None  # the label as text, None when the sample has none
    match: bool | None  # None: nothing to compare (no answer or no label)
    cut: str | None  # "cut at 4,096 tokens" on a truncated response

    def as_json(self) -> dict[str, Any]:
        return {
            "rewards": [badge_json(b) for b in self.rewards],
            "status": None if self.status is None else badge_json(self.status),
            "answer": None if self.answer is None else asdict(self.answer),
            "label": self.label,
            "match": self.match,
            "truncation": self.cut,
        }


def badge_json(badge: Badge) -> dict[str, str]:
    """A chip as the JSON says it: name, display, tone, kind and its CSS class."""
    return {**asdict(badge), "class": badge.css_class}


def judge_sample(sample: dict[str, Any], scale: tuple[float, float] | None = None) -> Verdict:
    """Everything the sample header shows; ``scale`` is the step's reward range, if known."""
    answer = extract_answer(sample.get("response"))
    label = label_text(sample["label"]) if "label" in sample else None
    return Verdict(
        rewards=reward_badges(sample, scale),
        status=status_badge(sample.get("status")),
        answer=answer,
        label=label,
        match=_agree(answer, label),
        cut=cut_marker(sample),
    )


def answer_check(sample: Mapping[str, Any]) -> bool | None:
    """The sample header's check alone (a search hit's ✓/✗): whether the response's final
    answer agrees with the label; None when it has no answer or no label (null is none)."""
    return label_check(extract_answer(sample.get("response")), sample.get("label"))


def label_check(answer: Answer | None, label: Any) -> bool | None:
    """`answer_check` of an answer found already (a table row's, found beside its preview)
    against a label as the file wrote it (null is none)."""
    return _agree(answer, None if label is None else label_text(label))


def _agree(answer: Answer | None, label: str | None) -> bool | None:
    """Whether the answer agrees with the label (as text); None with nothing to compare."""
    return answers_agree(answer.text, label) if answer is not None and label is not None else None


def hit_badges(reward: float | None, status: str | None) -> list[Badge]:
    """A search hit's chips: its reward (on the 0..1 scale: the step's range is not read for a
    hit) and its status, toned as the sample header's."""
    badges = [_reward_badge("reward", reward, None)]
    status_chip = status_badge(status)
    return badges if status_chip is None else [*badges, status_chip]


# -- reward and status -------------------------------------------------------------------------
def reward_badges(sample: dict[str, Any], scale: tuple[float, float] | None) -> tuple[Badge, ...]:
    if "reward" not in sample:
        return ()
    reward = sample["reward"]
    if isinstance(reward, dict):  # one chip per component, each on the 0..1 scale
        return tuple(_reward_badge(f"reward.{k}", v, None) for k, v in reward.items())
    return (_reward_badge("reward", reward, scale),)


def reward_badge(name: str, value: Any, scale: tuple[float, float] | None = None) -> Badge:
    """One reward's chip as the sample header tones it (binary, on ``scale``, or missing): the
    prompt page's step strip colours each step's mean reward with it."""
    return _reward_badge(name, value, scale)


def _reward_badge(name: str, value: Any, scale: tuple[float, float] | None) -> Badge:
    number = _as_float(value)
    if number is None or math.isnan(number):
        shown = format_number(value) if _is_number(value) or value is None else "not a number"
        return Badge(name, shown, "none", "missing")
    if number in (0, 1):
        return Badge(name, format_number(value), "right" if number == 1 else "wrong", "binary")
    low, high = scale if scale is not None and scale[1] > scale[0] else DEFAULT_SCALE
    if not low <= number <= high:  # outside the step's range (or 0..1): an end of the scale
        step = 0 if number < low else SCALE_STEPS - 1
    else:
        step = min(SCALE_STEPS - 1, int((number - low) / (high - low) * SCALE_STEPS))
    return Badge(name, format_number(value), f"scale-{step}", "scale")


def _as_float(value: Any) -> float | None:
    """A number as a float; an int too big for one (400 digits) as an infinity."""
    if not _is_number(value):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def status_badge(status: Any) -> Badge | None:
    if status is None:
        return None
    text = status if isinstance(status, str) else json.dumps(status, ensure_ascii=False)
    tone = "bad" if text in BAD_STATUSES else "ok" if text == "completed" else "none"
    return Badge("status", text, tone, "status")


def cut_marker(sample: dict[str, Any]) -> str | None:
    if sample.get("status") != "truncated":
        return None
    for name in ("response_length", "response_token_count"):
        tokens = sample.get(name)
        number = _as_float(tokens)
        if number is not None and math.isfinite(number):
            return f"cut at {int(number):,} tokens"
    return "cut here (truncated)"


def reward_scale(stats: dict[str, Any] | None) -> tuple[float, float] | None:
    """The step's reward range from its statistics, when it has one."""
    reward = (stats or {}).get("reward") or {}
    low, high = reward.get("min"), reward.get("max")
    if _is_number(low) and _is_number(high) and math.isfinite(low) and math.isfinite(high):
        return float(low), float(high)
    return None


# -- the answer and the label (one reading of them: answers.py, which the group page uses too)
def extract_answer(response: Any) -> Answer | None:
    found = find_answer(response)
    return Answer(*found) if found else None


def label_text(label: Any) -> str:
    """The label as the page shows it: text as it is, 4 as "4" (and 4.0 too), else JSON."""
    if isinstance(label, str):
        return label
    if isinstance(label, float) and math.isfinite(label) and label.is_integer():
        return str(int(label))
    if _is_number(label):
        return str(label) if isinstance(label, int) else format_number(label)
    return json.dumps(label, ensure_ascii=False)


def answers_agree(answer: str, label: str) -> bool:
    return answers_match(answer, label) is True


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
