"""The search JSON and page through Django's test client (the app mounted under a prefix), and a
sample page opened from a search."""

from __future__ import annotations

import json

import pytest
from django.core.cache import caches

from tests.support.data import sample

PREFIX = "/portal/rollouts"


@pytest.fixture(autouse=True)
def _app(settings, data_dir, write_step):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    write_step(
        "train", 1, [sample(0, response='say "hi"\nnow'), sample(1), sample(2, response="hi")]
    )
    write_step("train", 2, [sample(0, response="nothing"), sample(1, response="HI there")])


def get_json(client, path: str, **params):
    response = client.get(PREFIX + path, params)
    assert response["Content-Type"] == "application/json"
    return response.status_code, json.loads(response.content)


def test_search_answers_in_the_documented_shape(client):
    status, data = get_json(client, "/api/jsonl/train/search", q='"hi"\nnow')
    assert status == 200
    assert list(data) == [
        "q", "field", "regex", "case", "flag", "order", "done", "cursor", "scanned_steps",
        "total_steps", "scanned_bytes", "elapsed_s", "matches", "listed", "hits", "per_step",
    ]  # fmt: skip
    assert (data["order"], data["matches"], data["listed"]) == ("newest", 1, 1)
    assert (data["q"], data["field"], data["regex"], data["case"]) == (
        '"hi"\nnow',
        "any",
        False,
        False,
    )
    assert (data["done"], data["cursor"], data["scanned_steps"], data["total_steps"]) == (
        True,
        None,
        2,
        2,
    )
    assert data["per_step"] == [  # the latest step first
        {"step": 2, "samples": 2, "matches": 0},
        {"step": 1, "samples": 3, "matches": 1},
    ]
    [hit] = data["hits"]
    assert {k: hit[k] for k in ("step", "position", "line", "field")} == {
        "step": 1, "position": 0, "line": 1, "field": "response",
    }  # fmt: skip
    assert hit["snippet"] == {"before": "say ", "match": '"hi"\nnow', "after": ""}
    assert hit["url"].startswith(PREFIX + "/train/1/sample/0/?q=")


def test_search_in_a_run_of_several(client, settings, data_dir):
    settings.ROLLOUTS_DATA_DIRS = {"a": str(data_dir)}
    status, data = get_json(client, "/runs/a/api/jsonl/train/search", q="hi", case="1", limit="5")
    assert status == 200
    # "nothing" holds "hi" too; the latest step first.
    assert [(h["step"], h["position"]) for h in data["hits"]] == [(2, 0), (1, 0), (1, 2)]
    assert data["hits"][1]["url"].startswith(PREFIX + "/runs/a/train/1/sample/0/?q=hi&case=1")


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({}, "q must not be empty"),
        ({"q": ""}, "q must not be empty"),
        ({"q": "(", "regex": "1"}, "regular expression"),
        ({"q": "x", "steps": "5-1"}, "steps"),
        ({"q": "x", "after": "nonsense"}, "cursor"),
        ({"q": "x", "limit": "1000000"}, "limit"),
        ({"q": "x", "field": "reward"}, "field"),
        ({"q": "x", "case": "yes"}, "case"),
        ({"q": "x", "order": "latest"}, "order must be one of newest, oldest"),
    ],
)
def test_bad_parameters_are_400_in_the_error_shape(client, params, fragment):
    status, data = get_json(client, "/api/jsonl/train/search", **params)
    assert status == 400
    assert data["ok"] is False and data["status"] == 400 and fragment in data["message"]


def test_an_unknown_bucket_is_404(client):
    status, data = get_json(client, "/api/jsonl/nope/search", q="x")
    assert status == 404 and data["ok"] is False


def test_the_page_renders_the_first_slice_without_a_script(client):
    response = client.get(PREFIX + "/train/search/", {"q": "<b>hi"})
    assert response.status_code == 200
    assert b"<b>hi" not in response.content  # the query is escaped wherever it is shown
    response = client.get(PREFIX + "/train/search/", {"q": "hi", "case": "1"})
    page = response.content.decode()
    assert page.count('class="rv-hit"') == 3  # "nothing" too
    assert '<mark class="rv-search-mark">hi</mark>' in page
    assert 'id="rv-search-link"' in page and 'data-search-url="' + PREFIX in page


def test_the_page_says_what_is_wrong_with_a_bad_query(client):
    response = client.get(PREFIX + "/train/search/", {"q": "(", "regex": "1"})
    assert response.status_code == 400
    assert b"not a valid regular expression" in response.content


def test_a_sample_opened_from_a_search_moves_among_the_matches(client):
    response = client.get(PREFIX + "/train/1/sample/2/", {"q": "hi"})
    page = response.content.decode()
    assert response.status_code == 200
    assert f'data-prev-url="{PREFIX}/train/1/sample/0/?q=hi"' in page
    assert f'data-next-url="{PREFIX}/train/2/sample/0/?q=hi"' in page
    assert 'data-next-step="2"' in page and 'id="rv-search-nav"' in page
    assert "search-sample.js" in page  # loaded only on a search's sample pages
    # Within one step: steps=1 keeps the search there.
    page = client.get(PREFIX + "/train/1/sample/2/", {"q": "hi", "steps": "1"}).content.decode()
    assert "data-next-url" not in page.split('id="rv-sample"')[1].split(">")[0]


def test_a_lone_match_says_there_is_no_other(client):
    page = client.get(PREFIX + "/train/1/sample/0/", {"q": "say", "case": "1"}).content.decode()
    assert "(there is no other match)" in page
    assert 'id="rv-prev" class="rv-button" aria-disabled="true"' in page
    assert 'id="rv-next" class="rv-button" aria-disabled="true"' in page
