"""The compare page picks its steps from a list (issue 29, item 12): the bucket's steps, newest
first, the compared ones selected, another run's as RUN:STEP; the URL's `a`, `b` and
`threshold` are still read as before, and a bad one is a clear 400 or 404, never a 500. Each
difference carries its sign, a cue besides its colour."""

from __future__ import annotations

import html as markup
import re
from pathlib import Path

import pytest
from django.core.cache import caches

from tests.support.data import relax_line, sample
from tests.support.pages import PREFIX, page

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.fixture(autouse=True)
def steps(write_step):
    # rewards 0, 0, 1, 1 at step 2 and all 1 (two truncated) at step 10: step names sort as numbers
    write_step("train", 1, [sample(i, reward=0.0) for i in range(2)])
    write_step("train", 2, [sample(i, reward=float(i >= 2), response_length=10) for i in range(4)])
    write_step(
        "train",
        10,
        [
            sample(i, reward=1.0, response_length=20, status="truncated" if i < 2 else "completed")
            for i in range(4)
        ],
    )


def picker(html: str, name: str) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The `name` select's option groups as (label, values), and its selected values."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None
    groups = [
        (label, re.findall(r'<option value="([^"]*)"', body))
        for label, body in re.findall(r'<optgroup label="([^"]*)">(.*?)</optgroup>', select[1])
    ]
    return groups, re.findall(r'<option value="([^"]*)" selected>', select[1])


def test_the_picker_offers_the_buckets_steps_newest_first_with_the_compared_ones_chosen(client):
    html = page(client, "/train/compare/?a=1&b=2").html
    assert picker(html, "a") == ([("this run", ["10", "2", "1"])], ["1"])
    assert picker(html, "b") == ([("this run", ["10", "2", "1"])], ["2"])
    assert '<input name="a"' not in html and "<datalist" not in html  # no free-text box


def test_without_parameters_the_first_and_latest_steps_are_chosen(client):
    html = page(client, "/train/compare/").html
    assert picker(html, "a")[1] == ["1"] and picker(html, "b")[1] == ["10"]


def test_another_runs_steps_are_offered_as_run_colon_step(client, settings, tmp_path: Path):
    other = tmp_path / "other"
    (other / "train").mkdir(parents=True)
    for step in (5, 7):
        (other / "train" / f"{step}.jsonl").write_text(relax_line(sample(0, reward=0.5)))
    (tmp_path / "no-bucket").mkdir()  # a run without the bucket: not offered
    settings.ROLLOUTS_DATA_DIRS = {"beta": str(other), "gamma": str(tmp_path / "no-bucket")}
    caches["rollouts"].clear()
    html = page(client, "/train/compare/?a=beta:5&b=10").html
    groups, chosen = picker(html, "a")
    assert groups == [("this run", ["10", "2", "1"]), ("run beta", ["beta:7", "beta:5"])]
    assert chosen == ["beta:5"] and picker(html, "b")[1] == ["10"]


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("a=abc", 400, "a must be STEP or RUN:STEP, got 'abc'"),
        ("b=1.5", 400, "b must be STEP or RUN:STEP"),
        ("a=" + "9" * 5000, 400, "a must be STEP or RUN:STEP"),
        ("a=99", 404, "no step '99.jsonl' in bucket 'train'"),
        ("a=nosuchrun:1", 404, "no run 'nosuchrun'"),
        ("threshold=much", 400, "threshold must be a finite number"),
        ("threshold=nan", 400, "threshold must be a finite number"),
    ],
)
def test_a_bad_url_value_is_a_clear_error_not_a_500(client, query, status, words):
    response = client.get(f"{PREFIX}/train/compare/?{query}")
    body = markup.unescape(response.content.decode())
    assert response.status_code == status and words in body
    assert "Traceback" not in body and len(body) < 60_000


def test_each_difference_carries_its_sign_and_the_truncation_rate_moves_in_points(client):
    html = page(client, "/train/compare/?a=2&b=10").html
    row = re.search(r'<tr data-dataset="\(overall\)">(.*?)</tr>', html, re.S)
    assert row is not None
    cells = {
        field: (tone, text)
        for field, tone, text in re.findall(
            r'data-field="([a-z_]+-difference)"><span class="([^"]*)">([^<]*)<', row[1]
        )
    }
    # mean reward 0.5 -> 1: +0.5, better; truncated 0 of 4 -> 2 of 4: +50.0 pp, worse;
    # length 10 -> 20: +10, neither.
    assert cells["mean_reward-difference"] == ("rv-change-up", "+0.5")
    assert cells["truncation_rate-difference"] == ("rv-change-down", "+50.0\N{NO-BREAK SPACE}pp")
    assert cells["mean_response_length-difference"] == ("", "+10")
    back = re.search(
        r'<tr data-dataset="\(overall\)">(.*?)</tr>',
        page(client, "/train/compare/?a=10&b=2").html,
        re.S,
    )
    assert back is not None and ">-0.5<" in back[1] and "-50.0\N{NO-BREAK SPACE}pp" in back[1]


def test_the_header_marks_compare_as_the_current_page(client):
    p = page(client, "/train/compare/?a=1&b=2")
    assert p.by_id["rv-compare-link"].get("aria-current") == "page"
    assert "aria-current" not in page(client, "/train/10/stats/").by_id["rv-compare-link"]
