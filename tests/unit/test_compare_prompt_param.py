"""Compare's `prompt=` is checked the same way by the page and its JSON twin (issue 26, item 12:
the JSON answered 200 to a prompt the page refused with 400), and the JSON names the two
samples the page puts side by side."""

from __future__ import annotations

import json

import pytest
from django.core.cache import caches

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.data import sample
from tests.support.pages import PREFIX

P, Q, R = "question P", "question Q", "only in step 2"


def pid(prompt: str) -> str:
    return format_prompt_id(prompt_id_of_value(prompt))


@pytest.fixture(autouse=True)
def steps(settings, data_dir, write_step):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    write_step("train", 1, [sample(0, prompt=Q), sample(1, prompt=P), sample(2, prompt=P)])
    write_step("train", 2, [sample(0, prompt=R), sample(1, prompt=Q), sample(2, prompt=P)])


def both(client, query: str) -> tuple[tuple[int, dict], tuple[int, str]]:
    """(status, JSON) of the twin and (status, HTML) of the page for the same query."""
    twin = client.get(PREFIX + "/api/jsonl/train/compare" + query)
    page = client.get(PREFIX + "/train/compare/" + query)
    return (twin.status_code, json.loads(twin.content)), (page.status_code, page.content.decode())


@pytest.mark.parametrize(
    ("prompt", "status", "words"),
    [
        ("xyz", 400, "prompt must be a prompt id (16 hex digits)"),
        ("0123456789ABCDEF", 400, "prompt must be a prompt id"),
        ("9" * 5000, 400, "prompt must be a prompt id"),
        ("0123456789abcdef", 404, "step 1 has no sample of prompt 0123456789abcdef"),
        ("0000000000000000", 404, "has no sample of prompt"),
        (pid(R), 404, f"step 1 has no sample of prompt {pid(R)}"),
    ],
)
def test_a_bad_prompt_is_the_same_error_in_the_json_and_on_the_page(client, prompt, status, words):
    (json_status, data), (page_status, html) = both(client, f"?a=1&b=2&prompt={prompt}")
    assert (json_status, page_status) == (status, status)
    assert data["ok"] is False and words in data["message"] and words in html
    assert len(data["message"]) < 200  # a 5,000-character value is named, not repeated


def test_the_json_names_the_two_samples_the_page_compares(client):
    (status, data), (page_status, html) = both(client, f"?a=1&b=2&prompt={pid(P)}")
    assert (status, page_status) == (200, 200)
    assert data["prompt"] == {
        "prompt_id": pid(P),
        "a": {"position": 1, "line": 2, "url": PREFIX + "/train/1/sample/1/"},
        "b": {"position": 2, "line": 3, "url": PREFIX + "/train/2/sample/2/"},
    }
    assert "step 1, line 2" in html and "step 2, line 3" in html


@pytest.mark.parametrize("query", ["?a=1&b=2", "?a=1&b=2&prompt="])
def test_without_a_prompt_there_is_no_pair(client, query):
    (status, data), (page_status, html) = both(client, query)
    assert (status, page_status) == (200, 200)
    assert data["prompt"] is None and 'id="rv-pair"' not in html


def test_the_pages_json_link_is_the_twin_of_the_page_pair_included(client):
    html = client.get(PREFIX + f"/train/compare/?a=1&b=2&prompt={pid(P)}").content.decode()
    link = html.split('id="rv-json"', 1)[1].split('href="', 1)[1].split('"', 1)[0]
    twin = json.loads(client.get(link.replace("&amp;", "&")).content)
    assert twin["prompt"]["prompt_id"] == pid(P)
