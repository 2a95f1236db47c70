"""tests/support/wait.py: a wait returns what it waited for, or fails loudly at its deadline."""

from __future__ import annotations

import itertools

import pytest

from tests.support.wait import WaitTimeout, wait_for


def test_the_first_value_that_holds_is_returned():
    counter = itertools.count()
    assert wait_for(lambda: next(counter), "the third count", until=lambda n: n == 2) == 2


def test_the_deadline_fails_naming_what_and_the_last_value():
    with pytest.raises(WaitTimeout, match=r"waited 0.05 s for the answer; last: \{'done': False\}"):
        wait_for(lambda: {"done": False}, "the answer", 0.05, until=lambda d: d["done"])


def test_an_exception_is_waited_through_and_shown_at_the_deadline():
    def broken():
        raise ConnectionRefusedError("not up yet")

    with pytest.raises(WaitTimeout, match="ConnectionRefusedError: not up yet"):
        wait_for(broken, "the server", 0.05)


def test_a_failed_assertion_in_the_check_fails_at_once():
    calls = []

    def check():
        calls.append(1)
        raise AssertionError("wrong status")

    with pytest.raises(AssertionError, match="wrong status"):
        wait_for(check, "a page", 10)
    assert len(calls) == 1
