"""Issue 29, item 5: a search hit carries its sample's reward, status and answer check; the search
says how many samples matched in all (not only how many hits it lists) and whether that count
is complete; and it lists the latest step first, with `order=oldest` for the old order, the
cursor paging through either order. Expectations come from RECORDS, written with `write_step`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import caches
from django.urls import reverse

from rollouts.presentation import answer_check
from rollouts.store import Catalog
from rollouts.store.search import Budget, Query, search
from tests.support.data import sample

STEPS = (1, 2, 3, 4, 5)
PER_STEP = 6


def record(step: int, i: int) -> dict[str, Any]:
    """Every sample says "needle" except each step's last; rewards, statuses, answers vary."""
    answer = ["\\boxed{7}", "\\boxed{8}", "no final answer", "<answer>7</answer>"][i % 4]
    extra: dict[str, Any] = {
        "response": f"step {step} needle {i}: {answer}" if i < PER_STEP - 1 else "nothing",
        "reward": [1.0, 0.0, 0.25, float("nan")][(step + i) % 4],
        "status": ["completed", "truncated"][i % 2],
        "label": "7",
    }
    if (step, i) == (4, 0):
        extra["reward"] = {"acc": 1.0, "format": 0.5}  # an object of rewards: no number
    rec = sample(i, **extra)
    if (step, i) == (3, 2):
        del rec["status"]  # no status at all
    if (step, i) == (4, 0):
        del rec["label"]  # no label: nothing to check
    return rec


RECORDS = {step: [record(step, i) for i in range(PER_STEP)] for step in STEPS}
MATCHING = [(s, i) for s in STEPS for i in range(PER_STEP) if "needle" in RECORDS[s][i]["response"]]


def expected(step: int, i: int) -> tuple[float | None, str | None, bool | None]:
    """(reward, status, match) as the hit should carry them, from the record."""
    rec = RECORDS[step][i]
    reward = rec["reward"]
    number = reward if isinstance(reward, float) and reward == reward else None
    response = rec["response"]
    if "label" not in rec or "no final answer" in response:
        match = None
    else:
        match = response.endswith(("\\boxed{7}", "<answer>7</answer>"))
    return number, rec.get("status"), match


@pytest.fixture
def api() -> str:
    return reverse("rollouts:api-search", kwargs={"bucket": "train"})


@pytest.fixture
def data(write_step, data_dir):
    for step, records in RECORDS.items():
        write_step("train", step, records)
    return data_dir


def places(result) -> list[tuple[int, int]]:
    return [(hit.step, hit.position) for hit in result.hits]


# -- reward, status, answer check -------------------------------------------------------------
@pytest.mark.parametrize("columns", [False, True], ids=["from-the-line", "from-the-columns"])
def test_each_hit_carries_its_samples_reward_status_and_answer_check(data, columns):
    catalog = Catalog(data)
    if columns:  # the step's columns built first: reward and status are read from them
        for step_file in catalog.steps("train"):
            index = catalog.open_step("train", step_file.filename)
            catalog.columns(index)
            assert index.columns_ready
    result = search(catalog, "train", Query("needle"), limit=1000, check=answer_check)
    got = {(h.step, h.position): (h.reward, h.status, h.match) for h in result.hits}
    assert got == {place: expected(*place) for place in MATCHING}
    # The fixture holds every kind: each value is there, and each missing one.
    values = list(got.values())
    assert {r for r, _, _ in values} == {1.0, 0.0, 0.25, None}
    assert {s for _, s, _ in values} == {"completed", "truncated", None}
    assert {m for _, _, m in values} == {True, False, None}
    assert got[(4, 0)] == (None, "completed", None)  # an object reward, no label


def test_the_json_hit_has_reward_status_match_and_their_chips(client, settings, data, api):
    settings.ROLLOUTS_DATA_DIR = str(data)
    caches["rollouts"].clear()
    body = json.loads(client.get(api, {"q": "needle", "steps": "2"}).content)
    hits = {hit["position"]: hit for hit in body["hits"]}
    assert set(hits) == {0, 1, 2, 3, 4}
    for position, hit in hits.items():
        assert (hit["reward"], hit["status"], hit["match"]) == expected(2, position)
    # Step 2, sample 0: reward 0.25 (on the scale), completed, \boxed{7} as the label says.
    assert hits[0]["chips"] == [
        {"name": "reward", "display": "0.25", "tone": "scale-1", "kind": "scale",
         "class": "rv-tone-scale-1"},
        {"name": "status", "display": "completed", "tone": "ok", "kind": "status",
         "class": "rv-tone-ok"},
    ]  # fmt: skip
    assert [c["tone"] for c in hits[1]["chips"]] == ["none", "bad"]  # NaN reward, truncated
    assert [c["tone"] for c in hits[2]["chips"]] == ["right", "ok"]  # 1.0, completed
    assert [c["tone"] for c in hits[3]["chips"]] == ["wrong", "bad"]  # 0.0, truncated


# -- the total -----------------------------------------------------------------------------------
def test_the_total_counts_every_matching_sample_past_the_listed_hits(data):
    catalog, query = Catalog(data), Query("needle")
    slices, after = [], None
    while True:  # slices of 4 lines, 3 hits listed at most
        part = search(catalog, "train", query, limit=3, after=after, budget=Budget(None, lines=4))
        slices.append(part)
        if part.done:
            break
        after = part.cursor
    assert len(slices) > len(STEPS)  # steps split between slices, counted in each
    assert [s.matches for s in slices] == sorted(s.matches for s in slices)  # counting up
    assert all(s.matches < len(MATCHING) for s in slices[:-1])  # still counting
    last = slices[-1]
    assert last.matches == len(MATCHING) == 25
    assert last.listed == 3 == sum(len(s.hits) for s in slices)


def test_the_json_says_how_many_matched_and_how_many_are_listed(client, settings, data, api):
    settings.ROLLOUTS_DATA_DIR = str(data)
    caches["rollouts"].clear()
    params = {"q": "needle", "limit": "4", "lines": "10"}
    body = json.loads(client.get(api, params).content)
    first = (body["done"], body["matches"], body["listed"])
    assert first == (False, sum(m["matches"] for m in body["per_step"]), 4)
    while not body["done"]:
        after = {**params, "after": body["cursor"]}
        body = json.loads(client.get(api, after).content)
    assert (body["matches"], body["listed"]) == (len(MATCHING), 4)


def test_the_page_says_how_many_hits_of_how_many_matches(client, settings, data, api):
    settings.ROLLOUTS_DATA_DIR = str(data)
    caches["rollouts"].clear()
    page = client.get(
        reverse("rollouts:search", kwargs={"bucket": "train"}), {"q": "needle", "limit": "4"}
    ).content.decode()
    assert '<span id="rv-hits-count" class="rv-meta">4</span>' in page
    assert '<span id="rv-matches-count">25</span>' in page
    done = '<span id="rv-matches-noun">matches</span> shown<span id="rv-matches-state"></span>'
    assert done in page  # every step searched: the count is complete
    # Each hit shows its chips: the latest step's first sample, reward 0.0, completed, and
    # \boxed{7} as the label says; the next one truncated, \boxed{8} where the label says 7.
    first, second = page.split('<li class="rv-hit"')[1:3]
    assert expected(5, 0) == (0.0, "completed", True)
    assert first.startswith(' data-step="5"')
    assert 'class="rv-chip rv-tone-wrong" data-field="reward"' in first
    assert 'class="rv-chip rv-tone-ok" data-field="status"' in first
    assert 'data-match="yes"' in first
    assert expected(5, 1) == (0.25, "truncated", False)
    assert 'class="rv-chip rv-tone-bad" data-field="status"' in second
    assert 'data-match="no"' in second


# -- the order, and paging through it -------------------------------------------------------
def test_the_latest_step_comes_first_and_oldest_keeps_the_old_order(data):
    catalog, query = Catalog(data), Query("needle")
    newest = search(catalog, "train", query, limit=1000, newest=True)
    oldest = search(catalog, "train", query, limit=1000)
    assert places(oldest) == MATCHING
    by_step_down = sorted(MATCHING, key=lambda place: (-place[0], place[1]))
    assert places(newest) == by_step_down  # a step's samples still in file order
    assert [c.step for c in newest.per_step] == [5, 4, 3, 2, 1]


@pytest.mark.parametrize("newest", [True, False], ids=["newest", "oldest"])
@pytest.mark.parametrize("lines", [1, 4, 7])
def test_paging_through_either_order_gives_every_hit_once_in_order(data, newest, lines):
    catalog, query = Catalog(data), Query("needle")
    pages, after = [], None
    for _ in range(200):
        part = search(
            catalog, "train", query, after=after, budget=Budget(None, lines=lines), newest=newest
        )
        pages.append(places(part))
        if part.done:
            break
        after = part.cursor
    assert part.done and len(pages) > 1
    together = [place for page in pages for place in page]
    assert len(together) == len(set(together))  # each page disjoint from the others
    order = (lambda p: (-p[0], p[1])) if newest else (lambda p: p)
    assert together == sorted(MATCHING, key=order)  # together complete, in the order asked
    assert part.matches == len(MATCHING)


@pytest.mark.parametrize(("order", "first"), [(None, 5), ("newest", 5), ("oldest", 1)])
def test_the_json_lists_newest_first_unless_asked_otherwise(
    client, settings, data, api, order, first
):
    settings.ROLLOUTS_DATA_DIR = str(data)
    caches["rollouts"].clear()
    params = {"q": "needle", "lines": "5", **({"order": order} if order else {})}
    body = json.loads(client.get(api, params).content)
    assert body["order"] == (order or "newest")
    seen = [(h["step"], h["position"]) for h in body["hits"]]
    while not body["done"]:
        body = json.loads(client.get(api, {**params, "after": body["cursor"]}).content)
        seen += [(h["step"], h["position"]) for h in body["hits"]]
    assert seen[0][0] == first
    assert sorted(seen) == MATCHING and len(seen) == len(set(seen))
    steps = [step for step, _ in seen]
    assert steps == sorted(steps, reverse=first == 5)
