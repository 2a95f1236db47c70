"""Is it learning? The collapse demo run's verdict chip reads the same, in the same class and the
same colours, on the run picker and on its trends page (issue 29: it said "not rising" in red on
one and "KL TOO LARGE" in grey on the other)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

pytest.importorskip("tensorboard")  # the demo's scalars carry the KL that decides the collapse
TONE = re.compile(r"\brv-learning-(good|warn|bad|neutral)\b")
LOOK = "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("learning") / "runs"
    subprocess.run(
        [sys.executable, "-m", "rollouts.demo", str(root), "--runs"], check=True, timeout=300
    )
    with run_visualize(root) as server:
        yield server


def tone_of(classes: str | None) -> str:
    found = TONE.search(classes or "")
    assert found, classes
    return found.group(1)


def test_the_collapse_runs_chip_is_the_same_on_the_picker_and_its_trends(demo, tab):
    page = tab.page
    page.goto(demo.url("/runs/"))
    chip = page.locator('tr[data-run="collapse"] .rv-run-reading')
    expect(chip).to_have_text("KL too large", timeout=60_000)  # after the runs are indexed
    picker = (chip.inner_text(), tone_of(chip.get_attribute("class")), chip.evaluate(LOOK))
    assert picker[1] == "bad"

    page.locator('tr[data-run="collapse"] .rv-run-trends').click()
    name = page.locator("#rv-reading .rv-reading-name")
    expect(page.locator("#rv-reading")).to_be_visible()
    expect(name).to_have_text(picker[0])
    trends = (name.inner_text(), tone_of(name.get_attribute("class")), name.evaluate(LOOK))
    assert trends == picker
    tab.assert_clean()
