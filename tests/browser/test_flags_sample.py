"""Flags (issue 30) on the sample page in real Chromium: a chip per flag with its reason, the
next / previous flagged links and keys moving to the right samples, `flag=` kept by the controls
and the step selector, and axe on a page with chips, light and dark. Expectations come from the
records written here (an empty response and a cut one in each step)."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.sync_api import Browser, expect

from tests.support.a11y import axe_violations_on
from tests.support.browser import Tab, blur, mark_document, same_document, shown, url_query
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

EMPTY_AT, CUT_AT, RECORDS = 2, 5, 8


def step_records(empty_at: int, cut_at: int) -> list[dict]:
    records = []
    for i in range(RECORDS):
        extra: dict = {}
        if i == empty_at:
            extra["response"] = ""
        if i == cut_at:
            extra["status"] = "truncated"
        records.append(sample(i, **extra))
    return records


# Step 4 has its empty response elsewhere: moving there with flag=empty shows another position.
SERVED = {
    ("train", 3): step_records(EMPTY_AT, CUT_AT),
    ("train", 4): step_records(6, CUT_AT),
}


def sample_url(viewer: ServerProcess, step: int, position: int, query: str = "") -> str:
    return viewer.url(f"/train/{step}/sample/{position}/{query}")


def twin_flags(tab: Tab, viewer: ServerProcess, step: int, position: int) -> list[dict]:
    response = tab.page.request.get(viewer.url(f"/api/view/train/{step}/sample/{position}"))
    assert response.ok
    return response.json()["flags"]


def test_each_flag_is_a_chip_with_its_reason_on_hover_and_in_words(viewer, tab: Tab):
    page = tab.page
    page.goto(sample_url(viewer, 3, CUT_AT))
    (flag,) = twin_flags(tab, viewer, 3, CUT_AT)
    assert flag["name"] == "cut"
    chip = page.locator("#rv-sample-head .rv-flag-chip")
    expect(chip).to_have_count(1)
    expect(chip).to_be_visible()
    expect(chip).to_have_attribute("data-flag", "cut")
    expect(chip).to_have_attribute("title", flag["reason"])
    expect(page.locator('#rv-flag-reasons [data-flag="cut"]')).to_have_text(
        f"cut: {flag['reason']}"
    )
    page.goto(sample_url(viewer, 3, 0))  # a plain sample: no chip, no reasons line
    expect(page.locator("#rv-sample-head .rv-flag-chip")).to_have_count(0)
    expect(page.locator("#rv-flag-reasons")).to_have_count(0)
    tab.assert_clean()


def test_next_and_previous_flagged_move_by_link_and_key(viewer, tab: Tab):
    page = tab.page
    page.goto(sample_url(viewer, 3, 0))
    expect(page.locator("#rv-prev-flagged")).to_have_attribute("aria-disabled", "true")
    mark_document(page)
    page.locator("#rv-next-flagged").click()
    expect(page.locator("article#rv-sample")).to_have_attribute("data-position", str(EMPTY_AT))
    assert same_document(page)  # swapped in place, as Previous / Next do
    blur(page)
    page.keyboard.press("f")
    expect(page.locator("article#rv-sample")).to_have_attribute("data-position", str(CUT_AT))
    expect(page.locator("#rv-next-flagged")).to_have_attribute("aria-disabled", "true")
    page.keyboard.press("f")  # nothing after the last flagged sample: it stays
    page.keyboard.press("Shift+F")
    expect(page.locator("article#rv-sample")).to_have_attribute("data-position", str(EMPTY_AT))
    assert url_query(page) == {}
    assert same_document(page)
    # In another order, "next" follows it: by reward descending (sample(i)'s reward is i % 2;
    # stable, so file order among equals) from sample 3 and from sample 7.
    order = sorted(range(RECORDS), key=lambda i: -(SERVED["train", 3][i]["reward"]))
    flagged = {EMPTY_AT, CUT_AT}
    for start in (3, 7):
        after = order[order.index(start) + 1 :]
        expected = next(p for p in after if p in flagged)
        page.goto(sample_url(viewer, 3, start, "?sort=reward&order=desc"))
        blur(page)
        page.keyboard.press("f")
        expect(page.locator("article#rv-sample")).to_have_attribute("data-position", str(expected))
    assert url_query(page) == {"sort": ["reward"], "order": ["desc"]}
    tab.assert_clean()


def test_a_flag_filter_stays_through_the_controls_and_the_step_selector(viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/3/?flag=empty"))
    assert shown(page) == (EMPTY_AT, 1, 1)
    expect(page.locator("#rv-flag-filter")).to_contain_text("flagged empty")
    page.locator("#rv-sort").select_option("reward")
    expect(page.locator("#rv-sort")).to_have_value("reward")
    page.wait_for_function("() => location.search.includes('sort=reward')")
    assert url_query(page)["flag"] == ["empty"]
    step_4 = page.locator('#rv-step option[data-step="4"]').get_attribute("value")
    assert step_4
    page.locator("#rv-step").select_option(value=step_4)
    page.wait_for_url("**/train/4/**")
    expect(page.locator("article#rv-sample")).to_have_attribute("data-position", "6")
    assert url_query(page)["flag"] == ["empty"]
    page.locator("#rv-flag-filter").click()  # the chip clears the filter, on the same sample
    page.wait_for_function("() => !location.search.includes('flag=')")
    expect(page.locator("article#rv-sample")).to_have_attribute("data-total", str(RECORDS))
    expect(page.locator("article#rv-sample")).to_have_attribute("data-position", "6")
    assert url_query(page) == {"sort": ["reward"]}
    tab.assert_clean()


def test_unknown_flag_is_a_400_page(viewer, tab: Tab):
    response = tab.page.goto(viewer.url("/train/3/?flag=nonsense"))
    assert response is not None and response.status == 400
    expect(tab.page.locator("body")).to_contain_text("unknown flag")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violation_with_flag_chips(
    browser: Browser, viewer: ServerProcess, theme: Literal["light", "dark"]
):
    urls = [
        viewer.url(path) for path in (f"/train/3/sample/{CUT_AT}/?flag=cut", "/train/3/group/2/")
    ]
    assert axe_violations_on(browser, urls, theme, ".rv-flag-chip", idle=True) == []
