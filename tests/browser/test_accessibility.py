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
from tests.support.demo_pages import PAGES, page_urls, write_demo_runs
from tests.support.servers import REPO_ROOT, ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("demo") / "runs"
    latest = write_demo_runs(root)
    with run_visualize(root) as server:
        server.pages = page_urls(latest)  # type: ignore[attr-defined]
        yield server


@pytest.fixture(scope="module")
def trainer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    spec = tmp_path_factory.mktemp("train") / "demo-train.toml"
    shutil.copy(REPO_ROOT / "examples" / "demo-train.toml", spec)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        yield s


def check(browser: Browser, url: str, theme: Literal["light", "dark"]) -> list[str]:
    context = browser.new_context(
        color_scheme=theme, viewport={"width": 1440, "height": 900}, bypass_csp=True
    )  # axe is injected as an inline script, which the pages' CSP refuses
    try:
        page = context.new_page()
        response = page.goto(url)
        assert response is not None and response.status == (404 if "/999/" in url else 200), url
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        page.wait_for_load_state("networkidle")
        headings = page.locator("h1").count()  # every page says what it is, to a screen reader too
        return axe_violations(page) + ([] if headings == 1 else [f"{headings} h1 elements"])
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)  # one page of each type
def test_no_serious_accessibility_violation(browser, demo, name, theme):
    assert check(browser, demo.url(demo.pages[name]), theme) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_the_training_page(browser, trainer, theme):
    assert check(browser, trainer.url("/training/"), theme) == []
