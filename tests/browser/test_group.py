"""The group page in real Chromium, with JavaScript off as well as on: the member table sorts by
its header links, the sample the user came from stays marked and in view, and two answers are
compared side by side with their different words marked. Expectations come from the records."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.browser import Tab, save_screenshot, url_query
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEP = 4
LONG = " ".join(f"step {i} of the reasoning." for i in range(400))  # a tall row
# (reward, status, response_length, response); the label is "12"
MEMBERS = [
    (0.0, "completed", 900, LONG + " so \\boxed{11}"),
    (1.0, "completed", 350, LONG + " so \\boxed{12}"),
    (0.0, "truncated", 4096, LONG),
    (1.0, "completed", 200, "short: <answer>12</answer> <b>bold?</b>"),
    (0.0, "completed", 610, LONG + " so \\boxed{13}"),
    (1.0, "completed", 480, LONG + " so \\boxed{ 12 }"),
    (0.0, "completed", 700, LONG + " so \\boxed{10}"),
    (0.0, "completed", 820, LONG + " so \\boxed{9}"),
]
RECORDS = [
    sample(i, reward=r, status=s, response_length=n, response=text, group_index=3, label="12")
    for i, (r, s, n, text) in enumerate(MEMBERS)
]


SERVED = {("train", STEP): RECORDS}  # what `viewer` (conftest.py) serves


def group_url(viewer: ServerProcess, query: str = "") -> str:
    return viewer.url(f"/train/{STEP}/group/3/{query}")


def positions(tab: Tab) -> list[int]:
    rows = tab.page.locator("#rv-members tbody.rv-member")
    return [int(r.get_attribute("data-position") or -1) for r in rows.all()]


def test_member_table_sorts_by_its_header_links(viewer: ServerProcess, any_tab: Tab):
    page = any_tab.page
    page.goto(group_url(viewer, "?from=6"))
    assert positions(any_tab) == list(range(8))
    page.locator('th[data-sort="reward"] a').click()
    expect(page.locator('th[data-sort="reward"]')).to_have_attribute("aria-sort", "descending")
    by_reward = sorted(range(8), key=lambda i: -MEMBERS[i][0])  # stable: file order in ties
    assert positions(any_tab) == by_reward
    assert url_query(page)["from"] == ["6"]  # the mark survives a sort
    page.locator('th[data-sort="length"] a').click()
    assert positions(any_tab) == sorted(range(8), key=lambda i: -MEMBERS[i][2])
    page.locator('th[data-sort="length"] a').click()
    expect(page.locator('th[data-sort="length"]')).to_have_attribute("aria-sort", "ascending")
    assert positions(any_tab) == sorted(range(8), key=lambda i: MEMBERS[i][2])
    page.locator('th[data-sort="match"] a').click()
    matches = [page.locator(f"#rv-member-{p} td[data-field=match]").get_attribute("data-match")
               for p in positions(any_tab)]  # fmt: skip
    assert matches == ["yes"] * 3 + ["no"] * 4 + ["unknown"]
    expect(page.locator("tbody.rv-member-from")).to_have_attribute("data-position", "6")
    any_tab.assert_clean()


def test_the_sample_you_came_from_is_marked_and_in_view(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.set_viewport_size({"width": 800, "height": 900})
    page.goto(group_url(viewer, "?from=7"))
    row = page.locator("#rv-member-7")
    expect(row).to_have_attribute("aria-current", "true")
    expect(row.locator(".rv-from-mark")).to_be_visible()
    expect(page.locator("tbody[aria-current]")).to_have_count(1)
    # Eight rows fit on one screen: the whole table, highlighted row included, is in view.
    box = row.locator("tr").first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 800, f"the page scrolls sideways: {width} px"
    save_screenshot(page, "group-800")
    tab.assert_clean()


def test_two_answers_compared_side_by_side_with_their_differences(
    viewer: ServerProcess, any_tab: Tab
):
    page = any_tab.page
    page.goto(group_url(viewer, "?from=1"))
    page.locator("#rv-member-0 a.rv-compare-link").click()
    compare = page.locator("#rv-compare")
    expect(compare).to_be_visible()
    left, right = compare.locator('[data-side="a"]'), compare.locator('[data-side="b"]')
    expect(left).to_have_attribute("data-position", "1")
    expect(right).to_have_attribute("data-position", "0")
    expect(left.locator("del.rv-diff-del")).to_have_text(["\\boxed{12}"])
    expect(right.locator("ins.rv-diff-ins")).to_have_text(["\\boxed{11}"])
    left_box, right_box = left.bounding_box(), right.bounding_box()
    assert left_box and right_box and left_box["x"] + left_box["width"] <= right_box["x"]
    assert abs(left_box["y"] - right_box["y"]) < 2  # side by side, not stacked
    # Any two through the form, markup in a response shown as text.
    page.select_option('#rv-compare-form select[name="a"]', "3")
    page.select_option('#rv-compare-form select[name="b"]', "5")
    page.locator("#rv-compare-form button").click()
    expect(compare.locator('[data-side="a"]')).to_have_attribute("data-position", "3")
    expect(compare.locator('[data-side="a"] pre')).to_contain_text("<b>bold?</b>")
    assert page.locator("#rv-compare b").count() == 0
    save_screenshot(page, "group-compare")
    any_tab.assert_clean()
