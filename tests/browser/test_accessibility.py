"""axe-core on every page type, light and dark: no serious or critical violation. The pages are
those of `./run demo`'s data (three runs) and the Training page of the demo trainer's spec."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from typing import Literal

import pytest
from playwright.sync_api import Browser, expect

from tests.support.a11y import axe_violations
from tests.support.demo_pages import PAGES, demo_viewer
from tests.support.servers import REPO_ROOT, ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with demo_viewer(tmp_path_factory.mktemp("demo") / "runs") as server:
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
def test_no_serious_accessibility_violation_on_the_training_page(browser, trainer, theme):
    assert check(browser, trainer.url("/training/"), theme) == []
