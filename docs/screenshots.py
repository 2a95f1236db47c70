"""Screenshots of every page type, light and dark, at 1440, 800 and 390 px wide (a phone), into
docs/screenshots/ (the docs show them). Run by hand after a change to a page:

    .venv/bin/python docs/screenshots.py

It writes `./run demo`'s data (three runs) to a temporary directory, serves it with
`manage.py visualize`, serves the demo trainer's spec with `manage.py train` (the Training page,
on its offline "rising" preview: nothing is started), and drives Debian's chromium.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.browser import CHROMIUM_ARGS, chromium_path  # noqa: E402
from tests.support.demo_pages import page_urls, write_demo_runs  # noqa: E402
from tests.support.servers import run_visualize  # noqa: E402

OUT = REPO / "docs" / "screenshots"
WIDTHS = (1440, 800, 390)
PHONE = 390  # a phone's viewport: 390 x 844
THEMES = ("light", "dark")


def shoot(browser, base: str, name: str, path: str, select: str | None = None) -> None:
    for theme in THEMES:
        for width in WIDTHS:
            context = browser.new_context(
                color_scheme=theme,
                viewport={"width": width, "height": 844 if width == PHONE else 900},
            )
            page = context.new_page()
            page.goto(base + path)
            if select:
                page.select_option("#rv-train-preview", select)
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(300)  # charts drawn after the first answer
            page.screenshot(path=str(OUT / f"{name}-{theme}-{width}.png"), full_page=False)
            context.close()


def main() -> int:
    executable = chromium_path()
    if executable is None:
        print("no chromium: install Debian's chromium (or set RELAX_CHROMIUM)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        latest = write_demo_runs(runs)
        spec = Path(tmp) / "train" / "demo-train.toml"
        spec.parent.mkdir()
        shutil.copy(REPO / "examples" / "demo-train.toml", spec)
        train = (sys.executable, "manage.py", "train")
        with (
            run_visualize(runs) as viewer,
            run_visualize(spec, "--no-browser", launcher=train) as trainer,
            sync_playwright() as driver,
        ):
            browser = driver.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
            for name, path in page_urls(latest).items():
                shoot(browser, viewer.base_url, name, path)
            shoot(browser, trainer.base_url, "training", "/training/", select="rising")
            browser.close()
    for png in sorted(OUT.glob("*.png")):
        print(png.relative_to(REPO), png.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
