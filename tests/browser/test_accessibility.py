"""axe-core on every page type, light and dark: no serious or critical violation. The pages are
those of `./run demo`'s data (three runs) and the Training page of the demo trainer's spec."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Literal

import pytest
from playwright.sync_api import Browser, expect

from tests.support.a11y import axe_violations
from tests.support.servers import REPO_ROOT, ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

RUN = "/runs/steady-rise"
PAGES = {
    "run picker": "/",
    "sample": f"{RUN}/train/{{train}}/sample/0/",
    "sample, eval": f"{RUN}/eval/{{eval}}/sample/0/",
    "group": f"{RUN}/train/{{train}}/group/0/",
    "statistics": f"{RUN}/train/{{train}}/stats/",
    "trends": f"{RUN}/train/trends/",
    "unknown step": f"{RUN}/train/999/sample/0/",
}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("demo") / "runs"
    subprocess.run(
        [sys.executable, "-m", "rollouts.demo", str(root), "--runs"], check=True, timeout=300
    )
    with run_visualize(root) as server:
        server.latest = {  # type: ignore[attr-defined]
            bucket: max(
                int(f.stem)
                for f in (root / "steady-rise" / "rollout_result" / bucket).glob("*.jsonl")
                if f.stem.isdigit()
            )
            for bucket in ("train", "eval")
        }
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
@pytest.mark.parametrize("name", PAGES)
def test_no_serious_accessibility_violation(browser, demo, name, theme):
    assert check(browser, demo.url(PAGES[name].format(**demo.latest)), theme) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_the_training_page(browser, trainer, theme):
    assert check(browser, trainer.url("/training/"), theme) == []
