"""The run picker's table (latest mean reward, sparkline, steps, last change; sortable), the
trends JSON's list of runs to overlay, and the cards' direction."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from statistics import fmean

import pytest
from django.core.cache import caches

from rollouts.presentation import run_colour_index
from rollouts.presentation.spark import spark_path
from rollouts.store.cards import metric_cards
from tests.support.data import relax_line, sample
from tests.support.wait import wait_for

PREFIX = "/portal/rollouts"
# Each run's steps: rewards of each sample; and how many seconds ago its files changed.
RUNS = {
    "alpha": ({0: [0.0, 1.0], 1: [1.0, 1.0]}, 3600),
    "beta": ({0: [0.0, 0.0], 1: [0.0, 0.5], 2: [0.5, 0.5]}, 60),
    "gamma": ({0: [0.2, 0.4]}, 7200),
}


def write_run(root: Path, name: str, steps: dict[int, list[float]], age_s: float) -> Path:
    train = root / name / "rollout_result" / "train"
    train.mkdir(parents=True)
    when = time.time() - age_s
    for step, rewards in steps.items():
        path = train / f"{step}.jsonl"
        path.write_text("".join(relax_line(sample(i, reward=r)) for i, r in enumerate(rewards)))
        os.utime(path, (when, when))
    return root / name / "rollout_result"


@pytest.fixture(autouse=True)
def runs(settings, tmp_path) -> None:
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {
        name: str(write_run(tmp_path, name, steps, age)) for name, (steps, age) in RUNS.items()
    }
    caches["rollouts"].clear()


def picker(client, query: str = "") -> str:
    # The first look starts indexing; the page refreshes itself until done.
    return wait_for(
        lambda: client.get(f"{PREFIX}/{query}").content.decode(),
        "the runs indexed",
        until=lambda html: "indexing" not in html,
    )


def order(html: str) -> list[str]:
    return re.findall(r'<tr class="rv-run-item[^"]*" data-run="(\w+)"', html)


def latest_mean(name: str) -> float:
    steps = RUNS[name][0]
    return fmean(steps[max(steps)])


def test_each_run_shows_its_latest_mean_reward_sparkline_steps_and_last_change(client):
    html = picker(client)
    assert order(html) == list(RUNS)  # as configured
    for name, (steps, _age) in RUNS.items():
        row = html.split(f'data-run="{name}"')[1].split("</tr>")[0]
        reward = re.search(r'class="rv-run-reward" data-value="([^"]+)"', row)
        assert reward and float(reward.group(1)) == pytest.approx(latest_mean(name))
        assert f'data-value="{len(steps)}"' in row
        assert '<path class="rv-spark-line" d="M' in row
    assert ">1 h ago<" in html and ">1 min ago<" in html and ">2 h ago<" in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?sort=reward&order=desc", sorted(RUNS, key=latest_mean, reverse=True)),
        ("?sort=reward&order=asc", sorted(RUNS, key=latest_mean)),
        ("?sort=steps&order=desc", sorted(RUNS, key=lambda n: -len(RUNS[n][0]))),
        ("?sort=changed&order=desc", sorted(RUNS, key=lambda n: RUNS[n][1])),
        ("?sort=name&order=desc", sorted(RUNS, reverse=True)),
    ],
)
def test_the_picker_sorts_by_the_column_the_url_names(client, query, expected):
    html = picker(client, query)
    assert order(html) == expected
    column = query.split("&")[0].removeprefix("?sort=")
    assert re.search(rf'<th aria-sort="\w+"><a class="rv-sort" data-sort="{column}"', html)


def test_the_trends_json_lists_the_runs_to_overlay_with_their_json(client):
    body = json.loads(client.get(f"{PREFIX}/runs/beta/api/jsonl/train/trends").content)
    assert body["runs"] == [
        {"name": name, "trends_url": f"{PREFIX}/runs/{name}/api/jsonl/train/trends",
         "current": name == "beta", "colour": run_colour_index(name)}
        for name in RUNS
    ]  # fmt: skip
    page = client.get(f"{PREFIX}/runs/beta/train/trends/").content.decode()
    assert f'data-trends-url="{PREFIX}/runs/alpha/api/jsonl/train/trends"' in page


def test_cards_carry_the_direction_that_colours_their_change():
    class P:
        def __init__(self, step: int, metrics: dict[str, float]) -> None:
            self.step, self.metrics = step, metrics

    points = [P(s, {"reward_mean": s / 10, "response_length_mean": 100.0 + s}) for s in range(5)]
    directions = {c["key"]: c["direction"] for c in metric_cards(points)}
    assert directions == {"reward_mean": 1, "response_length_mean": 0}


def test_a_sparkline_spans_its_box_and_a_single_point_is_still_drawn():
    d = spark_path([0.0, 1.0, 0.5], width=100, height=20)
    assert d == "M2.0,18.0L50.0,2.0L98.0,10.0"
    assert spark_path([0.3]).endswith("h1")
    assert spark_path([float("nan")]) == ""
