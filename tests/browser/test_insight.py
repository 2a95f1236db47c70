"""The step statistics page in real Chromium: histogram bars filter, scatter points open samples,
and a group is one click away from a sample. Expectations come from the records written here."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.browser import (
    Tab,
    position_text,
    save_screenshot,
    shown,
    url_path,
    url_query,
    walk_positions,
)
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEP = 2
# Response lengths spread over 0..1000 so a 20-bin histogram has several non-empty bars;
# rewards 0/1 (one bar per value); every fifth sample truncated.
LENGTHS = [13, 870, 402, 55, 999, 640, 77, 310, 512, 5, 730, 260, 91, 455, 1000, 38]
RECORDS = [
    sample(
        i,
        reward=float(i % 3 == 0),
        response_length=n,
        status="truncated" if i % 5 == 4 else "completed",
        group_index=i // 4,
        response=f"response of sample {i}",
    )
    for i, n in enumerate(LENGTHS)
]


SERVED = {("train", 0): [sample(0)], ("train", STEP): RECORDS}  # what `viewer` (conftest.py) serves


def stats_url(viewer: ServerProcess) -> str:
    return viewer.url(f"/train/{STEP}/stats/")


def test_clicking_a_reward_bar_shows_exactly_the_samples_with_that_reward(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(stats_url(viewer))
    bar = page.locator('#rv-hist-reward a.rv-bar-link[data-range="reward:[1,1]"]')
    expected = [i for i, r in enumerate(RECORDS) if r["reward"] == 1.0]
    expect(bar).to_have_attribute("data-count", str(len(expected)))
    save_screenshot(page, "step-stats")
    bar.locator("rect.rv-bar-hit").click()
    expect(page.locator("#rv-position")).to_have_text(position_text(1, len(expected)))
    assert url_query(page)["range"] == ["reward:[1,1]"]
    expect(page.locator("#rv-range-chip")).to_contain_text("reward = 1")
    assert walk_positions(page) == expected
    # The chip clears the filter and keeps the sample.
    position = shown(page)[0]
    page.locator("#rv-range-chip").click()
    expect(page.locator("#rv-position")).to_have_text(position_text(position + 1, len(RECORDS)))
    tab.assert_clean()


def test_clicking_a_length_bar_filters_to_its_bin(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(stats_url(viewer))
    bars = page.locator("#rv-hist-response_length a.rv-bar-link")
    assert bars.count() == 20
    low, high = min(LENGTHS), max(LENGTHS)
    width = (high - low) / 20
    # The bar holding 402 and 455: [low + 9w, low + 10w) is bin 9 of 20 (w = 49.75).
    bin_index = int((402 - low) / width)
    expected = [i for i, n in enumerate(LENGTHS) if int((n - low) / width) == bin_index]
    target = bars.nth(bin_index)
    expect(target).to_have_attribute("data-count", str(len(expected)))
    target.locator("rect.rv-bar-hit").click()
    expect(page.locator("#rv-position")).to_have_text(position_text(1, len(expected)))
    assert walk_positions(page) == expected
    tab.assert_clean()


def test_a_scatter_point_opens_its_sample_and_truncated_points_are_marked(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(stats_url(viewer))
    points = page.locator("#rv-scatter a.rv-point-link")
    expect(points).to_have_count(len(RECORDS))
    truncated = page.locator("#rv-scatter circle.rv-point-truncated")
    assert truncated.count() == sum(r["status"] == "truncated" for r in RECORDS)
    target = 9  # the shortest response
    page.locator(f'#rv-scatter a.rv-point-link[data-position="{target}"] circle').click()
    page.wait_for_url(f"**/train/{STEP}/sample/{target}/")
    assert shown(page)[0] == target
    expect(page.locator('section[data-field="response"]')).to_contain_text(
        f"response of sample {target}"
    )
    tab.assert_clean()


def test_a_sample_links_to_its_group_table_with_itself_highlighted(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(f"/train/{STEP}/sample/5/"))
    page.locator("#rv-group-link").click()
    page.wait_for_url(f"**/train/{STEP}/group/1/?from=5")
    members = page.locator("#rv-members tbody.rv-member")
    expected = [i for i, r in enumerate(RECORDS) if r["group_index"] == 1]
    expect(members).to_have_count(len(expected))
    assert [int(m.get_attribute("data-position") or -1) for m in members.all()] == expected
    expect(page.locator("tbody.rv-member-from")).to_have_attribute("data-position", "5")
    # The row you came from is open; the others open on a click, without script.
    expect(page.locator("#rv-member-5 details")).to_contain_text("response of sample 5")
    other = page.locator(f"#rv-member-{expected[0]} details")
    expect(other.locator("section")).to_be_hidden()
    other.locator("summary").click()
    expect(other).to_contain_text(f"response of sample {expected[0]}")
    # From the group back to one of its samples.
    page.locator(f"#rv-member-{expected[-1]} a.rv-member-link").click()
    page.wait_for_url(f"**/sample/{expected[-1]}/")
    assert url_path(page).endswith(f"/train/{STEP}/sample/{expected[-1]}/")
    tab.assert_clean()
