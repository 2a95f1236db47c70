"""axe-core on every page type, light and dark: no serious or critical violation. The pages are
those of `./run demo`'s data (three runs) and the Training page of the demo trainer's spec, at
desktop width and on a phone (390 px, the header's menu open), the run picker of 60 runs
filtered and paged, and in the states a page takes:
reading mode on, and a training job running, paused, stopped and failed."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from typing import Literal

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.a11y import axe_violations
from tests.support.demo_pages import PAGES, PICKER_PAGE, demo_viewer, picker_viewer
from tests.support.servers import REPO_ROOT, ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with demo_viewer(tmp_path_factory.mktemp("demo") / "runs") as server:
        yield server


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with picker_viewer(tmp_path_factory.mktemp("picker") / "runs") as server:
        yield server


@pytest.fixture(scope="module")
def trainer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    spec = tmp_path_factory.mktemp("train") / "demo-train.toml"
    shutil.copy(REPO_ROOT / "examples" / "demo-train.toml", spec)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        yield s


PHONE_WIDTH = 390


def check(
    browser: Browser, url: str, theme: Literal["light", "dark"], width: int = 1440
) -> list[str]:
    height = 844 if width == PHONE_WIDTH else 900  # a phone's, as the review measured
    context = browser.new_context(
        color_scheme=theme, viewport={"width": width, "height": height}, bypass_csp=True
    )  # axe is injected as an inline script, which the pages' CSP refuses
    try:
        page = context.new_page()
        response = page.goto(url)
        assert response is not None and response.status == (404 if "/999/" in url else 200), url
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        page.wait_for_load_state("networkidle")
        if width == PHONE_WIDTH:  # the header's menu open: what it shows is checked too
            page.locator("#rv-menu-button").click()
            expect(page.locator("#rv-header")).to_have_attribute("data-menu", "open")
        headings = page.locator("h1").count()  # every page says what it is, to a screen reader too
        return axe_violations(page) + ([] if headings == 1 else [f"{headings} h1 elements"])
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)  # one page of each type
def test_no_serious_accessibility_violation(browser, demo, name, theme):
    assert check(browser, demo.url(demo.pages[name]), theme) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_no_serious_accessibility_violation_on_a_phone(browser, demo, name, theme):
    assert check(browser, demo.url(demo.pages[name]), theme, width=PHONE_WIDTH) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1440, PHONE_WIDTH])
def test_no_serious_accessibility_violation_on_the_run_picker_filtered_and_paged(
    browser, many_runs, theme, width
):
    # 60 runs: the filter form filled in, 50 rows and the link to page 2.
    assert check(browser, many_runs.url(PICKER_PAGE), theme, width=width) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_the_training_page(browser, trainer, theme):
    assert check(browser, trainer.url("/training/"), theme) == []


def axe_in(browser: Browser, theme: Literal["light", "dark"]) -> tuple[Page, list[str]]:
    """A page to drive into a state, and the list its axe findings are added to."""
    context = browser.new_context(
        color_scheme=theme, viewport={"width": 1440, "height": 900}, bypass_csp=True
    )
    return context.new_page(), []


def findings(page: Page, state: str) -> list[str]:
    page.wait_for_load_state("networkidle")
    return [f"{state}: {finding}" for finding in axe_violations(page)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violation_in_reading_mode(browser, demo, theme):
    page, found = axe_in(browser, theme)
    try:
        page.goto(demo.url(demo.pages["sample"]))
        toggle = page.locator('section[data-field="response"] button.rv-read-toggle')
        toggle.click()
        expect(toggle).to_have_attribute("aria-pressed", "true")
        found += findings(page, "reading mode")
    finally:
        page.context.close()
    assert found == []


JOB_MS = 30_000  # a child process starting, pausing at a step boundary, or saving on a stop


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_the_training_page_of_a_job(browser, tmp_path, theme):
    """The Training page as a job runs, is paused, is stopped, and as a job that failed."""
    spec = tmp_path / "demo-train.toml"
    shutil.copy(REPO_ROOT / "examples" / "demo-train.toml", spec)
    launcher = (sys.executable, "manage.py", "train")
    page, found = axe_in(browser, theme)
    with run_visualize(spec, "--no-browser", launcher=launcher) as server:
        try:
            page.goto(server.url("/training/"))
            process = page.locator("#rv-chip-process")
            outcome = page.locator("#rv-chip-outcome")
            page.fill("#rv-field-steps", "2000")
            page.fill("#rv-field-step_seconds", "0.05")
            page.click("#rv-train-start")
            expect(process).to_have_attribute("data-status", "running", timeout=JOB_MS)
            found += findings(page, "running")
            page.click("#rv-train-pause")
            expect(process).to_have_attribute("data-status", "paused", timeout=JOB_MS)
            found += findings(page, "paused")
            page.click("#rv-train-stop")
            expect(outcome).to_have_attribute("data-outcome", "stopped", timeout=JOB_MS)
            found += findings(page, "stopped")
            page.locator('#rv-train-presets button[data-preset="crash"]').click()
            expect(page.locator("#rv-field-inject_failure")).to_be_checked()
            page.fill("#rv-field-step_seconds", "0.05")
            page.click("#rv-train-start")
            expect(outcome).to_have_attribute("data-outcome", "failed", timeout=JOB_MS)
            found += findings(page, "failed")
        finally:
            page.context.close()
    assert found == []
