"""Every page type on a phone (390 x 844, as the review measured): nothing scrolls sideways
(wide tables scroll inside their own box), the sticky header is one row with a menu that opens
the rest, and at desktop width the header is as it was. On `./run demo`'s data, and the run
picker of a folder of 60 runs with its filter form and paging links."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.demo_pages import PAGES, PICKER_PAGE, demo_viewer, picker_viewer
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

PHONE = {"width": 390, "height": 844}
ONE_ROW_PX = 56  # the brand, the menu button and the step selector (it was 164 px)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with demo_viewer(tmp_path_factory.mktemp("demo") / "runs") as server:
        yield server


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with picker_viewer(tmp_path_factory.mktemp("picker") / "runs") as server:
        yield server


def open_page(browser: Browser, url: str, width: int = PHONE["width"]) -> Page:
    context = browser.new_context(viewport={"width": width, "height": PHONE["height"]})
    page = context.new_page()
    response = page.goto(url)
    assert response is not None and response.status == (404 if "/999/" in url else 200), url
    page.wait_for_load_state("networkidle")
    return page


def sideways(page: Page) -> int:
    """How far the page itself scrolls sideways, in px (0: it fits)."""
    return page.evaluate(
        "() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
    )


@pytest.mark.parametrize("name", PAGES)
def test_no_page_scrolls_sideways_and_the_header_is_one_row(browser, demo, name):
    page = open_page(browser, demo.url(demo.pages[name]))
    try:
        assert sideways(page) == 0
        header = page.locator("#rv-header").bounding_box()
        assert header is not None and header["height"] <= ONE_ROW_PX, header
        menu = page.locator("#rv-menu-button")
        expect(menu).to_be_visible()
        expect(menu).to_have_attribute("aria-expanded", "false")
        expect(page.locator("#rv-theme")).to_be_hidden()
        # Open, everything the header holds is there and still fits the width.
        menu.click()
        expect(menu).to_have_attribute("aria-expanded", "true")
        expect(page.locator("#rv-theme")).to_be_visible()
        assert sideways(page) == 0
        page.keyboard.press("Escape")
        expect(page.locator("#rv-theme")).to_be_hidden()
        expect(menu).to_be_focused()
    finally:
        page.context.close()


def test_a_wide_table_scrolls_inside_its_box(browser, demo):
    page = open_page(browser, demo.url(demo.pages["table"]))
    try:
        box = page.locator(".rv-scroll:has(#rv-sample-table)")
        widths = box.evaluate("(e) => [e.scrollWidth, e.clientWidth]")
        assert widths[0] > widths[1], "the table fits: this test no longer shows anything"
        box.focus()  # focusable, so the keyboard scrolls it
        page.keyboard.press("ArrowRight")
        expect(box).not_to_have_js_property("scrollLeft", 0)
        assert sideways(page) == 0
    finally:
        page.context.close()


def test_the_views_are_one_tap_away_on_a_phone(browser, demo):
    page = open_page(browser, demo.url(demo.pages["sample"]))
    try:
        expect(page.locator("#rv-trends-link")).to_be_hidden()
        page.locator("#rv-menu-button").click()
        page.locator("#rv-trends-link").click()
        page.wait_for_url("**/trends/")
    finally:
        page.context.close()


def test_at_desktop_width_the_header_has_no_menu(browser, demo):
    page = open_page(browser, demo.url(demo.pages["sample"]), width=1440)
    try:
        expect(page.locator("#rv-menu-button")).to_be_hidden()
        expect(page.locator("#rv-trends-link")).to_be_visible()
        expect(page.locator("#rv-theme")).to_be_visible()
        expect(page.locator(".rv-brand")).to_have_text("Relax Rollout Viewer")
    finally:
        page.context.close()


def middle(page: Page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["y"] + box["height"] / 2


def inside_the_width(page: Page, selector: str, width: int) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)


@pytest.mark.parametrize("width", [PHONE["width"], 1440])
def test_the_run_pickers_filter_and_paging_fit_the_width(browser, many_runs, width):
    page = open_page(browser, many_runs.url(PICKER_PAGE), width=width)
    try:
        assert sideways(page) == 0
        form = "#rv-runs-filter"
        controls = [f"{form} input[name=q]", f"{form} select[name=reading]", f"{form} button"]
        for selector in [*controls, "a[rel=next]"]:
            inside_the_width(page, selector, width)
        # Each label on the row of its control (a phone once split "Reading" from its select).
        for label, control in (("Name", controls[0]), ("Reading", controls[1])):
            text = f"{form} label:has-text('{label}')"
            assert abs(middle(page, text) - middle(page, control)) < 4, label
        if width > PHONE["width"]:  # at desktop width the form is one row
            rows = {round(middle(page, control) / 8) for control in controls}
            assert len(rows) == 1, rows
        else:  # on a phone the name field has a row of its own, wide enough to read a glob
            box = page.locator(controls[0]).bounding_box()
            assert box is not None and box["width"] >= width / 2, box
        page.locator("a[rel=next]").click()
        page.wait_for_url("**page=2*")
        assert "q=grpo-" in page.url and "sort=name" in page.url
        inside_the_width(page, "a[rel=prev]", width)
        assert sideways(page) == 0
    finally:
        page.context.close()
