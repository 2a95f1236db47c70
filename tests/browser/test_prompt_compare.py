"""The prompt page and the compare page in real Chromium: from a sample to its prompt's page, the
reward chart (keyboard and click open a step's sample), any two responses compared through the
form with JavaScript on and off, and compare's flipped prompts opened side by side. Expected
values come from the records below."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.a11y import axe_violations
from tests.support.browser import Tab, save_screenshot
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

P = "<|im_start|>user\nHow many legs has a spider?<|im_end|>\n<|im_start|>assistant\n"
Q = "<|im_start|>user\nName a prime.<|im_end|>\n"
PID = format_prompt_id(prompt_id_of_value(P))
QID = format_prompt_id(prompt_id_of_value(Q))
# step -> [(prompt, reward, response)]; P is failed at step 1 and solved at step 3.
STEPS = {
    1: [(P, 0.0, "Spiders have six legs."), (P, 0.0, "Six."), (Q, 1.0, "7")],
    2: [(Q, 1.0, "11")],
    3: [(Q, 0.0, "9"), (P, 1.0, "Spiders have eight legs."), (P, 1.0, "<b>Eight</b>")],
}


# What `viewer` (conftest.py) serves.
SERVED = {
    ("train", step): [
        sample(i, prompt=p, reward=r, response=text, response_length=len(text), group_index=0)
        for i, (p, r, text) in enumerate(rows)
    ]
    for step, rows in STEPS.items()
}


def test_a_sample_leads_to_its_prompts_page_and_the_chart_opens_a_step(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url("/train/3/sample/1/"))
    page.locator("#rv-prompt-link").click()
    expect(page).to_have_url(viewer.url(f"/train/prompt/{PID}/"))
    rows = page.locator("#rv-prompt-steps tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator('[data-field="mean-reward"]')).to_have_text("0")
    expect(rows.nth(1).locator('[data-field="mean-reward"]')).to_have_text("1")
    chart = page.locator("#rv-prompt-chart")
    expect(chart.locator("g.rv-trend-line circle.rv-trend-point")).to_have_count(2)  # chart.js
    chart.focus()
    page.keyboard.press("Home")  # the first step where the prompt appears: step 1
    expect(page.locator("#rv-prompt-crosshair")).to_be_visible()
    save_screenshot(page, "prompt-page")
    page.keyboard.press("Enter")
    expect(page).to_have_url(viewer.url("/train/1/sample/0/"))
    tab.assert_clean()


def step_means(prompt: str) -> dict[int, float]:
    """The prompt's mean reward in each step it appears in, from STEPS."""
    rewards: dict[int, list[float]] = {}
    for step, rows in STEPS.items():
        rewards.update(
            {step: [r for p, r, _ in rows if p == prompt]}
            if any(p == prompt for p, _, _ in rows)
            else {}
        )
    return {step: sum(r) / len(r) for step, r in rewards.items()}


def test_the_prompt_page_lists_its_steps_as_a_strip_of_mean_rewards(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    for prompt, pid in ((P, PID), (Q, QID)):
        page.goto(viewer.url(f"/train/prompt/{pid}/"))
        cells = page.locator("#rv-prompt-strip .rv-strip-cell")
        means = step_means(prompt)
        expect(cells).to_have_count(len(means))
        for cell, (step, reward) in zip(cells.all(), means.items(), strict=True):
            expect(cell).to_have_attribute("data-step", str(step))
            assert float(cell.locator(".rv-strip-reward").inner_text()) == reward
            tone = (
                "rv-tone-right"
                if reward == 1
                else "rv-tone-wrong"
                if reward == 0
                else "rv-tone-scale"
            )
            expect(cell).to_have_class(re.compile(tone))
        # The per-sample links are folded behind one control.
        samples = page.locator("#rv-prompt-samples")
        expect(samples).not_to_have_attribute("open", "")
        expect(samples.locator("a.rv-prompt-sample").first).to_be_hidden()
    # A cell opens the prompt's first sample in its step: Q's first in step 3 is line 1.
    page.locator('#rv-prompt-strip .rv-strip-cell[data-step="3"]').click()
    expect(page).to_have_url(viewer.url("/train/3/sample/0/"))
    tab.assert_clean()


def test_the_strip_scrolls_inside_its_box_on_a_phone(viewer: ServerProcess, browser: Browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(viewer.url(f"/train/prompt/{QID}/"))
        strip = page.locator("#rv-prompt-strip .rv-strip-scroll")
        expect(strip).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = strip.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390
    finally:
        context.close()


def test_any_two_responses_compared_word_by_word(viewer: ServerProcess, any_tab: Tab):
    page = any_tab.page
    page.goto(viewer.url(f"/train/prompt/{PID}/"))
    pair = page.locator("#rv-pair")
    left, right = pair.locator('[data-side="a"]'), pair.locator('[data-side="b"]')
    # Step 3's two samples of P are both right (no best against worst): the earliest and the
    # latest appearance, step 1 line 1 and step 3 line 3.
    expect(left.locator("h3 a")).to_have_text("step 1, line 1")
    expect(right.locator("h3 a")).to_have_text("step 3, line 3")
    expect(right.locator("pre")).to_have_text("<b>Eight</b>")  # shown as text
    assert page.locator("#rv-pair pre b").count() == 0
    page.select_option('#rv-pair-form select[name="a"]', "1:0")
    page.select_option('#rv-pair-form select[name="b"]', "3:1")
    page.locator("#rv-pair-form button").click()
    expect(right.locator("h3 a")).to_have_text("step 3, line 2")
    expect(left.locator("del.rv-diff-del")).to_have_text(["six "])
    expect(right.locator("ins.rv-diff-ins")).to_have_text(["eight "])
    left_box, right_box = left.bounding_box(), right.bounding_box()
    assert left_box and right_box and left_box["x"] + left_box["width"] <= right_box["x"]
    any_tab.assert_clean()


def test_compare_lists_the_flipped_prompts_and_opens_one_side_by_side(
    viewer: ServerProcess, any_tab: Tab
):
    page = any_tab.page
    page.goto(viewer.url("/train/3/stats/"))
    page.locator("#rv-compare-link").click()  # step 3 against step 2
    expect(page.locator("#rv-compare-a")).to_have_text("step 2")
    page.select_option('#rv-compare-pick select[name="a"]', "1")  # compares at once (compare.js)
    if not any_tab.scripts:
        page.locator("#rv-compare-pick button").click()
    expect(page.locator("#rv-compare-a")).to_have_text("step 1")
    flips = page.locator("tr.rv-flip")
    # P: 0 -> 1 and Q: 1 -> 0, the same size of change: in prompt id order.
    expect(flips).to_have_count(2)
    order = sorted([PID, QID])
    assert [flips.nth(i).get_attribute("data-prompt-id") for i in range(2)] == order
    overall = page.locator('#rv-compare-rows tr[data-dataset="(overall)"]')
    expect(overall.locator('[data-field="mean_reward"]')).to_have_text("0.3333 / 0.6667")
    page.locator(f'tr[data-prompt-id="{PID}"] a.rv-flip-pair').click()
    pair = page.locator("#rv-pair")
    expect(pair.locator('[data-side="a"] h3 a')).to_have_text("step 1, line 1")
    expect(pair.locator('[data-side="b"] h3 a')).to_have_text("step 3, line 2")
    save_screenshot(page, "compare-page")
    any_tab.assert_clean()


def test_both_pages_pass_axe_in_light_and_dark(viewer: ServerProcess, browser: Browser):
    for theme in ("light", "dark"):
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, color_scheme=theme, bypass_csp=True
        )  # axe is injected as an inline script, which the pages' CSP refuses
        try:
            page = context.new_page()
            for path in (f"/train/prompt/{PID}/", f"/train/compare/?a=1&b=3&prompt={PID}"):
                page.goto(viewer.url(path))
                expect(page.locator("html")).to_have_attribute("data-theme", theme)
                page.wait_for_load_state("networkidle")
                assert page.locator("h1").count() == 1
                assert axe_violations(page) == [], (theme, path)
        finally:
            context.close()
