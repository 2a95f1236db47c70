"""The table's answer, advantage and chosen columns (`cols`), via Django's client: the answer's
check is the sample header's, the advantage is the reward against its group's mean, `cols`
takes any numeric field and ignores what it cannot use (never a 500), and the JSON says it all."""

from __future__ import annotations

import json
import math
import re
from array import array

import pytest
from django.core.cache import caches

from rollouts.store import Columns
from rollouts.store.stats import group_advantages
from tests.support.data import sample
from tests.support.pages import PREFIX, page

# position: (group, reward, response, label)
ROWS = [
    (0, 1.0, "<think>hmm</think>So it is \\boxed{42}.", "42"),
    (0, 0.0, "<think>hmm</think>So it is \\boxed{41}.", "42"),
    (0, 0.5, "<think>hmm</think>I cannot tell.", "42"),
    (1, 1.0, "Thus <answer>1/2</answer>", "\\frac{1}{2}"),
    (1, 1.0, "Thus <answer>0.5</answer>", "\\frac{1}{2}"),
    (2, math.nan, "\\boxed{3}", None),
]
MEANS = {0: 0.5, 1: 1.0}


@pytest.fixture(autouse=True)
def _app(settings, data_dir, write_step):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    records = []
    for i, (group, reward, response, label) in enumerate(ROWS):
        extra = {} if label is None else {"label": label}
        records.append(
            sample(i, group_index=group, reward=reward, response=response, kl=0.1 * i, **extra)
        )
    write_step("train", 1, records)


def table(client, query: str = "", status: int = 200) -> dict:
    response = client.get(PREFIX + "/api/jsonl/train/file/1.jsonl/table" + query)
    assert response.status_code == status, response.content[:300]
    return json.loads(response.content)


def test_each_row_says_its_answer_and_the_sample_headers_check(client):
    rows = table(client)["rows"]
    assert [(r["answer"], r["match"]) for r in rows] == [
        ("42", True),
        ("41", False),
        (None, None),
        ("1/2", True),
        ("0.5", True),
        ("3", None),  # no label: nothing to compare
    ]
    for position in (0, 1):  # the sample page's header says the same
        p = page(client, f"/train/1/sample/{position}/")
        expected = "yes" if rows[position]["match"] else "no"
        assert p.by_id["rv-answer-check"]["data-match"] == expected
    p = page(client, "/train/1/table/")
    marks = re.findall(r'<td data-field="answer" data-match="(\w+)">', p.html)
    assert marks == ["yes", "no", "unknown", "yes", "yes", "unknown"]
    assert "So it is \\boxed{42}." in p.html and "hmm" not in p.html  # the preview


def test_advantage_is_the_reward_minus_its_groups_mean(client):
    rows = table(client)["rows"]
    for row, (group, reward, _, _) in zip(rows, ROWS, strict=True):
        if math.isnan(reward):
            assert row["advantage"] is None
        else:
            assert row["advantage"] == pytest.approx(reward - MEANS[group])
    cells = {r["position"]: next(c for c in r["cells"] if c["key"] == "advantage") for r in rows}
    assert (cells[0]["text"], cells[0]["tone"]) == ("+0.5", "up")
    assert (cells[1]["text"], cells[1]["tone"]) == ("-0.5", "down")
    assert (cells[3]["text"], cells[3]["tone"]) == ("0", "even")
    assert (cells[5]["text"], cells[5]["tone"]) == ("\u2013", None)
    order = [r["position"] for r in table(client, "?sort=advantage&order=desc")["rows"]]
    assert order == [0, 2, 3, 4, 1, 5]  # ties (three zeros) in file order, none last


def test_an_advantage_the_file_carries_is_preferred():
    columns = Columns()
    columns.rows = 3
    columns.numeric = {
        "reward": _doubles([1.0, 0.0, 1.0]),
        "group_index": _doubles([0, 0, 0]),
        "advantage": _doubles([0.7, -1.4, 0.7]),
    }
    assert list(group_advantages(columns, {})) == [0.7, -1.4, 0.7]
    del columns.numeric["advantage"]
    assert list(group_advantages(columns, {})) == pytest.approx([1 / 3, -2 / 3, 1 / 3])
    assert math.isnan(group_advantages(columns, {1: "unreadable"})[1])


def _doubles(values: list[float]) -> array:
    return array("d", values)


def test_cols_chooses_any_numeric_field_in_its_order_and_links_keep_it(client):
    answer = table(client, "?cols=kl,reward&sort=kl&order=desc")
    assert answer["cols"] == ["kl", "reward"]
    # the flags column (always shown, not chosen) comes after the chosen ones
    assert [c["key"] for c in answer["columns"]] == [
        "position",
        "answer",
        "kl",
        "reward",
        "flags",
    ]
    assert [c["key"] for c in answer["rows"][0]["cells"]] == ["kl", "reward"]
    assert [r["position"] for r in answer["rows"]] == [5, 4, 3, 2, 1, 0]  # by kl
    kl = {c["key"]: c for c in answer["column_choices"]}["kl"]
    assert kl == {"key": "kl", "label": "kl", "chosen": True}
    reward_sort = {c["key"]: c for c in answer["columns"]}["reward"]["url"]
    assert "cols=kl%2Creward" in reward_sort
    assert "cols=kl%2Creward" in answer["urls"]["page"]
    p = page(client, "/train/1/table/?cols=kl,reward")
    assert re.findall(r'<th scope="col" data-sort="(\w+)"', p.html) == [
        "position",
        "answer",
        "kl",
        "reward",
        "flags",
    ]
    checked = re.findall(r'name="cols" value="([\w.]+)" checked', p.html)
    assert checked == ["kl", "reward"]  # the shown ones first, in their order
    listed = re.findall(r'type="checkbox" name="cols" value="([\w.]+)"', p.html)
    assert listed[:5] == ["kl", "reward", "status", "advantage", "rollout_id"]


def test_repeated_cols_are_read_as_the_form_sends_them(client):
    answer = table(client, "?cols=none&cols=status&cols=kl&cols=status")
    assert answer["cols"] == ["status", "kl"]
    assert table(client, "?cols=none")["cols"] == []
    assert table(client, "?cols=none")["rows"][0]["cells"] == []
    defaults = table(client)
    assert defaults["cols"] == defaults["default_cols"]
    assert defaults["cols"] == ["reward", "advantage", "status", "response_length", "group_index"]
    assert "cols" not in defaults["urls"]["page"]


@pytest.mark.parametrize(
    "value",
    [
        "<script>alert(1)</script>",
        "nope,%3Cimg%20src=x%3E",
        "x" * 5000,
        ",".join(["kl"] * 2000),
        "response,prompt,label",  # fields, but not numeric columns
        "%00,%ff",
    ],
)
def test_unusable_cols_are_ignored_never_an_error(client, value):
    answer = table(client, "?cols=" + value)
    assert answer["cols"] == (["kl"] if value.startswith("kl,") else [])
    p = page(client, "/train/1/table/?cols=" + value)
    assert "<script>alert" not in p.html and "<img src=x>" not in p.html


def test_hostile_cols_in_a_page_url_are_escaped(client):
    response = client.get(PREFIX + "/train/1/table/?cols=kl&cols=%22%3E%3Cscript%3Ex%3C/script%3E")
    assert response.status_code == 200
    assert b"<script>x</script>" not in response.content
