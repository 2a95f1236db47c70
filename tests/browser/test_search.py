"""The search page in real Chromium: it fills in slice after slice (`lines=` makes the slices
small and their number certain), its curve lists one step's hits on a click, a hit opens its
sample with the match marked, and ←/→ there move among the matches across steps. The latest
step's hits come first, each with its reward and status chips and answer check, under the total
of matches. Without a script the first slice is on the page and "Search on" goes on.
Expectations come from RECORDS."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser import Tab, save_screenshot, url_path
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEPS = range(1, 7)
PER_STEP = 4
HOSTILE = '<b>bold</b> "quoted" I APOLOGIZE\nnext line'


def response(step: int, i: int) -> str:
    if (step, i) == (2, 1):
        return HOSTILE
    # Step s: its first s - 1 samples apologise (the share rises), the rest answer plainly.
    return f"I apologize, step {step} sample {i}" if i < step - 1 else f"answer {i}"


MATCHES = [(s, i) for s in STEPS for i in range(PER_STEP) if "APOLOGIZE" in response(s, i).upper()]
NEWEST = sorted(MATCHES, key=lambda place: (-place[0], place[1]))  # the default order


def record(step: int, i: int) -> dict[str, object]:
    text = response(step, i) + (" so \\boxed{7}" if (step, i) == (6, 0) else "")
    status = "truncated" if (step, i) == (6, 1) else "completed"
    return sample(i, rollout_id=step, response=text, label="7", status=status)


# What `viewer` (conftest.py) serves.
SERVED = {("train", step): [record(step, i) for i in range(PER_STEP)] for step in STEPS}


def search_url(viewer: ServerProcess, query: str) -> str:
    return viewer.url(f"/train/search/?{query}")


def at(step: int, position: int) -> re.Pattern[str]:
    """The URL of a sample opened from the search for "apologize"."""
    return re.compile(rf".*/train/{step}/sample/{position}/\?q=apologize$")


def hit_places(tab: Tab, visible_only: bool = False) -> list[tuple[int, int]]:
    items = tab.page.locator("#rv-hits .rv-hit" + (":visible" if visible_only else ""))
    places = []
    for href in items.locator("a").evaluate_all("links => links.map(a => a.href)"):
        path = urlsplit(href).path.rstrip("/").split("/")
        places.append((int(path[-3]), int(path[-1])))
    return places


def test_the_page_fills_in_slice_by_slice_with_its_curve(viewer: ServerProcess, tab: Tab):
    page = tab.page
    answers: list[str] = []
    page.on("request", lambda r: answers.append(r.url) if "/search?" in r.url else None)
    page.goto(search_url(viewer, "q=apologize&lines=4"))  # 24 lines: 6 answers of 4
    expect(page.locator("#rv-search-progress")).to_have_attribute("data-done", "true")
    assert len(answers) == 5  # the first answer came with the page
    assert hit_places(tab) == NEWEST
    rows = page.locator("#rv-search-steps-table tbody tr")
    expect(rows).to_have_count(len(STEPS))
    matches = [int(m) for m in rows.evaluate_all("rs => rs.map(r => r.dataset.matches)")]
    assert matches == [sum(1 for s, _ in MATCHES if s == step) for step in STEPS]
    expect(page.locator("#rv-search-chart .rv-trend-point")).to_have_count(len(STEPS))
    expect(page.locator("#rv-search-status")).to_have_text("Searched all 6 steps")
    # Sample text is text: the hostile response's markup is not markup.
    assert page.locator("#rv-hits b").count() == 0
    expect(page.locator("#rv-hits")).to_contain_text("<b>bold</b>")
    save_screenshot(page, "search")
    tab.assert_clean()


def test_a_click_on_the_curve_lists_that_steps_hits(viewer: ServerProcess, tab: Tab):
    page = tab.page
    # The list holds steps 2 and 3 only.
    page.goto(search_url(viewer, "q=apologize&limit=3&order=oldest"))
    expect(page.locator("#rv-search-progress")).to_have_attribute("data-done", "true")
    assert hit_places(tab) == MATCHES[:3]
    page.locator('#rv-search-chart a.rv-trend-point-link[data-step="6"]').click()
    assert urlsplit(page.url).fragment == "step=6"
    six = [m for m in MATCHES if m[0] == 6]
    expect(page.locator("#rv-hits .rv-hit:visible")).to_have_count(len(six))  # fetched for it
    assert hit_places(tab, visible_only=True) == six
    expect(page.locator("#rv-hits-filter")).to_have_text(f"step 6: {len(six)} matching")
    page.locator("#rv-hits-all").click()
    expect(page.locator("#rv-hits .rv-hit:visible")).to_have_count(3 + len(six))
    tab.assert_clean()


def test_a_hit_opens_its_sample_marked_and_arrows_move_among_matches(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(search_url(viewer, "q=apologize&order=oldest"))
    page.locator("#rv-hits .rv-hit a").nth(2).click()  # step 3, sample 0
    assert url_path(page).endswith("/train/3/sample/0/")
    marks = page.locator('#rv-sample .rv-section[data-field="response"] mark.rv-search-mark')
    expect(marks.first).to_have_text("apologize")
    expect(page.locator("#rv-search-nav")).to_be_visible()
    save_screenshot(page, "search-sample")
    assert MATCHES[2:6] == [(3, 0), (3, 1), (4, 0), (4, 1)]
    for step, position in MATCHES[3:6]:  # within step 3, then into step 4: a whole page
        page.keyboard.press("ArrowRight")
        page.wait_for_url(at(step, position))
        expect(page.locator("#rv-step")).to_have_value(f"/train/{step}/")
        expect(marks.first).to_have_text("apologize")
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(at(4, 0))
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(at(3, 1))
    expect(marks.first).to_have_class("rv-search-mark rv-current-mark")
    tab.assert_clean()


def test_without_a_script_the_first_slice_is_there_and_search_on_goes_on(
    viewer: ServerProcess, browser: Browser
):
    context = browser.new_context(java_script_enabled=False)
    try:
        tab = Tab.attach(context.new_page(), scripts=False)
        page = tab.page
        page.goto(search_url(viewer, "q=apologize&lines=12&order=oldest"))
        assert hit_places(tab) == [m for m in MATCHES if m[0] <= 3]
        shown = len([m for m in MATCHES if m[0] <= 3])
        expect(page.locator("#rv-hits-total")).to_have_text(
            f"{shown} of {shown} matches shown, still counting\u2026"
        )
        page.locator("#rv-search-more").click()
        assert hit_places(tab) == [m for m in MATCHES if m[0] > 3]
        expect(page.locator("#rv-search-progress")).to_have_attribute("data-done", "true")
        tab.assert_clean()
    finally:
        context.close()


def test_hits_show_reward_status_answer_and_the_total_newest_first(viewer: ServerProcess, tab: Tab):
    page = tab.page
    # Slices of 4 lines: step 6 comes with the page, step 5's hits from the script.
    page.goto(search_url(viewer, "q=apologize&limit=6&lines=4"))
    expect(page.locator("#rv-search-progress")).to_have_attribute("data-done", "true")
    assert hit_places(tab) == NEWEST[:6] == [(6, 0), (6, 1), (6, 2), (6, 3), (5, 0), (5, 1)]
    expect(page.locator("#rv-hits-total")).to_have_text(f"6 of {len(MATCHES)} matches shown")
    hits = page.locator("#rv-hits .rv-hit")
    reward = '.rv-chip[data-field="reward"]'
    status = '.rv-chip[data-field="status"]'
    # (6, 0): reward 0, completed, and its \boxed{7} is the label's 7.
    expect(hits.nth(0).locator(reward)).to_have_text("reward 0")
    expect(hits.nth(0).locator(reward)).to_have_attribute("data-tone", "wrong")
    expect(hits.nth(0).locator(status)).to_have_text("status completed")
    expect(hits.nth(0).locator(".rv-hit-match")).to_have_text("\u2713 answer")
    # (6, 1): reward 1, truncated, no final answer to check.
    expect(hits.nth(1).locator(reward)).to_have_text("reward 1")
    expect(hits.nth(1).locator(reward)).to_have_attribute("data-tone", "right")
    expect(hits.nth(1).locator(status)).to_have_text("status truncated")
    expect(hits.nth(1).locator(status)).to_have_attribute("data-tone", "bad")
    expect(hits.nth(1).locator(".rv-hit-match")).to_have_count(0)
    # (5, 1), drawn by the script from the JSON: reward 1, completed.
    expect(hits.nth(5).locator(reward)).to_have_text("reward 1")
    expect(hits.nth(5).locator(status)).to_have_attribute("data-tone", "ok")
    save_screenshot(page, "search-hits")
    tab.assert_clean()
