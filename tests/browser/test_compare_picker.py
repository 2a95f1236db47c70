"""The compare page's step picker in real Chromium (issue 29, item 12): it lists the bucket's
steps newest first with the compared ones chosen; picking a step compares at once with the
mouse (or with the button when JavaScript is off), the arrow keys only move the choice and
Enter compares; each difference reads with its sign. Expected values come from the records."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import Tab
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

# step -> rewards; every sample completed, 10 tokens long.
REWARDS = {1: [0.0, 0.0, 0.0, 0.0], 2: [0.0, 0.0, 1.0, 1.0], 3: [1.0, 1.0, 1.0, 0.0]}

# What `viewer` (conftest.py) serves.
SERVED = {
    ("train", step): [sample(i, reward=r, response_length=10) for i, r in enumerate(rewards)]
    for step, rewards in REWARDS.items()
}

A = '#rv-compare-pick select[name="a"]'
B = '#rv-compare-pick select[name="b"]'


def mean(step: int) -> float:
    return sum(REWARDS[step]) / len(REWARDS[step])


def test_picking_a_step_compares_it(viewer: ServerProcess, any_tab: Tab):
    page = any_tab.page
    page.goto(viewer.url("/train/compare/?a=1&b=3"))
    expect(page.locator(f"{A} option")).to_have_text(["3", "2", "1"])  # newest first
    expect(page.locator(A)).to_have_value("1")
    expect(page.locator(B)).to_have_value("3")
    page.select_option(A, "2")
    if not any_tab.scripts:
        page.locator("#rv-compare-pick button").click()
    expect(page).to_have_url(re.compile(r"[?&]a=2&b=3"))
    expect(page.locator("#rv-compare-a")).to_have_text("step 2")
    expect(page.locator(A)).to_have_value("2")
    overall = page.locator('#rv-compare-rows tr[data-dataset="(overall)"]')
    # 0.5 -> 0.75: a rise, signed and marked better.
    change = overall.locator('[data-field="mean_reward-difference"] span')
    expect(change).to_have_text(f"+{mean(3) - mean(2):g}")
    expect(change).to_have_class("rv-change-up")
    any_tab.assert_clean()


def test_the_arrow_keys_move_the_choice_and_enter_compares(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/compare/?a=1&b=3"))
    page.locator(B).focus()
    page.keyboard.press("ArrowDown")  # 3 -> 2: chosen, not yet compared
    expect(page.locator(B)).to_have_value("2")
    expect(page.locator("#rv-compare-b")).to_have_text("step 3")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]a=1&b=2"))
    expect(page.locator("#rv-compare-b")).to_have_text("step 2")
    change = page.locator(
        '#rv-compare-rows tr[data-dataset="(overall)"] [data-field="mean_reward-difference"] span'
    )
    expect(change).to_have_text(f"+{mean(2) - mean(1):g}")
    tab.assert_clean()


def test_a_bad_step_in_the_url_says_what_is_wrong(viewer: ServerProcess, tab: Tab):
    page = tab.page
    response = page.goto(viewer.url("/train/compare/?a=x1&b=3"))
    assert response is not None and response.status == 400
    expect(page.locator("main")).to_contain_text("a must be STEP or RUN:STEP, got 'x1'")
