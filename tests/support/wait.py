"""Waiting on evidence, the one way: `wait_for` asks until the answer is there, and fails loudly
at its deadline (naming what it waited for and the last thing it saw), never returning
quietly with a stale value for a later assertion to misread."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

INTERVAL_S = 0.02


class WaitTimeout(AssertionError):
    """What was waited for did not come in time (an AssertionError: pytest shows a failure)."""


def wait_for(
    check: Callable[[], T],
    what: str,
    timeout: float = 30.0,
    *,
    until: Callable[[T], object] = bool,
    interval: float = INTERVAL_S,
) -> T:
    """`check()` again and again until `until(value)` holds, then that value; WaitTimeout after
    `timeout` seconds, with `what` and the last value (or the last exception `check` raised)."""
    deadline = time.monotonic() + timeout
    last: object = "nothing yet"
    while True:
        try:
            value = check()
        except AssertionError:
            raise  # a check that already failed is an answer, not a reason to wait
        except Exception as exc:  # shown at the deadline
            last = f"{type(exc).__name__}: {exc}"
        else:
            if until(value):
                return value
            last = value
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"waited {timeout:g} s for {what}; last: {str(last)[:500]}")
        time.sleep(interval)
