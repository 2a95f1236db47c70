"""The run picker of a folder of many runs, in a real headless Chromium against a real
`manage.py visualize PARENT`: the filter form (a name glob, a reading) and the paging links keep
the filter and the sort in the URL, pending rows fill in where the reader is (no reload), and
the form is reached and named from the keyboard.

The runs are `write_picker_runs`': `grpo-NN` runs whose mean reward climbs (read as rising),
`ppo-NN` runs whose mean reward stays level (a plateau); what each test expects follows from
those names and curves, not from what the server answered.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import Tab
from tests.support.data import write_picker_runs
from tests.support.demo_pages import every_reading_in
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

RISING, FLAT = 55, 5  # more grpo runs than a page holds: a filtered list that pages
PER_PAGE = 50
READ_WITHIN = 120.0  # s: a bound on the wait for every reading, never a speed claim
NAMES = sorted([f"grpo-{n:02d}" for n in range(RISING)] + [f"ppo-{n:02d}" for n in range(FLAT)])
GRPO = [name for name in NAMES if name.startswith("grpo-")]


def all_read(server: ServerProcess) -> None:
    every_reading_in(server, READ_WITHIN)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    parent = tmp_path_factory.mktemp("picker-many") / "runs"
    parent.mkdir()
    assert write_picker_runs(parent, RISING, FLAT) == NAMES
    with run_visualize(parent) as server:
        all_read(server)
        yield server


def shown_runs(page: Page) -> list[str]:
    return page.locator("#rv-runs tr.rv-run-item").evaluate_all(
        "(rows) => rows.map((row) => row.dataset.run)"
    )


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_a_glob_typed_in_the_filter_form_is_in_the_url_and_the_rows_match(runs, tab: Tab):
    page = tab.page
    page.goto(runs.url("/?sort=name&order=desc"))
    expect(page.locator("#rv-runs-count")).to_contain_text(f"{len(NAMES)} of {len(NAMES)} runs")
    page.locator("#rv-runs-filter input[name=q]").fill("PPO-*")  # either case
    page.locator("#rv-runs-filter button[type=submit]").click()
    page.wait_for_url("**/?*q=PPO-*")
    assert query(page) == {"q": ["PPO-*"], "sort": ["name"], "order": ["desc"]}
    assert shown_runs(page) == sorted((n for n in NAMES if n.startswith("ppo-")), reverse=True)
    expect(page.locator("#rv-runs-filter input[name=q]")).to_have_value("PPO-*")
    expect(page.locator("#rv-runs-count")).to_contain_text(f"{FLAT} of {len(NAMES)} runs")
    # A substring (no glob characters) matches anywhere in the name.
    page.locator("#rv-runs-filter input[name=q]").fill("po-0")
    page.locator("#rv-runs-filter input[name=q]").press("Enter")
    page.wait_for_url("**/?*q=po-0*")
    assert set(shown_runs(page)) == {n for n in NAMES if "po-0" in n}
    # Nothing matches: the page says so instead of an empty table.
    page.locator("#rv-runs-filter input[name=q]").fill("no-such-run-*")
    page.locator("#rv-runs-filter input[name=q]").press("Enter")
    expect(page.locator("#rv-main")).to_contain_text("No run matches this filter.")
    expect(page.locator("#rv-runs")).to_have_count(0)
    tab.assert_clean()


def test_the_reading_select_keeps_only_runs_of_that_reading(runs, tab: Tab):
    page = tab.page
    page.goto(runs.url("/?q=grpo-0*"))
    page.locator("#rv-runs-filter select[name=reading]").select_option("plateau")
    page.locator("#rv-runs-filter button[type=submit]").click()
    page.wait_for_url("**reading=plateau*")
    assert query(page) == {"q": ["grpo-0*"], "reading": ["plateau"]}
    expect(page.locator("#rv-main")).to_contain_text("No run matches this filter.")  # all rise
    page.locator("#rv-runs-filter input[name=q]").fill("")
    page.locator("#rv-runs-filter button[type=submit]").click()
    page.wait_for_url("**reading=plateau*")
    assert shown_runs(page) == [n for n in NAMES if n.startswith("ppo-")]
    readings = page.locator("#rv-runs .rv-run-reading")
    expect(readings).to_have_count(FLAT)
    for i in range(FLAT):
        expect(readings.nth(i)).to_have_attribute("data-reading", "plateau")
    expect(page.locator("#rv-runs-filter select[name=reading]")).to_have_value("plateau")
    page.locator("#rv-runs-filter select[name=reading]").select_option("rising")
    page.locator("#rv-runs-filter button[type=submit]").click()
    page.wait_for_url("**reading=rising*")
    assert shown_runs(page) == GRPO[:PER_PAGE]
    expect(page.locator("a[rel=next]")).to_be_visible()
    tab.assert_clean()


def test_paging_links_keep_the_filter_and_the_sort(runs, tab: Tab):
    page = tab.page
    page.goto(runs.url("/?q=grpo-*&sort=name&order=desc"))
    newest_first = sorted(GRPO, reverse=True)
    assert shown_runs(page) == newest_first[:PER_PAGE]
    expect(page.locator("a[rel=prev]")).to_have_count(0)
    expect(page.locator("#rv-runs-count")).to_contain_text("page 1 of 2")
    page.locator("a[rel=next]").click()
    page.wait_for_url("**page=2*")
    assert query(page) == {"q": ["grpo-*"], "sort": ["name"], "order": ["desc"], "page": ["2"]}
    assert shown_runs(page) == newest_first[PER_PAGE:]
    expect(page.locator("a[rel=next]")).to_have_count(0)
    # The sort links on page 2 keep the filter (and start again at page 1).
    sort_href = page.locator('#rv-runs a.rv-sort[data-sort="steps"]').get_attribute("href") or ""
    sort_query = parse_qs(urlsplit(sort_href).query)
    assert sort_query["q"] == ["grpo-*"] and "page" not in sort_query
    # The form keeps the sort when the filter changes.
    page.locator("#rv-runs-filter input[name=q]").fill("grpo-5*")
    page.locator("#rv-runs-filter button[type=submit]").click()
    page.wait_for_url("**q=grpo-5*")
    assert query(page) == {"q": ["grpo-5*"], "sort": ["name"], "order": ["desc"]}
    assert shown_runs(page) == sorted((n for n in GRPO if n.startswith("grpo-5")), reverse=True)
    page.go_back()
    page.wait_for_url("**page=2*")
    page.locator("a[rel=prev]").click()
    page.wait_for_url(lambda url: "page=" not in url)
    assert query(page) == {"q": ["grpo-*"], "sort": ["name"], "order": ["desc"]}
    assert shown_runs(page) == newest_first[:PER_PAGE]
    tab.assert_clean()


def test_the_filter_form_is_reached_and_named_from_the_keyboard(runs, tab: Tab):
    page = tab.page
    page.goto(runs.url("/"))
    search = page.get_by_role("search", name="Filter the runs")
    expect(search).to_be_visible()
    name = search.get_by_role("searchbox", name="Name")
    reading = search.get_by_role("combobox", name="Reading")
    expect(name).to_be_visible()
    expect(reading).to_be_visible()
    expect(search.get_by_role("button", name="Filter")).to_be_visible()
    # Tab from the top of the page reaches the name field (within a bounded number of stops).
    page.locator("body").focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement?.name") == "q":
            break
    else:
        pytest.fail("Tab never reached the runs' name filter")
    page.keyboard.type("ppo-0?")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement?.name") == "reading"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement?.textContent") == "Filter"
    page.keyboard.press("Enter")
    page.wait_for_url("**q=ppo-0%3F*")
    assert shown_runs(page) == [n for n in NAMES if n.startswith("ppo-0")]
    tab.assert_clean()


@contextmanager
def cold_picker(tab: Tab, tmp_path: Path) -> Iterator[tuple[list[str], str]]:
    """A cold server's first picker page in `tab`: the runs' names and the page as served."""
    parent = tmp_path / "runs"
    parent.mkdir()
    names = write_picker_runs(parent, 12, 4, steps=6)
    with run_visualize(parent) as server:
        response = tab.page.goto(server.url("/"))  # the cold server's first picker request
        assert response is not None and response.status == 200
        served = response.text()
        assert "rv-run-pending" in served
        yield names, served


def test_pending_rows_fill_in_without_a_reload(tab: Tab, tmp_path: Path):
    page = tab.page
    with cold_picker(tab, tmp_path) as (names, served):
        assert "still being read" in served
        page.evaluate("document.documentElement.dataset.sameDocument = 'yes'")
        pending = page.locator("#rv-runs tr.rv-run-pending")
        expect(pending).to_have_count(0, timeout=READ_WITHIN * 1000)
        expect(page.locator("#rv-runs")).not_to_have_attribute("data-indexing", "", timeout=10_000)
        expect(page.locator("#rv-runs-count")).not_to_contain_text("still being read")
        assert shown_runs(page) == names
        readings = page.locator("#rv-runs .rv-run-reading")
        expect(readings).to_have_count(len(names))
        for i, name in enumerate(names):
            state = "rising" if name.startswith("grpo-") else "plateau"
            expect(readings.nth(i)).to_have_attribute("data-reading", state)
        assert page.evaluate("document.documentElement.dataset.sameDocument") == "yes"
        # runs.js read the page again (fetch), the browser did not navigate again.
        navigations = page.evaluate("performance.getEntriesByType('navigation').length")
        assert navigations == 1
        tab.close()
    tab.assert_clean()


def test_a_refresh_of_the_rows_keeps_the_keyboard_focus(tab: Tab, tmp_path: Path):
    page = tab.page
    with cold_picker(tab, tmp_path) as (names, _):
        # A keyboard user on the third row's link while the rows are read in.
        link = page.locator(f'#rv-runs tr[data-run="{names[2]}"] a.rv-run')
        link.focus()
        page.evaluate("document.querySelector('#rv-runs tbody').dataset.first = 'yes'")
        page.wait_for_function(  # runs.js swapped the rows in at least once
            "() => !document.querySelector('#rv-runs tbody').dataset.first"
        )
        focused = page.evaluate(
            "() => [document.activeElement.className, "
            "document.activeElement.closest('tr')?.dataset.run]"
        )
        assert focused == ["rv-run", names[2]]
        tab.close()
    tab.assert_clean()
