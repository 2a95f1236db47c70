"""The trends answer is remembered while nothing it is made of changes (every open page of a
bucket asks for it at each new step), and made again as soon as anything does: a step, its
bytes, `after`, the URL prefix."""

from __future__ import annotations

import json

import pytest
from django.core.cache import caches
from django.urls import set_script_prefix

import rollouts.views.trends as trends_module
from tests.support.data import sample
from tests.support.pages import PREFIX
from tests.support.wait import wait_for


@pytest.fixture(autouse=True)
def _app(settings, data_dir):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_TENSORBOARD = "off"
    caches["rollouts"].clear()
    trends_module._memo.clear()


@pytest.fixture
def made(monkeypatch) -> list[int]:
    """The `after` of every answer made (not taken from the memo)."""
    calls: list[int] = []
    real = trends_module.trends_json

    def counted(request, bucket, after=-1, *rest):
        calls.append(after)
        return real(request, bucket, after, *rest)

    monkeypatch.setattr(trends_module, "trends_json", counted)
    return calls


def indexed(client, query: str = "", prefix: str = PREFIX) -> dict:
    def trends() -> dict:
        response = client.get(f"{prefix}/api/jsonl/train/trends{query}")
        assert response.status_code == 200 and response["Content-Type"] == "application/json"
        return json.loads(response.content)

    return wait_for(trends, "the steps indexed", until=lambda data: data["done"])


def test_the_same_answer_is_made_once(client, write_step, made):
    for step in range(3):
        write_step("train", step, [sample(i, reward=0.1 * step) for i in range(4)])
    first = indexed(client)
    made.clear()
    again = [indexed(client) for _ in range(3)]
    assert again == [first] * 3 and made == []
    assert [p["step"] for p in first["points"]] == [0, 1, 2]


def test_a_new_step_or_a_grown_one_makes_a_new_answer(client, write_step, made):
    write_step("train", 0, [sample(i) for i in range(4)])
    assert [p["step"] for p in indexed(client)["points"]] == [0]
    write_step("train", 1, [sample(i) for i in range(4)])
    assert [p["step"] for p in indexed(client)["points"]] == [0, 1]
    before = indexed(client)["points"][-1]["size_bytes"]
    write_step("train", 1, [sample(i) for i in range(6)])  # the newest step grew
    after = indexed(client)["points"][-1]
    assert after["size_bytes"] > before and after["metrics"]["samples"] == 6


def test_after_and_the_url_prefix_are_part_of_the_answer(client, write_step, made):
    for step in range(3):
        write_step("train", step, [sample(i) for i in range(2)])
    everything = indexed(client)
    made.clear()
    later = indexed(client, "?after=0")
    assert [p["step"] for p in later["points"]] == [1, 2] and len(everything["points"]) == 3
    set_script_prefix("/other/")  # what a request under FORCE_SCRIPT_NAME gets (no test client)
    try:
        moved = indexed(client)  # the same path, under another script prefix
    finally:
        set_script_prefix("/")
    assert (
        moved["step_url"].startswith("/other" + PREFIX) and moved["points"] == everything["points"]
    )
    assert everything["step_url"].startswith(PREFIX)
    assert indexed(client) == everything  # the first answer is still the one remembered
    assert made == [0, -1]  # ?after=0, then the other prefix; the first answer was remembered


def test_the_memo_is_bounded(client, write_step):
    write_step("train", 0, [sample(0)])
    indexed(client)
    for after in range(trends_module.MEMO_ANSWERS + 5):
        indexed(client, f"?after={after}")
    assert len(trends_module._memo) == trends_module.MEMO_ANSWERS
