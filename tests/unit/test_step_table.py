"""A step as a table (`/<bucket>/<step>/table/` and `api/jsonl/.../table`), via Django's client:
row order under the sample pages' sort and filter parameters, paging, the marked row (`at`),
response previews escaped, and the links between the table and the sample pages."""

from __future__ import annotations

import json
import math
import re

import pytest
from django.core.cache import caches

from tests.support.data import sample
from tests.support.pages import PREFIX, page

HOSTILE = "<script>window.__xss=1</script>"
# position: (reward, status, response_length, dataset, group_index); line 4 (position 3) is bad
ROWS = {
    0: (0.5, "completed", 30, "math", 0),
    1: (1.0, "truncated", 90, "code", 0),
    2: (math.nan, "completed", 10, "math", 1),
    4: (0.0, "completed", 50, "code", 1),
    5: (1.0, "completed", 20, "math", 2),
    6: ({"acc": 1, "fmt": 0.5}, "failed", 70, "math", 2),
}


@pytest.fixture(autouse=True)
def _app(settings, data_dir, write_step):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    lines: list = []
    for position in range(7):
        if position == 3:
            lines.append("{oops\n")
            continue
        reward, status, length, dataset, group = ROWS[position]
        text = f"{'word ' * 60}{HOSTILE}" if position == 5 else f"answer\n\n  {position}"
        lines.append(
            sample(
                position, reward=reward, status=status, response_length=length,
                dataset=dataset, group_index=group, response=text,
            )
        )  # fmt: skip
    write_step("train", 1, lines)


def table(client, query: str = "", status: int = 200) -> dict:
    response = client.get(PREFIX + "/api/jsonl/train/file/1.jsonl/table" + query)
    assert response.status_code == status, response.content[:300]
    return json.loads(response.content)


def order(client, query: str = "") -> list[int]:
    return [row["position"] for row in table(client, query)["rows"]]


def page_rows(client, query: str = "") -> list[int]:
    p = page(client, "/train/1/table/" + query)
    return [int(x) for x in re.findall(r'<tr id="rv-row-(\d+)"', p.html)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [0, 1, 2, 4, 5, 6]),  # file order; the unreadable line left out
        ("?sort=reward&order=desc", [1, 5, 0, 4, 2, 6]),  # ties in file order, no number last
        ("?sort=response_length", [2, 5, 0, 4, 6, 1]),
        ("?sort=status", [0, 2, 4, 5, 6, 1]),
        ("?status=completed&dataset=math&sort=reward&order=desc", [5, 0, 2]),
        ("?range=reward:[0.5,1]", [0, 1, 5]),
    ],
)
def test_rows_follow_the_sample_pages_sort_and_filters(client, query, expected):
    assert order(client, query) == expected
    assert page_rows(client, query) == expected


def test_row_values_come_from_the_columns_and_the_preview_from_the_line(client):
    rows = {row["position"]: row for row in table(client)["rows"]}
    assert {k: rows[0][k] for k in ("line", "reward", "status", "response_length", "dataset")} == {
        "line": 1, "reward": 0.5, "status": "completed", "response_length": 30, "dataset": "math",
    }  # fmt: skip
    assert rows[0]["group_index"] == 0 and rows[0]["response"] == "answer 0"  # spaces collapsed
    assert (rows[2]["reward"], rows[2]["reward_text"]) == (None, "null")
    assert rows[6]["reward_parts"] == {"acc": 1, "fmt": 0.5}
    assert rows[6]["reward_text"] == "acc 1, fmt 0.5"
    preview = rows[5]["response"]
    # no final answer: the response's end, cut at its start
    assert preview.endswith("word " + HOSTILE) and preview.startswith("\u2026word word")
    assert 110 < len(preview) <= 120
    assert table(client)["invalid"][0]["line"] == 4


def test_pages_of_rows_and_the_marked_row(client):
    second = table(client, "?page_size=4&page=2")
    assert [r["position"] for r in second["rows"]] == [5, 6]
    assert (second["page"], second["pages"], second["first_rank"], second["last_rank"]) == (
        2,
        2,
        5,
        6,
    )
    assert second["urls"]["prev"] == PREFIX + "/train/1/table/?page_size=4"
    assert second["urls"]["next"] is None
    assert [r["position"] for r in table(client, "?page_size=4&page=99")["rows"]] == [5, 6]
    at = table(client, "?page_size=4&at=6&sort=response_length")  # 6 is 5th by length
    assert (at["page"], at["at"], at["at_shown"]) == (2, 6, True)
    assert [r["is_at"] for r in at["rows"]] == [True, False]
    p = page(client, "/train/1/table/?page_size=2&page=2")
    assert "rv-table-pages" in p.by_id
    assert re.findall(r'class="rv-page-link" href="([^"]+)"', p.html) == [
        PREFIX + "/train/1/table/?page_size=2",
        PREFIX + "/train/1/table/?page=3&amp;page_size=2",
    ]


def test_header_links_sort_and_keep_the_filters(client):
    columns = {
        c["key"]: c for c in table(client, "?status=completed&sort=reward&order=desc")["columns"]
    }
    assert columns["reward"]["sorted"] == "desc"
    assert columns["reward"]["url"] == PREFIX + "/train/1/table/?sort=reward&status=completed"
    assert columns["response_length"]["url"].endswith(
        "?sort=response_length&order=desc&status=completed"
    )
    assert columns["position"]["url"] == PREFIX + "/train/1/table/?status=completed"
    assert columns["group_index"]["sort"] == "group_index"


def test_rows_open_their_sample_in_the_same_order_and_the_sample_links_back(client):
    rows = table(client, "?sort=reward&order=desc")["rows"]
    assert rows[0]["url"] == PREFIX + "/train/1/sample/1/?sort=reward&order=desc"
    p = page(client, "/train/1/sample/1/?sort=reward&order=desc")
    assert (
        p.by_id["rv-sample"]["data-next-url"]
        == PREFIX + "/train/1/sample/5/?sort=reward&order=desc"
    )
    assert p.by_id["rv-sample"]["data-table-url"] == (
        PREFIX + "/train/1/table/?sort=reward&order=desc&at=1"
    )
    assert p.by_id["rv-table-link"]["href"] == PREFIX + "/train/1/table/"
    assert 'data-key="l"' in p.html and 'data-key="table Enter"' in p.html


def test_the_page_escapes_previews_and_marks_its_state(client):
    p = page(client, "/train/1/table/?sort=reward&order=desc&at=5")
    assert HOSTILE not in p.html and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in p.html
    assert p.by_id["rv-row-5"]["aria-current"] == "true"
    assert p.by_id["rv-table-link"]["aria-current"] == "page"
    assert p.by_id["rv-keys"]["data-page"] == "table"
    assert (
        p.by_id["rv-json"]["href"]
        == PREFIX + "/api/jsonl/train/file/1.jsonl/table?sort=reward&order=desc"
    )


@pytest.mark.parametrize(
    "query", ["?sort=nope", "?page=x", "?page_size=0", "?order=up", "?at=-3", "?range=reward:[a,1)"]
)
def test_bad_parameters_are_clear_400s(client, query):
    answer = table(client, query, status=400)
    assert (answer["ok"], answer["status"], answer["error"]) == (False, 400, "Bad Request")
    assert answer["message"]
    assert client.get(PREFIX + "/train/1/table/" + query).status_code == 400


def test_a_missing_step_is_a_404_in_both(client):
    assert client.get(PREFIX + "/train/9/table/").status_code == 404
    assert client.get(PREFIX + "/api/jsonl/train/file/9.jsonl/table").status_code == 404


def test_the_step_selector_on_the_table_moves_between_tables(client, write_step):
    write_step("train", 2, [sample(0)])
    p = page(client, "/train/1/table/")
    options = re.findall(r'<option value="([^"]+)" data-step="(\d+)"', p.html)
    assert options == [(PREFIX + "/train/1/table/", "1"), (PREFIX + "/train/2/table/", "2")]
