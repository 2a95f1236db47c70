"""The trends page in a real headless Chromium against real `manage.py visualize` servers.

Every expected number (means, rates, deltas, the smoothed curve, the reading's slope) is
computed here from the records these tests write, never read back from the page or the API;
only the heuristics' thresholds (and their noise measure) are imported from the store.
One shared server (`viewer`) holds a rising train run and an eval run with two datasets and a
step without rewards; the live, many-steps and empty cases start servers of their own.
"""

from __future__ import annotations

import re
from pathlib import Path
from statistics import fmean
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from rollouts.presentation import format_number, format_share, format_share_delta
from rollouts.store.cards import ABNORMAL_NOISE
from rollouts.store.reading import (
    METRICS,
    MIN_STEPS,
    PLATEAU_CV,
    PLATEAU_RANGE,
    WINDOW,
    noise,
)
from tests.support.browser import (
    DEFAULT_POLL_MS,
    FAST_POLL_ENV,
    FAST_POLL_MS,
    Tab,
    intervals,
    live_timeout_ms,
    mark_document,
    poll_events,
    poll_starts,
    record_poll_events,
    requests_so_far,
    same_document,
    wait_until_every_poll_is_announced,
    write_step_file,
)
from tests.support.data import relax_line
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

# The live cases' servers poll every FAST_POLL_MS; a new step takes a poll plus indexing.
LIVE_WAIT_MS = live_timeout_ms(FAST_POLL_MS)

# -- the shared data dir ---------------------------------------------------------------------
TRAIN_STEPS = range(6)
PER_STEP = 8  # samples per step, in groups of two
TRUNCATED = [0, 1, 1, 1, 1, 5]  # samples truncated at each step: the last one jumps


def train_record(step: int, i: int) -> dict[str, Any]:
    # Each step's rewards are 0.0-0.3 twice over, plus 0.05 a step: the mean rises steadily.
    return {
        "prompt": f"question {i} of step {step}",
        "response": f"answer {i}",
        "reward": round(((step + i) % 4) * 0.1 + 0.05 * step, 6),
        "response_length": 100 + 10 * step + (i * step) % 7,
        "status": "truncated" if i < TRUNCATED[step] else "completed",
        "group_index": i // 2,
    }


TRAIN = {s: [train_record(s, i) for i in range(PER_STEP)] for s in TRAIN_STEPS}

XSS_DATASET = "<img src=x onerror=window.__xss=1>"  # no quotes: it goes into CSS selectors
EVAL_DATASETS = ["gsm8k", XSS_DATASET]
EVAL_STEPS = range(4)
NO_REWARD_STEP = 2  # its records have no reward: a gap in the curve, never a 0
NO_VALUE = "\u2013"  # what the page prints for a missing value (an en dash)


def eval_record(step: int, i: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "prompt": f"eval question {i}",
        "response": f"eval answer {i}",
        "reward": float((i + step) % 3 == 0),
        "response_length": 50 + i,
        "status": "completed",
        "dataset": EVAL_DATASETS[i % 2],
        "group_index": i,
    }
    if step == NO_REWARD_STEP:
        del record["reward"]
    return record


EVAL = {s: [eval_record(s, i) for i in range(6)] for s in EVAL_STEPS}


# What `viewer` (conftest.py) serves.
SERVED = {
    **{("train", step): records for step, records in TRAIN.items()},
    **{("eval", step): records for step, records in EVAL.items()},
}


# -- expectations from the records -----------------------------------------------------------
def mean_reward(records: list[dict[str, Any]]) -> float:
    return fmean(r["reward"] for r in records)


def truncation_rate(records: list[dict[str, Any]]) -> float:
    return sum(r["status"] == "truncated" for r in records) / len(records)


def dataset_accuracy(records: list[dict[str, Any]], dataset: str) -> float:
    return fmean(r["reward"] for r in records if r["dataset"] == dataset)


def number_text(value: float) -> str:
    """A number as the page prints it: the number rule, the server's (the scripts' lib/numbers.js
    prints the same: tests/js/numbers.cases.json)."""
    return format_number(value)


def share_text(value: float) -> str:
    return format_share(value)


def ema(values: list[float], weight: float) -> list[float]:
    """TensorBoard's debiased exponential moving average."""
    last, out = 0.0, []
    for n, value in enumerate(values, start=1):
        last = last * weight + (1 - weight) * value
        out.append(last / (1 - weight**n))
    return out


def least_squares_slope(values: list[float]) -> float:
    xs = range(len(values))
    mean_x, mean_y = fmean(xs), fmean(values)
    num = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, values, strict=True))
    return num / sum((x - mean_x) ** 2 for x in xs)


# -- page helpers ----------------------------------------------------------------------------
def trends_url(bucket: str, query: str = "") -> str:
    return f"/{bucket}/trends/" + (f"?{query}" if query else "")


def open_trends(tab: Tab, server: ServerProcess, bucket: str, query: str = "") -> Page:
    """The trends page once every step is indexed and drawn."""
    page = tab.page
    page.goto(server.url(trends_url(bucket, query)))
    expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
    return page


def points(page: Page, key: str) -> Locator:
    return page.locator(f'#rv-trend-chart .rv-trend-line[data-key="{key}"] a.rv-trend-point-link')


def point(page: Page, key: str, step: int) -> Locator:
    return page.locator(
        f'#rv-trend-chart .rv-trend-line[data-key="{key}"] a[data-step="{step}"] circle'
    )


def center(locator: Locator) -> tuple[float, float]:
    box = locator.bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def hover_step(page: Page, key: str, step: int) -> None:
    point(page, key, step).hover()  # scrolled into view first: the mouse only moves on screen
    expect(page.locator("#rv-crosshair-values")).to_have_attribute("data-step", str(step))


def crosshair_shown(page: Page) -> bool:
    """Whether the crosshair is drawn (a vertical line has no width: Playwright calls it hidden)."""
    return page.locator("#rv-trend-chart .rv-crosshair").evaluate(
        "g => getComputedStyle(g).display !== 'none'"
    )


def tip_row(page: Page, key: str) -> Locator:
    return page.locator(f'#rv-crosshair-values li[data-key="{key}"]')


def tip_value(page: Page, key: str, which: str = ".rv-tip-value") -> float:
    return float(tip_row(page, key).locator(which).get_attribute("data-value") or "nan")


def path_d(page: Page, key: str, which: str) -> str:
    d = page.locator(f'#rv-trend-chart .rv-trend-line[data-key="{key}"] path.{which}')
    return d.get_attribute("d") or ""


def reading_row(page: Page, number: str) -> Locator:
    return page.locator(f'#rv-reading tr[data-number="{number}"] td')


def card(page: Page, key: str) -> Locator:
    return page.locator(f'#rv-cards .rv-metric-card[data-key="{key}"]')


def wait_for_path(page: Page, path: str) -> None:
    page.wait_for_url(lambda url: urlsplit(url).path.startswith(path))


# -- the chart -------------------------------------------------------------------------------
def test_hover_shows_the_crosshair_and_the_mean_reward_of_that_step(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "train")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-series", "reward_mean")
    expect(points(page, "reward_mean")).to_have_count(len(TRAIN))
    crosshair = page.locator("#rv-trend-chart .rv-crosshair-line")
    assert not crosshair_shown(page)
    for step in (1, 4):
        hover_step(page, "reward_mean", step)
        assert crosshair_shown(page)
        cx = float(point(page, "reward_mean", step).get_attribute("cx") or "nan")
        assert float(crosshair.get_attribute("x1") or "nan") == pytest.approx(cx, abs=0.01)
        tooltip = page.locator("#rv-crosshair-values")
        expect(tooltip).to_contain_text(f"Step {step}")
        expected = mean_reward(TRAIN[step])
        expect(tip_row(page, "reward_mean").locator(".rv-tip-value")).to_have_text(
            number_text(expected)
        )
        assert tip_value(page, "reward_mean") == pytest.approx(expected)
    page.mouse.move(1, 1)  # off the chart: the crosshair goes
    expect(page.locator("#rv-crosshair-values")).to_be_hidden()
    assert not crosshair_shown(page)
    tab.assert_clean()


def test_clicking_a_point_opens_that_step(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "train")
    step = 2
    link = page.locator(f'.rv-trend-line[data-key="reward_mean"] a[data-step="{step}"]')
    assert urlsplit(link.get_attribute("href") or "").path == f"/train/{step}/"
    tab.assert_clean()
    point(page, "reward_mean", step).click()
    wait_for_path(page, f"/train/{step}/")


def test_clicking_the_chart_opens_the_nearest_step(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "train")
    step = 3
    page.locator("#rv-trend-chart").scroll_into_view_if_needed()
    x, _ = center(point(page, "reward_mean", step))
    box = page.locator("#rv-trend-chart").bounding_box()
    assert box is not None
    # Near the top of the plot, above every point (the axis leaves headroom): the chart, not a link.
    page.mouse.move(x + 3, box["y"] + 8)
    expect(page.locator("#rv-crosshair-values")).to_have_attribute("data-step", str(step))
    tab.assert_clean()
    page.mouse.click(x + 3, box["y"] + 8)
    wait_for_path(page, f"/train/{step}/")


def test_keyboard_moves_the_crosshair_and_enter_opens_the_step(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "train")
    last = max(TRAIN_STEPS)
    page.locator("#rv-trend-chart").focus()
    tooltip = page.locator("#rv-crosshair-values")
    expect(tooltip).to_have_attribute("data-step", str(last))
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(tooltip).to_have_attribute("data-step", str(last - 2))
    page.keyboard.press("Home")
    expect(tooltip).to_have_attribute("data-step", str(min(TRAIN_STEPS)))
    page.keyboard.press("ArrowRight")
    expect(tooltip).to_have_attribute("data-step", str(min(TRAIN_STEPS) + 1))
    tab.assert_clean()
    page.keyboard.press("Enter")
    wait_for_path(page, f"/train/{min(TRAIN_STEPS) + 1}/")


def test_truncation_rate_curve_shows_each_steps_rate_and_survives_a_reload(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "train")
    mark_document(page)
    page.select_option("#rv-series", "truncation_rate")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-series", "truncation_rate")
    expect(points(page, "truncation_rate")).to_have_count(len(TRAIN))
    expect(points(page, "reward_mean")).to_have_count(0)
    assert same_document(page)
    for step in (0, 3, 5):
        hover_step(page, "truncation_rate", step)
        expected = truncation_rate(TRAIN[step])
        assert tip_value(page, "truncation_rate") == pytest.approx(expected)
        expect(tip_row(page, "truncation_rate").locator(".rv-tip-value")).to_have_text(
            share_text(expected)
        )
    assert "series=truncation_rate" in page.url
    page.reload()
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-series", "truncation_rate")
    expect(page.locator("#rv-series")).to_have_value("truncation_rate")
    tab.assert_clean()


def test_status_mix_draws_one_line_per_status_with_a_legend(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "train")
    page.select_option("#rv-series", "all:status")
    statuses = sorted({r["status"] for records in TRAIN.values() for r in records})
    lines = page.locator("#rv-trend-chart .rv-trend-line")
    expect(lines).to_have_count(len(statuses))
    assert sorted(lines.evaluate_all("ls => ls.map(l => l.dataset.key)")) == [
        f"status.{s}" for s in statuses
    ]
    classes = lines.evaluate_all("ls => ls.map(l => l.getAttribute('class'))")
    assert len(set(classes)) == len(statuses), classes  # each line its own colour class
    expect(page.locator("#rv-legend .rv-legend-item")).to_have_count(len(statuses))
    step = max(TRAIN_STEPS)
    hover_step(page, "status.truncated", step)
    for status in statuses:
        share = sum(r["status"] == status for r in TRAIN[step]) / PER_STEP
        assert tip_value(page, f"status.{status}") == pytest.approx(share)
    tab.assert_clean()


def test_smoothing_draws_the_debiased_ema_and_zero_draws_the_raw_line(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "train")
    means = [mean_reward(TRAIN[s]) for s in TRAIN_STEPS]
    last = max(TRAIN_STEPS)

    page.locator("#rv-smoothing").fill("0.9")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-smoothing", "0.9")
    expect(page.locator("#rv-smoothing-value")).to_have_text("0.90")
    assert path_d(page, "reward_mean", "rv-ema-line") != path_d(page, "reward_mean", "rv-raw-line")
    expect(points(page, "reward_mean")).to_have_count(len(TRAIN))  # raw points stay
    hover_step(page, "reward_mean", last)
    smoothed = tip_value(page, "reward_mean", ".rv-tip-smooth")
    assert smoothed == pytest.approx(ema(means, 0.9)[-1])
    assert smoothed != pytest.approx(means[-1])
    assert tip_value(page, "reward_mean") == pytest.approx(means[-1])

    page.reload()  # the choice is remembered
    expect(page.locator("#rv-smoothing")).to_have_value("0.9")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-smoothing", "0.9")

    page.locator("#rv-smoothing").fill("0")
    expect(page.locator("#rv-trend-chart")).to_have_attribute("data-smoothing", "0")
    raw = path_d(page, "reward_mean", "rv-raw-line")
    assert raw.count("L") == len(TRAIN) - 1
    assert path_d(page, "reward_mean", "rv-ema-line") == raw
    tab.assert_clean()


def test_a_step_without_rewards_leaves_a_gap_not_a_zero(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "eval")
    with_reward = [s for s in EVAL_STEPS if s != NO_REWARD_STEP]
    drawn = points(page, "reward_mean").evaluate_all("as => as.map(a => +a.dataset.step)")
    assert drawn == with_reward
    raw = path_d(page, "reward_mean", "rv-raw-line")
    assert raw.count("M") == 2, raw  # two runs of steps: before and after the gap
    hover_step(page, "reward_mean", with_reward[-1])
    page.locator("#rv-trend-chart").press("ArrowLeft")  # to the step before: the gap
    expect(page.locator("#rv-crosshair-values")).to_have_attribute("data-step", str(NO_REWARD_STEP))
    expect(tip_row(page, "reward_mean").locator(".rv-tip-value")).to_have_text(NO_VALUE)
    tab.assert_clean()


def test_eval_accuracy_per_dataset_draws_each_dataset_with_its_name_as_text(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "eval")
    page.select_option("#rv-series", "all:dataset")
    legend = page.locator("#rv-legend .rv-legend-item")
    expect(legend).to_have_count(len(EVAL_DATASETS))
    # The markup in a dataset's name is shown as text, never parsed.
    assert sorted(legend.all_text_contents()) == sorted(f"Accuracy {n}" for n in EVAL_DATASETS)
    step = max(EVAL_STEPS)
    hover_step(page, "dataset.gsm8k", step)
    for name in EVAL_DATASETS:
        expected = dataset_accuracy(EVAL[step], name)
        assert tip_value(page, f"dataset.{name}") == pytest.approx(expected)
    assert page.evaluate("() => window.__xss") is None
    tab.assert_clean()


# -- reading and cards -----------------------------------------------------------------------
def test_reading_box_shows_rising_with_its_numbers_and_thresholds(viewer: ServerProcess, tab: Tab):
    page = open_trends(tab, viewer, "train")
    means = [mean_reward(TRAIN[s]) for s in TRAIN_STEPS]
    recent = means[-WINDOW:]
    slope = least_squares_slope(recent)
    assert slope > 0  # the records rise: the reading must say so
    reading = page.locator("#rv-reading")
    expect(reading).to_have_attribute("data-reading", "rising")
    expect(reading.locator(".rv-reading-name")).to_have_text("rising")
    expect(reading.locator(".rv-reading-why")).not_to_be_empty()
    expect(reading_row(page, "steps")).to_have_text(
        ["steps with a reward", str(len(means)), f"min_steps {MIN_STEPS}", re.compile("."), "yes"]
    )
    expect(reading_row(page, "window_steps").nth(1)).to_have_text(str(len(recent)))
    expect(reading_row(page, "slope").nth(1)).to_have_text(number_text(slope))
    expect(reading_row(page, "slope").nth(4)).to_have_text("no")  # not "slope < 0"
    expect(reading_row(page, "cv").nth(2)).to_have_text(f"plateau_cv {PLATEAU_CV}")
    expect(reading_row(page, "range_ratio").nth(2)).to_have_text(f"plateau_range {PLATEAU_RANGE}")
    level = fmean(recent)
    expect(reading_row(page, "level").nth(1)).to_have_text(number_text(level))
    expect(reading.locator(".rv-disclaimer")).to_contain_text("heuristic")
    # Truncation rises over the window: a warning says so.
    expect(page.locator("#rv-warnings li")).to_contain_text(["truncation rate is rising"])
    tab.assert_clean()


def test_metric_cards_show_latest_value_change_and_flag_the_abnormal_jump(
    viewer: ServerProcess, tab: Tab
):
    page = open_trends(tab, viewer, "train")
    last, before = max(TRAIN_STEPS), max(TRAIN_STEPS) - 1
    reward = card(page, "reward_mean")
    latest, previous = mean_reward(TRAIN[last]), mean_reward(TRAIN[before])
    expect(reward.locator(".rv-card-latest")).to_have_text(number_text(latest))
    delta = latest - previous
    expect(reward.locator(".rv-card-delta")).to_have_text(
        f"{'+' if delta > 0 else '-'}{number_text(abs(delta))} since step {before}"
    )
    expect(reward.locator("svg.rv-spark path")).to_have_count(1)
    expect(reward).not_to_have_class(re.compile(r"\brv-abnormal\b"))

    rates = [truncation_rate(TRAIN[s]) for s in TRAIN_STEPS]
    jump = rates[-1] - rates[-2]
    # As the cards define it: beyond 3x the recent noise (and the rate's floor) is abnormal.
    floor = next(m.floor for m in METRICS if m.key == "truncation_rate")
    assert jump > max(ABNORMAL_NOISE * noise(rates[-11:-1]), floor)
    truncation = card(page, "truncation_rate")
    expect(truncation.locator(".rv-card-latest")).to_have_text(share_text(rates[-1]))
    expect(truncation.locator(".rv-card-delta")).to_have_text(
        f"{format_share_delta(jump)} since step {before}"
    )
    expect(truncation).to_have_class(re.compile(r"\brv-abnormal\b"))
    expect(truncation.locator(".rv-card-why")).to_contain_text("since the previous step")
    tab.assert_clean()


def test_no_console_errors_in_dark_theme(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.emulate_media(color_scheme="dark")
    open_trends(tab, viewer, "train")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    hover_step(page, "reward_mean", 2)
    expect(page.locator("#rv-trends-error")).to_be_hidden()
    tab.assert_clean()


# -- live, many steps, empty -----------------------------------------------------------------
def trends_loads_after(page: Page, step: int) -> list[float]:
    """Start times of the page's incremental loads of the trends JSON (`?after=step`)."""
    return page.evaluate(
        """step => {
            const trends = new URL(document.getElementById("rv-main").dataset.trendsUrl,
                                   location.href).pathname;
            return performance.getEntriesByType("resource").filter(e => {
                const url = new URL(e.name);
                return url.pathname === trends && url.searchParams.get("after") === String(step);
            }).map(e => e.startTime);
        }""",
        step,
    )


def test_a_new_step_appears_without_a_reload_and_a_growing_one_updates(tab: Tab, tmp_path: Path):
    root = tmp_path / "rollout_result"
    for step in (0, 1):
        write_step_file(root, "train", step, TRAIN[step])
    first, rest = TRAIN[2][:3], TRAIN[2][3:]
    assert mean_reward(first) != pytest.approx(mean_reward(TRAIN[2]))  # growing changes it
    record_poll_events(tab.page)
    with run_visualize(root, env=FAST_POLL_ENV) as server:
        page = open_trends(tab, server, "train")
        expect(points(page, "reward_mean")).to_have_count(2)
        mark_document(page)

        # As a run writes: the new file appears whole (renamed into place), then grows.
        staged = write_step_file(tmp_path / "staging", "", 2, first)
        staged.rename(root / "train" / "2.jsonl")
        expect(points(page, "reward_mean")).to_have_count(3, timeout=LIVE_WAIT_MS)
        # It came through the header's poll: live.js announced the new step (rv:poll), then the
        # page read the trends after its second-to-last step (0: step 1 may have grown); no
        # poll of its own.
        announced = [e["time"] for e in poll_events(page) if (e["cursor"] or {}).get("after") == 2]
        loads = trends_loads_after(page, 0)
        assert announced and loads, (poll_events(page), loads)
        assert loads[0] >= announced[0]
        wait_until_every_poll_is_announced(page)
        hover_step(page, "reward_mean", 2)
        value = tip_row(page, "reward_mean").locator(".rv-tip-value")
        expect(value).to_have_text(number_text(mean_reward(first)))

        with (root / "train" / "2.jsonl").open("a", encoding="utf-8") as step_file:
            step_file.write("".join(relax_line(r) for r in rest))
        expected = number_text(mean_reward(TRAIN[2]))
        latest = card(page, "reward_mean").locator(".rv-card-latest")
        expect(latest).to_have_text(expected, timeout=LIVE_WAIT_MS)
        expect(points(page, "reward_mean")).to_have_count(3)  # replaced, not added
        hover_step(page, "reward_mean", 2)  # again: the page above the chart may have grown
        expect(value).to_have_text(expected)
        assert same_document(page), "the page reloaded"
        expect(page.locator("#rv-header")).to_be_visible()
        expect(page.locator("#rv-trends-error")).to_be_hidden()
        tab.assert_clean()
        tab.close()


MANY = 60


def test_many_steps_show_indexing_progress_then_every_point(tab: Tab, tmp_path: Path):
    root = tmp_path / "rollout_result"
    for step in range(MANY):
        write_step_file(root, "train", step, [train_record(step % 6, i) for i in range(4)])
    page = tab.page
    # Every state the progress line goes through, recorded from the first paint on.
    page.add_init_script(
        """
        window.__progress = [];
        new MutationObserver(() => {
          const p = document.getElementById("rv-trends-progress");
          if (p) window.__progress.push([p.textContent.trim(), p.hidden]);
        }).observe(document, {subtree: true, childList: true, characterData: true,
                              attributes: true});
        """
    )
    with run_visualize(root) as server:
        page.goto(server.url(trends_url("train")))
        progress = page.locator("#rv-trends-progress")
        expect(progress).to_have_attribute("data-done", "true")
        expect(progress).to_be_hidden()
        expect(points(page, "reward_mean")).to_have_count(MANY)
        seen = page.evaluate("() => window.__progress")
        counts = [
            (int(m.group(1)), int(m.group(2)))
            for text, _ in seen
            if (m := re.search(r"Indexed (\d+) / (\d+) steps", text))
        ]
        assert counts, seen
        assert all(total == MANY for _, total in counts), counts
        indexed = [n for n, _ in counts]
        assert indexed == sorted(indexed) and indexed[-1] == MANY, counts
        tab.assert_clean()
        tab.close()


def test_empty_bucket_says_it_is_waiting_for_the_first_step(tab: Tab, tmp_path: Path):
    root = tmp_path / "rollout_result"
    (root / "train").mkdir(parents=True)
    with run_visualize(root, env=FAST_POLL_ENV) as server:
        page = open_trends(tab, server, "train")
        expect(page.locator("#rv-trends-empty")).to_be_visible()
        expect(page.locator("#rv-trends-empty")).to_contain_text("Waiting for the first step")
        expect(page.locator("#rv-trend-chart")).to_be_hidden()
        expect(page.locator("#rv-reading")).to_have_attribute("data-reading", "waiting")
        expect(page.locator("#rv-cards .rv-metric-card")).to_have_count(0)
        mark_document(page)
        write_step_file(root, "train", 0, TRAIN[0])  # the first step arrives: the chart appears
        expect(points(page, "reward_mean")).to_have_count(1, timeout=LIVE_WAIT_MS)
        expect(page.locator("#rv-trends-empty")).to_be_hidden()
        assert same_document(page)
        tab.assert_clean()
        tab.close()


def test_the_trends_page_polls_from_one_poller_only(tab: Tab, tmp_path: Path):
    """live.js polls; the curves follow its answers. A second poller (trends.js asking on its
    own, as it used to) would put a request between two of live.js's, or beside one."""
    root = tmp_path / "rollout_result"
    for step in (0, 1):
        write_step_file(root, "train", step, TRAIN[step])
    record_poll_events(tab.page)
    with run_visualize(root, env=FAST_POLL_ENV) as server:
        page = open_trends(tab, server, "train")
        expect(page.locator("#rv-header")).to_have_attribute("data-poll-ms", str(FAST_POLL_MS))
        since = page.evaluate("() => performance.now()")
        # Long enough for a poller at the default pace, too, to have asked at least once.
        window_ms = DEFAULT_POLL_MS + 2 * FAST_POLL_MS
        page.wait_for_function(
            """([since, span]) => window.__rvPollEvents.some(e => e.time - since >= span)""",
            arg=[since, window_ms],
            timeout=live_timeout_ms(window_ms),
        )
        starts = [t for t in poll_starts(page) if t >= since]
        assert len(starts) >= 5, starts  # several periods, whatever the runner's load
        # Never two requests closer than a poll period: none twice at once, none in between.
        assert min(intervals(starts)) >= 0.9 * FAST_POLL_MS, intervals(starts)
        wait_until_every_poll_is_announced(page)  # and each answer went to the page as rv:poll
        expect(points(page, "reward_mean")).to_have_count(2)
        tab.assert_clean()
        tab.close()


def test_a_restarted_viewer_draws_every_cached_step_from_the_page_alone(tab: Tab, tmp_path: Path):
    """After a restart the disk cache has every step: the page's own answer draws them all,
    without waiting for a second request to the trends JSON."""
    root = tmp_path / "rollout_result"
    for step in (0, 1, 2, 3):
        write_step_file(root, "train", step, TRAIN[step])
    cache = ["--disk-cache", str(tmp_path / "cache")]
    with run_visualize(root, *cache) as server:
        open_trends(tab, server, "train")  # indexed, and saved to the disk cache
        tab.page.goto("about:blank")  # no poll left to fail while this server stops
    with run_visualize(root, *cache) as server:
        page, sent = tab.page, len(tab.requests)
        page.goto(server.url(trends_url("train")))
        expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
        expect(points(page, "reward_mean")).to_have_count(4)
        sent_since = requests_so_far(tab)[sent:]
        assert any(urlsplit(u).path == "/train/trends/" for u in sent_since)
        trends_json = [u for u in sent_since if urlsplit(u).path.endswith("/trends")]
        assert trends_json == []
        expect(card(page, "reward_mean").locator(".rv-card-latest")).to_have_text(
            number_text(mean_reward(TRAIN[3]))
        )
        tab.assert_clean()
