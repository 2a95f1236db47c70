"""The statistics page's layout in real Chromium at 1440 and 800 px: the card grid leaves no
empty slot, shares keep their "%", histograms show their counts and a y axis, and the scatter
keeps round points, none cut off at an edge. Expectations come from the records written here."""

from __future__ import annotations

import math

import pytest
from playwright.sync_api import expect

from rollouts.store import OUTLIER_FENCE
from tests.support.browser import Tab, save_screenshot
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEP = 1
# Lengths over 0..4096 (the max length, truncated), rewards 0/1 with one 0.5: edge points on
# all four sides of the scatter.
RECORDS = [
    sample(
        i,
        reward=[0.0, 1.0, 0.5][i % 3] if i != 7 else 1.0,
        response_length=4096 if i % 5 == 0 else 64 * i * (i != 1),
        status="truncated" if i % 5 == 0 else "completed",
        group_index=i // 4,
    )
    for i in range(40)
]


# A step whose lengths are 1..100 and three 4,096-token outliers: its histogram leaves them out.
OUTLIER_STEP = 2
BODY = list(range(1, 101))
OUTLIERS = [4096] * 3
OUTLIER_RECORDS = [
    sample(i, reward=float(i % 2), response_length=length, group_index=i // 4)
    for i, length in enumerate(BODY + OUTLIERS)
]

SERVED = {("train", STEP): RECORDS, ("train", OUTLIER_STEP): OUTLIER_RECORDS}


@pytest.mark.parametrize("width", [1440, 800])
def test_stats_page_layout_reads_at_a_glance(viewer: ServerProcess, tab: Tab, width: int):
    page = tab.page
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(viewer.url(f"/train/{STEP}/stats/"))
    # The card grid: every row full (no empty slot).
    boxes = [c.bounding_box() for c in page.locator("#rv-stat-cards > .rv-card").all()]
    rows: dict[int, int] = {}
    for box in boxes:
        assert box is not None
        rows[round(box["y"])] = rows.get(round(box["y"]), 0) + 1
    assert len(set(rows.values())) == 1, f"rows of unequal length: {rows}"
    # A share stays on one line with its "%".
    for dd in page.locator('dd[data-stat$="rate"], dd[data-stat="zero-signal"]').all():
        box = dd.bounding_box()
        assert box is not None and box["height"] < 30, dd.inner_text()
        assert dd.inner_text().endswith("\N{NO-BREAK SPACE}%")
    # Integers as integers.
    expect(page.locator('dd[data-stat="length-max"]')).to_have_text("4096")
    # Histograms: a count on each non-empty bar and a y axis of counts.
    bars = page.locator("#rv-hist-response_length a.rv-bar-link")
    counts = [int(b.get_attribute("data-count") or 0) for b in bars.all()]
    shown = page.locator("#rv-hist-response_length text.rv-bar-count").all_text_contents()
    assert shown == [str(c) for c in counts if c]
    ticks = page.locator("#rv-hist-response_length .rv-axis-y text.rv-tick").all_text_contents()
    assert ticks[0] == "0" and int(ticks[-1]) >= max(counts)
    first = bars.first.locator("title").text_content() or ""  # its accessible name
    assert first.startswith("Response length 0\N{EN DASH}204:"), first
    # The scatter: round points, all inside the drawing.
    svg = page.locator("#rv-scatter svg").bounding_box()
    assert svg is not None
    for circle in page.locator("#rv-scatter circle").all():
        box = circle.bounding_box()
        assert box is not None
        assert abs(box["width"] - box["height"]) < 0.5, "a squashed point"
        assert box["x"] >= svg["x"] and box["x"] + box["width"] <= svg["x"] + svg["width"]
        assert box["y"] >= svg["y"] and box["y"] + box["height"] <= svg["y"] + svg["height"]
    assert svg["height"] >= 0.3 * svg["width"], "the scatter is squashed flat"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    save_screenshot(page, f"step-stats-{width}")
    tab.assert_clean()


def far_outliers(values: list[int]) -> tuple[int, float]:
    """How many values lie above Tukey's far-out fence (nearest-rank quartiles, worked out here
    from the data), and the largest value inside it."""
    ordered = sorted(values)
    q1 = ordered[math.ceil(0.25 * len(ordered)) - 1]
    q3 = ordered[math.ceil(0.75 * len(ordered)) - 1]
    fence = q3 + OUTLIER_FENCE * (q3 - q1)
    return sum(v > fence for v in ordered), max(v for v in ordered if v <= fence)


def test_a_histogram_leaves_out_far_outliers_and_shows_them_on_request(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url(f"/train/{OUTLIER_STEP}/stats/"))
    above, highest = far_outliers(BODY + OUTLIERS)
    assert above == len(OUTLIERS)
    card = page.locator("#rv-hist-response_length")
    note = card.locator(".rv-hist-outside")
    expect(note).to_have_attribute("data-above", str(above))
    expect(note).to_have_attribute("data-below", "0")
    expect(note).to_contain_text(f"{above} values above {highest} not shown")
    bars = card.locator("a.rv-bar-link")
    counts = [int(b.get_attribute("data-count") or 0) for b in bars.all()]
    assert sum(counts) == len(BODY)
    assert (bars.last.get_attribute("data-range") or "").endswith(f",{highest}]")
    expect(page.locator("#rv-hist-reward .rv-hist-outside")).to_have_count(0)  # 0/1: one bar each
    note.get_by_role("link", name="Show the full range").click()
    page.wait_for_url(lambda url: "histograms=full" in url)
    expect(card.locator(".rv-hist-outside")).to_have_count(0)
    counts = [int(b.get_attribute("data-count") or 0) for b in bars.all()]
    assert sum(counts) == len(BODY) + len(OUTLIERS)
    assert (bars.last.get_attribute("data-range") or "").endswith(f",{max(OUTLIERS)}]")
    page.get_by_role("link", name="Leave the far outliers out").click()
    expect(note).to_have_attribute("data-above", str(above))
    tab.assert_clean()
