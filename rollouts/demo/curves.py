"""How a demo run changes over its steps: the accuracy of completed answers, the share of
truncated ones and the number of looping ones, as functions of (step, steps), and the status
weights they give each step."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .samples import STATUS_WEIGHTS

_TRUNCATED = STATUS_WEIGHTS[1]  # per cent, unless a curve says otherwise


def _progress(step: int, steps: int) -> float:
    return step / max(1, steps - 1)


def _accuracy(step: int, steps: int) -> float:
    return 0.25 + 0.55 * step / max(1, steps - 1)


def _plateau(step: int, steps: int) -> float:
    # Most of the gain in the first quarter of the run, then flat at 0.6.
    return 0.6 - 0.35 * max(0.0, 1 - 4 * _progress(step, steps)) ** 2


def _collapse(step: int, steps: int) -> float:
    # Up to 0.75 half-way, then back down to where it started.
    return 0.75 - 0.5 * abs(2 * _progress(step, steps) - 1)


def _longer_answers(step: int, steps: int) -> float:
    # In the second half, more and more answers hit the length limit: from 6 % to 70 %.
    return _TRUNCATED + 64 * max(0.0, 2 * _progress(step, steps) - 1)


def _more_loops(step: int, steps: int) -> int:
    # In the second half, more and more responses end in a loop: from 1 to 7 a step.
    return 1 + round(6 * max(0.0, 2 * _progress(step, steps) - 1))


class Curve(NamedTuple):
    accuracy: Callable[[int, int], float]  # (step, steps) -> P(correct) of a completed answer
    truncated: Callable[[int, int], float] = lambda step, steps: _TRUNCATED  # per cent
    loops: Callable[[int, int], int] = lambda step, steps: 1  # responses ending in a loop


CURVES = {
    "rise": Curve(_accuracy),
    "plateau": Curve(_plateau),
    "collapse": Curve(_collapse, _longer_answers, _more_loops),
}


def status_weights(curve: Curve, step: int, steps: int) -> tuple[float, ...]:
    """Weights of ``STATUSES`` at this step: the curve's truncated share, taken from completed."""
    truncated = curve.truncated(step, steps)
    return (97 - truncated, truncated, *STATUS_WEIGHTS[2:])
