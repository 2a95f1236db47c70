"""Flags in real Chromium (issue 30): the table's flag select shows exactly the flagged rows,
its chips carry their reasons, the statistics' counts lead to the filtered table, a point of a
flag series on the trends page opens that step's table filtered by the flag, the rising rate's
warning shows there, and the table with its flags column passes axe, light and dark. The
expectations come from the positions `tests/support/flagged.py` wrote."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from rollouts.store import FLAGS
from tests.support.a11y import axe_violations_on
from tests.support.browser import Tab, open_indexed_trends, url_query
from tests.support.flagged import FLAGGED, ROWS, flagged_rows, flagged_step, rising_repeats
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

RISING = rising_repeats()
SERVED = {
    ("train", 1): flagged_step(),
    **{("eval", step): records for step, records in enumerate(RISING, start=1)},
}


def url_query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def flag_is(flag: str) -> Callable[[str], bool]:
    """A URL test: the page's `flag=` is `flag`."""
    return lambda url: url_query_of(url).get("flag") == [flag]


def shown_positions(page: Page) -> list[int]:
    rows = page.locator("#rv-sample-table tbody tr.rv-table-row")
    return [int(p) for p in rows.evaluate_all("rows => rows.map(r => r.dataset.position)")]


def test_the_flag_select_shows_exactly_the_flagged_rows(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/table/"))
    expect(page.locator("#rv-sample-table tbody tr.rv-table-row")).to_have_count(ROWS)
    select = page.get_by_label("Flag")
    for flag in ("repeats", "cut", "no_answer"):
        select.select_option(flag)  # applies on change (table.js), no button
        page.wait_for_url(flag_is(flag))
        rows = page.locator("#rv-sample-table tbody tr.rv-table-row")
        expect(rows).to_have_count(len(FLAGGED[flag]))
        assert shown_positions(page) == flagged_rows(flag)
        expect(page.get_by_label("Flag")).to_have_value(flag)
        select = page.get_by_label("Flag")
    select.select_option("")  # "any sample": every row again, no flag= left in the URL
    page.wait_for_url(lambda url: "flag" not in url_query_of(url))
    expect(page.locator("#rv-sample-table tbody tr.rv-table-row")).to_have_count(ROWS)
    tab.assert_clean()


def test_chips_carry_their_reasons(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/table/"))
    for flag, positions in FLAGGED.items():
        for position in positions:
            chip = page.locator(f'#rv-row-{position} td[data-field="flags"] .rv-flag-chip')
            expect(chip).to_have_count(1)
            expect(chip).to_have_attribute("data-flag", flag)
            reason = chip.get_attribute("title") or ""
            assert reason.strip(), (flag, position)
            # the reason is in the chip's accessible text too, after its name
            expect(chip).to_have_text(f"{flag}: {reason}")
    healthy = next(i for i in range(ROWS) if not any(i in p for p in FLAGGED.values()))
    expect(page.locator(f'#rv-row-{healthy} td[data-field="flags"] .rv-flag-chip')).to_have_count(0)
    # the twin says the same reason
    twin = page.request.get(viewer.url("/api/jsonl/train/file/1.jsonl/table")).json()
    loop = FLAGGED["repeats"][0]
    chip = page.locator(f'#rv-row-{loop} td[data-field="flags"] .rv-flag-chip')
    assert chip.get_attribute("title") == twin["rows"][loop]["flags"][0]["reason"]


def test_the_column_chooser_keeps_the_flag(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/table/?flag=cut"))
    page.locator("#rv-col-chooser > summary").click()
    page.locator('#rv-col-chooser input[name="cols"][value="reward"]').uncheck()
    page.wait_for_url(lambda url: "cols" in url_query_of(url))
    assert url_query(page)["flag"] == ["cut"]
    assert shown_positions(page) == flagged_rows("cut")
    expect(page.locator('#rv-sample-table th[data-sort="reward"]')).to_have_count(0)
    expect(page.locator('#rv-sample-table th[data-sort="flags"]')).to_have_count(1)


def test_the_stats_counts_lead_to_the_filtered_table(viewer: ServerProcess, tab: Tab):
    page = tab.page
    for flag in ("repeats", "empty", "outlier_length"):
        page.goto(viewer.url("/train/1/stats/"))
        link = page.locator(f'#rv-stat-flags tr[data-flag="{flag}"] a')
        expect(link).to_have_text(str(len(FLAGGED[flag])))
        link.click()
        page.wait_for_url(lambda url: urlsplit(url).path.endswith("/train/1/table/"))
        assert url_query(page)["flag"] == [flag]
        assert shown_positions(page) == flagged_rows(flag)
    page.goto(viewer.url("/train/1/stats/"))
    expect(page.locator("#rv-stat-flags tr[data-flag]")).to_have_count(len(FLAGS))
    tab.assert_clean()


def test_a_flag_point_on_the_trends_opens_the_steps_flagged_samples(
    viewer: ServerProcess, tab: Tab
):
    page = open_indexed_trends(tab.page, viewer.url("/eval/trends/?series=flag.repeats"))
    step = 6  # written with step - 1 looping responses (rising_repeats)
    looping = sum("check this again" in r["response"] for r in RISING[step - 1])
    assert looping == step - 1
    line = page.locator('#rv-trend-chart .rv-trend-line[data-key="flag.repeats"]')
    link = line.locator(f'a[data-step="{step}"]')
    assert link.get_attribute("href") == f"/eval/{step}/table/?flag=repeats"
    # the rising rate is warned about, with its numbers
    warning = page.locator("#rv-warnings li", has_text="flag repeats is rising")
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text(f"-> {(len(RISING) - 1) / len(RISING[0]):.3f}")
    link.locator("circle").click()
    page.wait_for_url(lambda url: urlsplit(url).path == f"/eval/{step}/table/")
    assert url_query(page)["flag"] == ["repeats"]
    expect(page.locator("#rv-sample-table tbody tr.rv-table-row")).to_have_count(looping)
    assert shown_positions(page) == list(range(looping))
    tab.assert_clean()


def test_the_grid_has_one_flags_panel(viewer: ServerProcess, tab: Tab):
    page = open_indexed_trends(tab.page, viewer.url("/eval/trends/"))
    panel = page.locator('#rv-trend-grid button[data-series="all:flag"]')
    expect(panel).to_have_count(1)
    expect(panel.locator(".rv-mini-title")).to_have_text("Flags")
    expect(panel.locator("path.rv-mini-line")).to_have_count(len(FLAGS))
    panel.click()
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-series", "all:flag")
    link = page.locator('.rv-trend-line[data-key="flag.repeats"] a[data-step="3"]')
    assert link.get_attribute("href") == "/eval/3/table/?flag=repeats"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_table_with_flags_passes_axe(
    browser: Browser, viewer: ServerProcess, theme: Literal["light", "dark"]
):
    urls = [
        viewer.url(path)
        for path in ("/train/1/table/", "/train/1/table/?flag=repeats", "/train/1/stats/")
    ]
    assert axe_violations_on(browser, urls, theme, ".rv-flag-chip, #rv-stat-flags") == []
