"""A Relax run's TensorBoard scalars on the trends page (issue 17), in real headless Chromium
against real `visualize` servers. The event files are written here with tensorboardX; every
expected value is the one written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.browser import (
    FAST_POLL_ENV,
    FAST_POLL_MS,
    Tab,
    live_timeout_ms,
    open_indexed_trends,
    write_step_file,
)
from tests.support.events import tensor_summary, writer
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEPS = range(6)
KL = [0.01, 0.02, 0.015, 0.03, 0.04, 0.2]  # the last is above the rule's 0.05
GRAD = [3.0, 2.5, 2.0, 1.5, 1.2, 1.0]


def write_save(save: Path) -> None:
    for step in STEPS:
        records = [
            {"prompt": f"q{i}", "response": f"a{i}", "reward": float((i + step) % 2),
             "response_length": 10, "status": "completed", "group_index": i // 2}
            for i in range(4)
        ]  # fmt: skip
        write_step_file(save / "rollout_result", "train", step, records)
    w = writer(save / "tensorboard_log")
    for step in STEPS:
        w.add_scalar("train/kl_loss", KL[step], step)
        w.add_scalar("train/grad_norm", GRAD[step], step)
        w.file_writer.add_summary(tensor_summary("perf/tokens_per_s", 1000.0 + step), step)
    w.close()


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    save = tmp_path_factory.mktemp("tb") / "save"
    write_save(save)
    with run_visualize(str(save / "rollout_result")) as server:
        yield server


def open_trends(tab: Tab, server: ServerProcess, query: str = "") -> Page:
    url = server.url("/train/trends/" + (f"?{query}" if query else ""))
    return open_indexed_trends(tab.page, url)


def point(page: Page, key: str, step: int) -> Locator:
    return page.locator(f'#rv-trend-chart .rv-trend-line[data-key="{key}"] a[data-step="{step}"]')


def test_a_scalar_is_chosen_drawn_and_its_step_opens_the_samples(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer)
    group = page.locator('#rv-series optgroup[label="TensorBoard train/"]')
    expect(group.locator("option")).to_have_text(["train/grad_norm", "train/kl_loss"])
    expect(page.locator('#rv-series option[value="all:tb:train"]')).to_have_count(0)
    page.select_option("#rv-series", "tb.train/kl_loss")
    chart = page.locator("#rv-trend-chart")
    expect(chart).to_have_attribute("data-series", "tb.train/kl_loss")
    expect(page.locator('.rv-trend-line[data-key="tb.train/kl_loss"] a')).to_have_count(len(STEPS))
    point(page, "tb.train/kl_loss", 3).locator("circle").hover()
    tip = page.locator('#rv-crosshair-values li[data-key="tb.train/kl_loss"] .rv-tip-value')
    assert float(tip.get_attribute("data-value") or "nan") == pytest.approx(KL[3])
    assert "series=tb.train%2Fkl_loss" in page.url or "series=tb.train/kl_loss" in page.url
    tab.assert_clean()
    point(page, "tb.train/kl_loss", 4).locator("circle").click()
    page.wait_for_url(lambda url: urlsplit(url).path == "/train/4/")


def test_a_scalar_and_a_rollout_metric_share_one_chart(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer)
    page.select_option("#rv-series-with", "tb.train/grad_norm")
    chart = page.locator("#rv-trend-chart")
    expect(chart).to_have_attribute("data-with", "tb.train/grad_norm")
    expect(chart.locator(".rv-trend-line")).to_have_count(2)
    point(page, "reward_mean", 2).locator("circle").hover()
    rows = page.locator("#rv-crosshair-values li")
    expect(rows).to_have_count(2)
    grad = page.locator('#rv-crosshair-values li[data-key="tb.train/grad_norm"] .rv-tip-value')
    assert float(grad.get_attribute("data-value") or "nan") == pytest.approx(GRAD[2])
    page.reload()  # the choice is in the URL
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-with", "tb.train/grad_norm")
    tab.assert_clean()


def test_the_grid_the_note_and_the_kl_reading(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer)
    expect(page.locator("#rv-trends-scalars")).to_have_text(
        "TensorBoard: 3 scalars from save/tensorboard_log (beside rollout_result; 1 event file)"
    )
    mini = page.locator('#rv-trend-grid button[data-series="tb.perf/tokens_per_s"]')
    expect(mini.locator(".rv-mini-latest")).to_have_attribute("data-value", "1005")
    mini.click()
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-series", "tb.perf/tokens_per_s")
    expect(page.locator("#rv-reading .rv-reading-name")).to_have_text("KL too large")
    expect(page.locator("#rv-reading .rv-reading-why")).to_contain_text("train/kl_loss 0.2")
    tab.assert_clean()


def test_new_scalars_arrive_with_the_poll(tmp_path: Path, tab: Tab):
    save = tmp_path / "save"
    write_save(save)
    with run_visualize(str(save / "rollout_result"), env=FAST_POLL_ENV) as server:
        page = open_trends(tab, server)
        expect(page.locator('#rv-series option[value="tb.rollout/late"]')).to_have_count(0)
        late = writer(save / "tensorboard_log", suffix=".late")
        for step in STEPS:
            late.add_scalar("rollout/late", 0.5 * step, step)
        late.close()
        option = page.locator('#rv-series optgroup[label="TensorBoard rollout/"] option')
        expect(option).to_have_text(["rollout/late"], timeout=live_timeout_ms(FAST_POLL_MS))
        tab.assert_clean()
