"""Runs compared on every chart, in a real headless Chromium against a real `manage.py
visualize` serving three runs: a ticked run is drawn in every small chart of the grid (on the
same steps axis) as well as the large one, each small chart has its axes' ends, a legend says
which run is which, and a run has one colour (from its name) on its trends page, on another
run's and on the run picker.

Expected numbers come from the records these tests write; expected colours from
`presentation.run_colour_index`, itself checked against published FNV-1a vectors
(tests/unit/test_run_colour.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from statistics import fmean
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from rollouts.presentation import run_colour_index
from tests.support.a11y import axe_violations
from tests.support.browser import Tab, write_step_file
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEPS = {"alpha": range(6), "beta": range(8), "gamma": range(4)}  # beta runs longest
SHIFT = {"alpha": 0.0, "beta": 0.2, "gamma": -0.1}


def record(run: str, step: int, i: int) -> dict[str, Any]:
    return {
        "prompt": f"{run} question {i}",
        "response": f"answer {i}",
        "response_length": 100 + 10 * step + i,
        "status": "truncated" if i == 0 else "completed",
        "group_index": i // 2,
        "reward": round(0.1 * step + SHIFT[run] + (0.05 if i % 2 else -0.05), 6),
    }


def mean_reward(run: str, step: int) -> float:
    return fmean(record(run, step, i)["reward"] for i in range(4))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("trends-runs")
    for run, steps in STEPS.items():
        for step in steps:
            write_step_file(root / run / "rollout_result", "train", step,
                            [record(run, step, i) for i in range(4)])  # fmt: skip
    with run_visualize(root) as server:
        yield server


def colour(run: str) -> str:
    return f"rv-run-colour-{run_colour_index(run)}"


def open_trends(page: Page, server: ServerProcess, run: str, query: str = "") -> Page:
    page.goto(server.url(f"/runs/{run}/train/trends/" + (f"?{query}" if query else "")))
    expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
    return page


def panels(page: Page):
    return page.locator("#rv-trend-grid .rv-mini")


def settled(page: Page, *runs: str) -> None:
    """Wait until the grid's mean reward draws every step of each run: a run the server is
    still indexing comes in parts, and the grid is drawn again as each part comes."""
    page.wait_for_function(
        """(counts) => Object.entries(counts).every(([run, n]) => {
            const path = document.querySelector(
                `#rv-trend-grid .rv-mini[data-series="reward_mean"] path[data-run="${run}"]`);
            return path && (path.getAttribute("d").match(/[ML]/g) || []).length === n;
        })""",
        arg={run: len(STEPS[run]) for run in runs},
    )


def test_a_ticked_run_is_drawn_in_every_chart_of_the_grid(runs, tab: Tab):
    assert run_colour_index("alpha") != run_colour_index("beta")  # else nothing tells them apart
    page = open_trends(tab.page, runs, "alpha")
    count = panels(page).count()
    assert count >= 5  # reward, length, truncation, ... and the status mix
    expect(page.locator("#rv-trend-grid path[data-run]")).to_have_count(0)
    expect(page.locator("#rv-grid-legend")).to_be_hidden()
    page.locator('#rv-runs-overlay input[value="beta"]').check()
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-runs", "2")
    settled(page, "alpha", "beta")  # one point per step of each run, on the steps of both
    for i in range(count):
        panel = panels(page).nth(i)
        for run in ("alpha", "beta"):
            lines = panel.locator(f'path.rv-mini-line[data-run="{run}"]')
            expect(lines.first).to_be_attached()
            for n in range(lines.count()):
                expect(lines.nth(n)).to_have_class(re.compile(rf"\b{colour(run)}\b"))
    # beta's steps are the longer axis
    reward = page.locator('#rv-trend-grid .rv-mini[data-series="reward_mean"]')
    expect(reward.locator(".rv-mini-last")).to_have_attribute("data-value", str(max(STEPS["beta"])))
    # The panel's number is still the current run's latest value.
    latest = float(reward.locator(".rv-mini-latest").get_attribute("data-value") or "nan")
    assert latest == pytest.approx(mean_reward("alpha", max(STEPS["alpha"])))
    page.locator('#rv-runs-overlay input[value="beta"]').uncheck()
    expect(page.locator("#rv-trend-grid path[data-run]")).to_have_count(0)
    expect(reward.locator(".rv-mini-last")).to_have_attribute(
        "data-value", str(max(STEPS["alpha"]))
    )
    tab.assert_clean()


def test_each_chart_of_the_grid_has_its_axes_ends(runs, tab: Tab):
    page = open_trends(tab.page, runs, "alpha", "runs=beta,gamma")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-runs", "3")
    settled(page, "alpha", "beta", "gamma")
    # Every panel's boxes read at once, from one drawing of the grid.
    measured = page.evaluate(
        """() => [...document.querySelectorAll("#rv-trend-grid .rv-mini")].map((panel) => {
            const box = (s) => {
                const found = panel.querySelector(s);
                if (!found) return null;
                const r = found.getBoundingClientRect();
                return {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                        text: found.textContent};
            };
            return [panel.dataset.series, box(".rv-mini-chart"), box(".rv-mini-high"),
                    box(".rv-mini-low"), box(".rv-mini-first"), box(".rv-mini-last")];
        })"""
    )
    assert len(measured) >= 5
    for series, chart, *labels in measured:
        assert chart is not None and chart["right"] > chart["left"], series
        for label in labels:
            assert label is not None and label["text"].strip(), (series, labels)
        for label in labels[:2]:  # the values beside the chart, on its left
            assert label["right"] <= chart["left"] + 0.5, (series, label, chart)
            assert chart["top"] - 1 <= label["top"] and label["bottom"] <= chart["bottom"] + 1
        assert labels[0]["top"] < labels[1]["top"], series  # the highest above the lowest
        for label in labels[2:]:  # the steps below it, the first left of the last
            assert label["top"] >= chart["bottom"] - 0.5, (series, label, chart)
        assert labels[2]["right"] <= labels[3]["left"], series
    reward = page.locator('#rv-trend-grid .rv-mini[data-series="reward_mean"]')
    every = [mean_reward(run, step) for run, steps in STEPS.items() for step in steps]
    high = float(reward.locator(".rv-mini-high").get_attribute("data-value") or "nan")
    low = float(reward.locator(".rv-mini-low").get_attribute("data-value") or "nan")
    assert (high, low) == (pytest.approx(max(every)), pytest.approx(min(every)))
    expect(reward.locator(".rv-mini-first")).to_have_attribute("data-value", "0")
    tab.assert_clean()


def test_the_legends_say_which_run_is_which_and_which_is_current(runs, tab: Tab):
    page = open_trends(tab.page, runs, "beta", "runs=alpha")
    legend = page.locator("#rv-grid-legend .rv-legend-item")
    expect(legend).to_have_text(["beta (current)", "alpha"])
    expect(legend.nth(0)).to_have_class(re.compile(rf"\b{colour('beta')}\b"))
    expect(legend.nth(1)).to_have_class(re.compile(rf"\b{colour('alpha')}\b"))
    big = page.locator("#rv-legend .rv-legend-item")
    expect(big).to_have_text(["beta (current)", "alpha"])
    expect(big.nth(1)).to_have_class(re.compile(rf"\b{colour('alpha')}\b"))
    current = page.locator('#rv-runs-overlay label:has(input[value="beta"])')
    expect(current).to_contain_text("(current)")
    tab.assert_clean()


def stroke(page: Page, selector: str) -> str:
    return page.locator(selector).first.evaluate("(e) => getComputedStyle(e).stroke")


def swatch(page: Page, selector: str) -> str:
    return page.locator(selector).first.evaluate("(e) => getComputedStyle(e).backgroundColor")


def test_a_run_has_one_colour_on_every_page(runs, tab: Tab):
    page = tab.page
    seen: dict[str, set[str]] = {"alpha": set(), "beta": set()}
    for current, other in (("alpha", "beta"), ("beta", "alpha")):
        open_trends(page, runs, current, f"runs={other}")
        expect(page.locator("#rv-trend-chart")).to_have_attribute("data-runs", "2")
        settled(page, current, other)
        for run in (current, other):
            box = f'#rv-runs-overlay label:has(input[value="{run}"]) .rv-run-swatch'
            expect(page.locator(box)).to_have_class(re.compile(rf"\b{colour(run)}\b"))
            seen[run].add(swatch(page, box))
            seen[run].add(stroke(page, f'#rv-trend-grid path[data-run="{run}"]'))
            key = f'#rv-trend-chart .rv-trend-line[data-key="reward_mean@{run}"] .rv-ema-line'
            seen[run].add(stroke(page, key))
    page.goto(runs.url("/"))
    expect(page.locator(".rv-run-reading")).to_have_count(3, timeout=60_000)
    for run in ("alpha", "beta", "gamma"):
        pick = page.locator(f'tr[data-run="{run}"] .rv-run-swatch')
        expect(pick).to_have_class(re.compile(rf"\b{colour(run)}\b"))
        if run in seen:
            seen[run].add(swatch(page, f'tr[data-run="{run}"] .rv-run-swatch'))
    assert len(seen["alpha"]) == 1 and len(seen["beta"]) == 1, seen  # one colour each
    assert seen["alpha"] != seen["beta"]
    tab.assert_clean()


def test_the_overlaid_grid_fits_a_phone(runs, browser: Browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        tab = Tab.attach(context.new_page())
        page = open_trends(tab.page, runs, "alpha", "runs=beta,gamma")
        expect(page.locator("#rv-trend-chart")).to_have_attribute("data-runs", "3")
        settled(page, "alpha", "beta", "gamma")
        overflow = page.evaluate(
            "() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
        )
        assert overflow == 0
        first = panels(page).first
        outer = first.bounding_box()
        assert outer is not None
        for part in (".rv-mini-high", ".rv-mini-last", ".rv-mini-chart"):
            box = first.locator(part).bounding_box()
            assert box is not None and box["x"] + box["width"] <= outer["x"] + outer["width"]
        tab.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_overlay_has_no_serious_accessibility_violation(runs, browser: Browser, theme):
    context = browser.new_context(
        color_scheme=theme, viewport={"width": 1440, "height": 900}, bypass_csp=True
    )  # axe is injected as an inline script, which the pages' CSP refuses
    try:
        page = open_trends(context.new_page(), runs, "alpha", "runs=beta,gamma")
        expect(page.locator("#rv-trend-chart")).to_have_attribute("data-runs", "3")
        settled(page, "alpha", "beta", "gamma")
        expect(page.locator("#rv-grid-legend .rv-legend-item")).to_have_count(3)
        assert axe_violations(page) == []
    finally:
        context.close()
