"""The trends page at a glance, in a real headless Chromium against real `manage.py visualize`
servers: the chart above the reading (its rule table collapsed), status colours shared with the
sample page, a tooltip beside the cursor, the best step and gaps marked, smoothing by point
count, the grid of every curve, and another run overlaid by step.

Expected numbers come from the records these tests write, never from the page or the API.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest
from playwright.sync_api import FloatRect, Page, expect

from rollouts.presentation import format_number
from tests.support.browser import Tab, mark_document, same_document, write_step_file
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEPS = range(6)
BEST_STEP = 3  # the rewards peak here, then fall
PEAK = [0.1, 0.3, 0.5, 0.8, 0.6, 0.4]
OBJECT_STEP = 2  # an object reward: components, no single reward


def record(run: str, step: int, i: int) -> dict[str, Any]:
    shift = 0.0 if run == "alpha" else -0.05
    base = {
        "prompt": f"{run} question {i}",
        "response": f"answer {i}",
        "response_length": 100 + step,
        "status": "truncated" if i == 0 else "completed",
        "group_index": i // 2,
        "reward": round(PEAK[step] + shift + (0.1 if i % 2 else -0.1), 6),
    }
    return base


def object_record(i: int) -> dict[str, Any]:
    return {**record("alpha", OBJECT_STEP, i), "reward": {"acc": float(i % 2), "format": 1.0}}


def alpha_records(step: int) -> list[dict[str, Any]]:
    return [record("alpha", step, i) for i in range(4)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("glance")
    for run in ("alpha", "beta"):
        for step in STEPS:
            write_step_file(root / run / "rollout_result", "train", step,
                            [record(run, step, i) for i in range(4)])  # fmt: skip
    write_step_file(
        root / "alpha" / "rollout_result", "eval", 0, [object_record(i) for i in range(4)]
    )
    write_step_file(root / "alpha" / "rollout_result", "eval", 1, alpha_records(1))
    write_step_file(root / "alpha" / "rollout_result", "eval", 3, alpha_records(3))
    with run_visualize(
        root / "alpha" / "rollout_result", str(root / "beta" / "rollout_result")
    ) as s:
        yield s


def open_trends(tab: Tab, server: ServerProcess, run: str, query: str = "") -> Page:
    page = tab.page
    page.goto(server.url(f"/runs/{run}/train/trends/" + (f"?{query}" if query else "")))
    expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
    return page


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


def overlaps(a: FloatRect, b: FloatRect) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])  # fmt: skip


def test_the_chart_comes_first_and_the_rule_table_waits_behind_the_verdict(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha")
    assert box(page, "#rv-trend-chart")["y"] < box(page, "#rv-reading")["y"]
    assert box(page, "#rv-trend-chart")["y"] < box(page, "#rv-cards")["y"]
    expect(page.locator("#rv-reading .rv-reading-name")).not_to_be_empty()
    table = page.locator("#rv-reading .rv-reading-numbers")
    expect(table).to_be_hidden()
    page.locator("#rv-reading summary").click()
    expect(table).to_be_visible()
    tab.assert_clean()


def test_a_status_line_has_the_status_colour_the_sample_page_uses(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha", "series=all:status")
    line = page.locator('#rv-trend-chart .rv-trend-line[data-key="status.truncated"] .rv-ema-line')
    colours = page.evaluate(
        """() => {
          const probe = document.createElement('span');
          probe.setAttribute('data-status', 'truncated');
          document.body.appendChild(probe);
          probe.style.color = 'var(--rv-status)';
          const status = getComputedStyle(probe).color;
          probe.style.color = 'var(--rv-error-fg)';
          return [status, getComputedStyle(probe).color];
        }"""
    )
    assert colours[0] == colours[1]  # truncated is the sample page's red
    assert line.evaluate("p => getComputedStyle(p).stroke") == colours[0]
    done = page.locator('#rv-trend-chart .rv-trend-line[data-key="status.completed"] .rv-ema-line')
    assert done.evaluate("p => getComputedStyle(p).stroke") != colours[0]


def test_the_tooltip_follows_the_cursor_and_never_covers_the_point_read(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha")
    seen = []
    for step in (1, 4):
        dot = page.locator(
            f'#rv-trend-chart .rv-trend-line[data-key="reward_mean"] a[data-step="{step}"] circle'
        )
        dot.hover()
        tip = page.locator("#rv-crosshair-values")
        expect(tip).to_have_attribute("data-step", str(step))
        tip_box, dot_box = box(page, "#rv-crosshair-values"), dot.bounding_box()
        assert dot_box is not None and not overlaps(tip_box, dot_box)
        seen.append(tip_box)
    assert seen[0]["x"] != seen[1]["x"]  # it moved with the cursor
    tab.assert_clean()


def test_the_best_step_is_marked_with_its_value(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha")
    means = [fmean(r["reward"] for r in alpha_records(s)) for s in STEPS]
    best = max(STEPS, key=lambda s: means[s])
    assert best == BEST_STEP
    mark = page.locator('#rv-trend-chart .rv-best-mark[data-key="reward_mean"]')
    expect(mark).to_have_attribute("data-step", str(best))
    expect(mark.locator("text")).to_have_text(f"best {format_number(means[best])} at step {best}")


def test_a_gap_says_it_is_an_object_reward(runs, tab: Tab):
    page = tab.page
    page.goto(runs.url("/runs/alpha/eval/trends/"))
    expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
    gap = page.locator(f'#rv-trend-chart .rv-gap-mark[data-step="{0}"]')
    expect(gap).to_have_attribute(
        "data-why", "an object reward: no single number (see Reward components)"
    )
    page.locator("#rv-trend-chart").focus()
    page.locator("#rv-trend-chart").press("Home")
    expect(
        page.locator('#rv-crosshair-values li[data-key="reward_mean"] .rv-tip-gap')
    ).to_contain_text("object reward")


def test_few_points_are_not_smoothed_by_default(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-smoothing", "0")
    expect(page.locator("#rv-smoothing-note")).to_have_text(f"default for {len(STEPS)} points")
    raw = page.locator('#rv-trend-chart .rv-trend-line[data-key="reward_mean"] path.rv-raw-line')
    ema = page.locator('#rv-trend-chart .rv-trend-line[data-key="reward_mean"] path.rv-ema-line')
    assert raw.get_attribute("d") == ema.get_attribute("d")


def test_many_points_get_a_default_smoothing_that_rises_with_their_count(tab: Tab, tmp_path: Path):
    root = tmp_path / "rollout_result"
    for step in range(40):
        write_step_file(root, "train", step, [record("alpha", step % 6, i) for i in range(2)])
    with run_visualize(root) as server:
        page = tab.page
        page.goto(server.url("/train/trends/"))
        expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
        # The documented rule: 1 - 20 / n in steps of 0.05 from 20 points on.
        expect(page.locator("#rv-trend-chart")).to_have_attribute("data-smoothing", "0.5")


def test_the_grid_shows_every_curve_and_a_click_draws_it_large(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha")
    series = page.evaluate(
        "() => JSON.parse(document.getElementById('rv-trends-data').textContent).series"
    )
    kinds = {s["kind"] for s in series if s["kind"] != "metric"}
    panels = page.locator("#rv-trend-grid .rv-mini")
    expect(panels).to_have_count(sum(s["kind"] == "metric" for s in series) + len(kinds))
    page.locator('#rv-trend-grid .rv-mini[data-series="truncation_rate"]').click()
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-series", "truncation_rate")
    expect(page.locator("#rv-series")).to_have_value("truncation_rate")
    expect(
        page.locator('#rv-trend-grid .rv-mini[data-series="truncation_rate"]')
    ).to_have_attribute("aria-pressed", "true")
    page.locator('#rv-trend-grid .rv-mini[data-series="all:status"]').click()
    expect(page.locator("#rv-trend-chart .rv-trend-line")).to_have_count(2)
    tab.assert_clean()


def test_another_run_is_overlaid_step_by_step(runs, tab: Tab):
    page = open_trends(tab, runs, "alpha")
    page.locator('#rv-runs-overlay input[value="beta"]').check()
    chart = page.locator("#rv-trend-chart")
    expect(chart).to_have_attribute("data-runs", "2")
    beta = page.locator('#rv-trend-chart .rv-trend-line[data-key="reward_mean@beta"]')
    expect(beta.locator("a.rv-trend-point-link")).to_have_count(len(STEPS))
    expect(page.locator("#rv-legend .rv-legend-item")).to_have_text(["alpha (current)", "beta"])
    step = 4
    beta.locator(f'a[data-step="{step}"] circle').hover()
    expected = fmean(record("beta", step, i)["reward"] for i in range(4))
    value = page.locator('#rv-crosshair-values li[data-key="reward_mean@beta"] .rv-tip-value')
    assert float(value.get_attribute("data-value") or "nan") == pytest.approx(expected)
    assert "/runs/beta/train/" in (
        beta.locator(f'a[data-step="{step}"]').get_attribute("href") or ""
    )
    page.reload()  # the overlay is in the URL
    expect(chart).to_have_attribute("data-runs", "2")
    tab.assert_clean()


def test_the_run_picker_fills_in_without_reloading(tab: Tab, tmp_path: Path):
    for run in ("one", "two", "three"):
        for step in range(300):  # enough steps that the first answer comes before the readings
            write_step_file(tmp_path / run / "rollout_result", "train", step,
                            [record("alpha", step % 6, i) for i in range(2)])  # fmt: skip
    with run_visualize(tmp_path) as server:
        page = tab.page
        page.goto(server.url("/"))
        table = page.locator("#rv-runs")
        expect(table).to_have_attribute("data-indexing", "")  # still indexing: rows say so
        assert page.locator('meta[http-equiv="refresh"]').count() == 0
        mark_document(page)
        page.locator("a.rv-sort").first.focus()
        expect(table).not_to_have_attribute("data-indexing", "", timeout=60_000)
        expect(page.locator(".rv-run-reading")).to_have_count(3)  # every run's reading came in
        assert same_document(page)  # swapped in place: no reload
        assert page.evaluate("document.activeElement.classList.contains('rv-sort')")
        tab.assert_clean()
