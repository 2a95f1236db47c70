"""A run's colour from its name (`presentation.run_colour_index`, FNV-1a over UTF-8 modulo the
palette), checked against the list its JavaScript twin is checked against
(tests/support/run-colours.json, tests/js/run-colour.test.mjs), and shown by the run picker
and the trends page's run checkboxes in the same colour."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.cache import caches

from rollouts.presentation import RUN_COLOURS, run_colour_index
from rollouts.presentation.runcolour import fnv1a32
from tests.support.data import relax_line, sample
from tests.support.wait import wait_for

SHARED = json.loads((Path(__file__).parents[1] / "support" / "run-colours.json").read_text("utf-8"))
PREFIX = "/portal/rollouts"
RUNS = ("alpha", "beta", "ß-lauf")


def test_the_palette_is_the_one_the_css_defines():
    assert SHARED["palette"] == RUN_COLOURS
    css = (Path(__file__).parents[2] / "rollouts/static/rollouts/viewer.css").read_text("utf-8")
    for index in range(RUN_COLOURS):
        assert re.search(rf"--rv-run-{index}: light-dark\(#\w+, #\w+\)", css), index
        assert f".rv-run-colour-{index} {{ --rv-line: var(--rv-run-{index}); }}" in css
    assert f"--rv-run-{RUN_COLOURS}:" not in css


@pytest.mark.parametrize("row", SHARED["names"], ids=lambda row: repr(row["name"]))
def test_the_hash_and_the_index_match_the_shared_list(row):
    assert fnv1a32(row["name"]) == row["fnv1a32"]
    assert run_colour_index(row["name"]) == row["index"]


@pytest.fixture
def runs(settings, tmp_path) -> None:
    settings.ROLLOUTS_DATA_DIR = None
    dirs = {}
    for name in RUNS:
        train = tmp_path / name / "rollout_result" / "train"
        train.mkdir(parents=True)
        (train / "0.jsonl").write_text(relax_line(sample(0, reward=1.0)))
        dirs[name] = str(train.parent)
    settings.ROLLOUTS_DATA_DIRS = dirs
    caches["rollouts"].clear()


def swatches(html: str, container: str) -> dict[str, int]:
    """Each run's swatch colour in `html`, found in the element `container` says names it."""
    found = {}
    for name in RUNS:
        part = html.split(container.format(name=name), 1)[1][:600]
        match = re.search(
            r'class="rv-swatch rv-run-swatch rv-run-colour-(\d)" data-colour="\1"', part
        )
        assert match, (name, part)
        found[name] = int(match.group(1))
    return found


def test_the_run_picker_shows_each_run_in_its_colour(client, runs):
    html = wait_for(
        lambda: client.get(f"{PREFIX}/").content.decode(),
        "the runs indexed",
        until=lambda page: "indexing" not in page,
    )
    expected = {name: run_colour_index(name) for name in RUNS}
    assert len(set(expected.values())) == len(RUNS)  # distinct, so a mix-up would show
    assert swatches(html, '<tr class="rv-run-item" data-run="{name}">') == expected


def test_the_trends_page_ticks_each_run_in_the_same_colour(client, runs):
    html = client.get(f"{PREFIX}/runs/beta/train/trends/").content.decode()
    expected = {name: run_colour_index(name) for name in RUNS}
    assert swatches(html, 'name="run" value="{name}"') == expected
    current = html.split('name="run" value="beta"', 1)[1].split("</label>", 1)[0]
    assert "(current)" in current
    other = html.split('name="run" value="alpha"', 1)[1].split("</label>", 1)[0]
    assert "(current)" not in other
