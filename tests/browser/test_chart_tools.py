"""The trends chart's tools (issue 29, item 6) in real headless Chromium against a real
`visualize` server: log scale, drag to zoom and double-click to reset, the wall-clock axis, the
KL reference line the reading cites, and the PNG and CSV downloads. Every expectation comes
from the steps, times and scalars written here (the KL threshold from the store, where the
reading takes it).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from rollouts.store import KL_MAX
from tests.support.browser import Tab, open_indexed_trends, write_step_file
from tests.support.events import writer
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEPS = range(6)
KL = [0.01, 0.02, 0.015, 0.03, 0.04, 0.2]  # the last is above the rule's threshold
SIGNED = [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0]  # two values a log axis cannot draw
BASE = 1_764_000_000  # the first step file's modification time (seconds since the epoch)
# The step files' times: 10 minutes apart, then a gap six times as long before the last.
WALL = [BASE + 600 * s for s in range(5)] + [BASE + 2400 + 3600]
KL_KEY = "tb.train/kl_loss"


def write_save(save: Path) -> None:
    for step in STEPS:
        records = [
            {"prompt": f"q{i}", "response": f"a{i}", "reward": float((i + step) % 2) + step,
             "response_length": 10, "status": "completed", "group_index": i // 2}
            for i in range(4)
        ]  # fmt: skip
        path = write_step_file(save / "rollout_result", "train", step, records)
        os.utime(path, (WALL[step], WALL[step]))
    w = writer(save / "tensorboard_log")
    for step in STEPS:
        w.add_scalar("train/kl_loss", KL[step], step)
        w.add_scalar("train/signed", SIGNED[step], step)
    w.close()


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    save = tmp_path_factory.mktemp("tools") / "save"
    write_save(save)
    with run_visualize(str(save / "rollout_result")) as server:
        yield server


def open_trends(tab: Tab, server: ServerProcess, query: str = "") -> Page:
    url = server.url("/train/trends/" + (f"?{query}" if query else ""))
    return open_indexed_trends(tab.page, url)


def chart(page: Page) -> Locator:
    return page.locator("#rv-trend-chart")


def circle(page: Page, key: str, step: int) -> Locator:
    line = f'#rv-trend-chart .rv-trend-line[data-key="{key}"]'
    return page.locator(f'{line} [data-step="{step}"] circle')


def drawn_steps(page: Page, key: str) -> list[int]:
    links = page.locator(f'#rv-trend-chart .rv-trend-line[data-key="{key}"] [data-step]')
    return [int(a.get_attribute("data-step") or -1) for a in links.all()]


def y_ticks(page: Page) -> list[str]:
    return page.locator('#rv-trend-chart .rv-tick[text-anchor="end"]').all_text_contents()


def x_ticks(page: Page) -> list[str]:
    return page.locator('#rv-trend-chart .rv-tick[text-anchor="middle"]').all_text_contents()


def centre(locator: Locator) -> tuple[float, float]:
    box = locator.bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_the_kl_reference_line_is_drawn_at_the_value_the_reading_cites(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    ref = chart(page).locator(".rv-reference")
    expect(ref).to_have_count(1)
    assert float(ref.get_attribute("data-value") or "nan") == KL_MAX
    expect(ref.locator(".rv-reference-label")).to_contain_text(f"{KL_MAX:g}")
    # On the chart's value axis: between the points just below and above the threshold.
    y = float(ref.locator("line").get_attribute("y1") or "nan")
    below = max(v for v in KL if v <= KL_MAX)
    above = min(v for v in KL if v > KL_MAX)
    y_below = float(circle(page, KL_KEY, KL.index(below)).get_attribute("cy") or "nan")
    y_above = float(circle(page, KL_KEY, KL.index(above)).get_attribute("cy") or "nan")
    assert y_above < y < y_below  # up is more
    # Where the value is exactly: linear between the two points.
    share = (KL_MAX - below) / (above - below)
    assert y == pytest.approx(y_below + share * (y_above - y_below), abs=0.5)
    # Not on a curve the rule does not judge.
    page.select_option("#rv-series", "reward_mean")
    expect(chart(page)).to_have_attribute("data-series", "reward_mean")
    expect(chart(page).locator(".rv-reference")).to_have_count(0)
    tab.assert_clean()


def test_the_log_scale_ticks_at_powers_of_ten_and_says_what_it_skips(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    linear = y_ticks(page)
    assert any(abs(math.log10(float(t)) % 1) > 1e-9 for t in linear if float(t) > 0)
    page.get_by_label("Log scale").check()
    expect(chart(page)).to_have_attribute("data-yscale", "log")
    ticks = [float(t) for t in y_ticks(page)]
    assert len(ticks) >= 2
    for t in ticks:  # every tick a power of ten
        assert math.log10(t) == pytest.approx(round(math.log10(t)), abs=1e-9), t
    assert min(ticks) <= min(KL) * 10 and max(ticks) >= max(KL) / 10
    assert "yscale=log" in page.url
    expect(page.locator("#rv-chart-note")).to_have_text("")
    # A curve with values at or below 0: only the positive ones drawn, the rest counted.
    page.select_option("#rv-series", "tb.train/signed")
    positive = [s for s in STEPS if SIGNED[s] > 0]
    skipped = len(STEPS) - len(positive)
    expect(page.locator("#rv-chart-note")).to_have_text(
        f"log scale: {skipped} values \N{LESS-THAN OR EQUAL TO} 0 not drawn"
    )
    assert drawn_steps(page, "tb.train/signed") == positive
    page.reload()  # the choice is in the URL
    expect(chart(page)).to_have_attribute("data-yscale", "log")
    expect(page.get_by_label("Log scale")).to_be_checked()
    page.get_by_label("Log scale").uncheck()
    expect(chart(page)).to_have_attribute("data-yscale", "linear")
    assert drawn_steps(page, "tb.train/signed") == list(STEPS)
    tab.assert_clean()


def test_a_drag_zooms_on_the_steps_and_a_double_click_resets(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    assert drawn_steps(page, KL_KEY) == list(STEPS)
    x1, _ = centre(circle(page, KL_KEY, 1))
    x4, _ = centre(circle(page, KL_KEY, 4))
    box = chart(page).bounding_box()
    assert box is not None
    top = box["y"] + 20  # above the points: the press lands on the chart, not on a link
    page.mouse.move(x1 - 3, top)
    page.mouse.down()
    page.mouse.move((x1 + x4) / 2, top, steps=4)
    expect(chart(page).locator(".rv-brush")).to_have_count(1)
    page.mouse.move(x4 + 3, top, steps=4)
    page.mouse.up()
    expect(chart(page)).to_have_attribute("data-zoom", "1-4")
    assert drawn_steps(page, KL_KEY) == [1, 2, 3, 4]
    ticks = [int(t) for t in x_ticks(page)]
    assert min(ticks) >= 1 and max(ticks) <= 4
    expect(chart(page).locator(".rv-brush")).to_have_count(0)
    assert urlsplit(page.url).path == "/train/trends/"  # the drag opened no step
    assert "zoom=1-4" in page.url
    expect(page.get_by_role("button", name="Reset zoom")).to_be_enabled()
    page.reload()  # the zoom is in the URL
    expect(chart(page)).to_have_attribute("data-zoom", "1-4")
    chart(page).dblclick(position={"x": box["width"] / 2, "y": 20})
    expect(chart(page)).to_have_attribute("data-zoom", "")
    assert drawn_steps(page, KL_KEY) == list(STEPS)
    assert "zoom=" not in page.url and urlsplit(page.url).path == "/train/trends/"
    expect(page.get_by_role("button", name="Reset zoom")).to_be_disabled()
    tab.assert_clean()


def test_the_keys_zoom_from_and_to_the_step_under_the_crosshair(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    chart(page).focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("[")
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("]")
    expect(chart(page)).to_have_attribute("data-zoom", "1-3")
    assert drawn_steps(page, KL_KEY) == [1, 2, 3]
    page.keyboard.press("Escape")
    expect(chart(page)).to_have_attribute("data-zoom", "")
    tab.assert_clean()


def test_the_wall_clock_axis_places_the_steps_by_their_files_times(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    assert all(re.fullmatch(r"\d+", t) for t in x_ticks(page))  # steps
    page.get_by_label("x axis").select_option("wall")
    expect(chart(page)).to_have_attribute("data-xaxis", "wall")
    labels = x_ticks(page)
    assert labels and all(re.fullmatch(r"\d\d:\d\d", t) for t in labels), labels
    expect(chart(page).locator(".rv-axis-label")).to_contain_text("wall clock")
    xs = [float(circle(page, KL_KEY, s).get_attribute("cx") or "nan") for s in STEPS]
    # x follows the times: the last gap is as many times the others as its time is.
    ratio = (WALL[5] - WALL[4]) / (WALL[1] - WALL[0])
    assert (xs[5] - xs[4]) / (xs[1] - xs[0]) == pytest.approx(ratio, rel=0.01)
    assert "xaxis=wall" in page.url
    tab.assert_clean()


def trends_json(page: Page, server: ServerProcess) -> dict:
    answer = page.request.get(server.url("/api/jsonl/train/trends"))
    assert answer.ok
    return json.loads(answer.body())


def test_the_csv_download_holds_the_drawn_values_per_step(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    with page.expect_download() as caught:
        page.get_by_role("button", name="Download CSV").click()
    download = caught.value
    assert download.suggested_filename.endswith(".csv")
    path = download.path()
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    assert rows[0] == ["step", "wall_time", "train/kl_loss"]
    data = trends_json(page, viewer)
    expected = [[p["step"], p["wall_time"], p["metrics"][KL_KEY]] for p in data["points"]]
    got = [[int(r[0]), float(r[1]), float(r[2])] for r in rows[1:]]
    assert got == expected
    assert [r[1] for r in got] == pytest.approx(WALL, abs=0.01)  # the files' times
    assert [r[2] for r in got] == pytest.approx(KL)
    tab.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_png_download_is_a_png(
    viewer: ServerProcess, tab: Tab, scheme: Literal["light", "dark"]
):
    tab.page.emulate_media(color_scheme=scheme)
    page = open_trends(tab, viewer, "series=" + KL_KEY)
    with page.expect_download() as caught:
        page.get_by_role("button", name="Download PNG").click()
    download = caught.value
    assert download.suggested_filename.endswith(".png")
    data = Path(download.path()).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 2000  # a drawn chart, not an empty image
    tab.assert_clean()
