"""Flags (issue 30) on the sample page, its JSON twin, its navigation, the group page and the
search: each test writes a step whose degenerate samples it knows, and expects exactly those."""

from __future__ import annotations

import json
from html import escape
from urllib.parse import parse_qs, urlsplit

import pytest

from rollouts.store import Catalog
from tests.support.data import sample
from tests.support.pages import PREFIX, page

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py

EMPTY_AT, CUT_AT = 2, 5  # the step's empty response and its cut one


def flagged_step(write_step, step: int = 1, records: int = 8):
    """`records` plain samples, but an empty response at EMPTY_AT and one cut at CUT_AT."""
    lines = []
    for i in range(records):
        extra: dict = {}
        if i == EMPTY_AT:
            extra["response"] = ""
        if i == CUT_AT:
            extra["status"] = "truncated"
        lines.append(sample(i, **extra))
    write_step("train", step, lines)
    return {EMPTY_AT: ["empty"], CUT_AT: ["cut"]}


def twin(client, path: str, status: int = 200) -> dict:
    response = client.get(PREFIX + "/api/view" + path)
    assert response.status_code == status, response.content[:300]
    return json.loads(response.content)


def position_of(url: str | None) -> int | None:
    if url is None:
        return None
    return int(urlsplit(url).path.rstrip("/").rsplit("/", 1)[1])


# -- the twin --------------------------------------------------------------------------------
def test_twin_names_each_samples_flags_with_a_reason_and_none_as_an_empty_list(client, write_step):
    expected = flagged_step(write_step)
    for position in range(8):
        data = twin(client, f"/train/1/sample/{position}")
        names = [f["name"] for f in data["flags"]]
        assert names == expected.get(position, [])
        for flag in data["flags"]:
            assert set(flag) == {"name", "reason"} and flag["reason"].strip()


def test_twin_flags_are_null_while_the_columns_are_being_decoded(client, write_step, monkeypatch):
    flagged_step(write_step)
    # A big step opens in file order before its column pass; here the pass never starts.
    monkeypatch.setattr("rollouts.views.samples.INLINE_COLUMNS_BYTES", 0)
    monkeypatch.setattr(Catalog, "prepare_columns", lambda self, index: None)
    data = twin(client, f"/train/1/sample/{EMPTY_AT}")
    assert data["columns_ready"] is False
    assert data["flags"] is None
    assert data["urls"]["next_flagged"] is None and data["urls"]["prev_flagged"] is None
    p = page(client, f"/train/1/sample/{EMPTY_AT}/")
    assert "rv-flags-pending" in p.by_id and "rv-flag-reasons" not in p.by_id
    assert "href" not in p.by_id["rv-next-flagged"]


# -- the page --------------------------------------------------------------------------------
def test_sample_page_shows_a_chip_per_flag_and_its_reason_in_words(client, write_step):
    flagged_step(write_step)
    reason = twin(client, f"/train/1/sample/{CUT_AT}")["flags"][0]["reason"]
    p = page(client, f"/train/1/sample/{CUT_AT}/")
    assert f'class="rv-chip rv-flag-chip" data-flag="cut" title="{escape(reason)}"' in p.html
    line = p.html.split('id="rv-flag-reasons"', 1)[1].split("</p>", 1)[0]
    assert f"<strong>cut</strong>: {escape(reason)}" in line
    clean = page(client, "/train/1/sample/0/")
    assert "rv-flag-chip" not in clean.html and "rv-flag-reasons" not in clean.by_id


def test_next_and_previous_flagged_follow_the_order_of_the_page(client, write_step):
    flagged_step(write_step)
    first = twin(client, "/train/1/sample/0")["urls"]
    assert position_of(first["next_flagged"]) == EMPTY_AT and first["prev_flagged"] is None
    middle = twin(client, f"/train/1/sample/{EMPTY_AT}")["urls"]
    assert position_of(middle["next_flagged"]) == CUT_AT and middle["prev_flagged"] is None
    last = twin(client, "/train/1/sample/7")["urls"]
    assert position_of(last["prev_flagged"]) == CUT_AT and last["next_flagged"] is None
    # In reverse file order (sorted by sample_index, descending) the cut one comes first.
    ordered = twin(client, "/train/1/sample/7?sort=sample_index&order=desc")["urls"]
    assert position_of(ordered["next_flagged"]) == CUT_AT
    assert parse_qs(urlsplit(ordered["next_flagged"]).query) == {
        "sort": ["sample_index"],
        "order": ["desc"],
    }
    p = page(client, "/train/1/sample/0/")
    assert position_of(p.by_id["rv-next-flagged"]["href"]) == EMPTY_AT
    assert position_of(p.by_id["rv-sample"]["data-next-flagged-url"]) == EMPTY_AT
    assert "href" not in p.by_id["rv-prev-flagged"]


def test_a_flag_filter_keeps_its_flag_on_every_link(client, write_step):
    flagged_step(write_step)
    data = twin(client, "/train/1?flag=cut")
    assert data["flag"] == "cut" and data["total"] == 1 and data["position"] == CUT_AT
    data = twin(client, "/train/1?flag=empty")
    assert data["position"] == EMPTY_AT
    p = page(client, f"/train/1/sample/{CUT_AT}/?flag=cut")
    for link in ("rv-prev", "rv-next", "rv-jump-prev", "rv-jump-next"):
        assert "href" not in p.by_id[link]  # the only sample flagged cut
    assert p.by_id["rv-sample"]["data-first-url"].endswith("?flag=cut")
    assert p.by_id["rv-controls"]  # the sort and filters keep the flag when they change
    assert '<input type="hidden" name="flag" value="cut">' in p.html
    assert "flag" not in parse_qs(urlsplit(p.by_id["rv-flag-filter"]["href"]).query)
    # Without a flag asked, any flag counts.
    urls = twin(client, "/train/1/sample/0?sort=sample_index")["urls"]
    assert position_of(urls["next_flagged"]) == EMPTY_AT


def test_unknown_flag_is_a_400_page_not_an_error(client, write_step):
    flagged_step(write_step)
    response = client.get(PREFIX + "/train/1/sample/0/?flag=<b>nope</b>")
    assert response.status_code == 400
    text = response.content.decode()
    assert "unknown flag" in text and "<b>nope" not in text
    assert twin(client, "/train/1?flag=nope", 400)


# -- the group page --------------------------------------------------------------------------
def test_group_members_carry_their_flags(client, write_step):
    expected = flagged_step(write_step)
    group = EMPTY_AT // 2  # sample(i) is in group i // 2
    response = client.get(PREFIX + f"/api/jsonl/train/file/1.jsonl/group/{group}")
    assert response.status_code == 200
    members = {m["position"]: m for m in json.loads(response.content)["members"]}
    assert set(members) == {group * 2, group * 2 + 1}
    for position, member in members.items():
        assert [f["name"] for f in member["flags"]] == expected.get(position, [])
    reason = members[EMPTY_AT]["flags"][0]["reason"]
    p = page(client, f"/train/1/group/{group}/")
    row = p.html.split(f'id="rv-member-{EMPTY_AT}"', 1)[1].split("</tr>", 1)[0]
    assert f'data-flag="empty" title="{escape(reason)}"' in row
    other = p.html.split(f'id="rv-member-{group * 2 + 1}"', 1)[1].split("</tr>", 1)[0]
    assert "rv-flag-chip" not in other


# -- search ----------------------------------------------------------------------------------
def search(client, **params) -> tuple[int, dict]:
    response = client.get(PREFIX + "/api/jsonl/train/search", params)
    return response.status_code, json.loads(response.content)


def test_search_with_a_flag_keeps_only_the_flagged_samples_hits(client, write_step):
    flagged_step(write_step, step=1)
    flagged_step(write_step, step=2)
    # "question" is in every prompt: every sample matches, the flag keeps its own.
    status, everything = search(client, q="question", field="prompt")
    assert status == 200 and everything["matches"] == 16 and everything["flag"] is None
    status, cut = search(client, q="question", field="prompt", flag="cut")
    assert status == 200 and cut["flag"] == "cut"
    assert [(h["step"], h["position"]) for h in cut["hits"]] == [(2, CUT_AT), (1, CUT_AT)]
    assert cut["matches"] == 2
    assert all(parse_qs(urlsplit(h["url"]).query)["flag"] == ["cut"] for h in cut["hits"])
    assert {(s["step"], s["matches"]) for s in cut["per_step"]} == {(1, 1), (2, 1)}


def test_search_flag_filter_survives_the_cursor(client, write_step):
    flagged_step(write_step, step=1)
    flagged_step(write_step, step=2)
    seen, after, rounds = [], None, 0
    while True:
        params = {"q": "question", "flag": "empty", "order": "oldest", "lines": 3}
        if after:
            params["after"] = after
        status, data = search(client, **params)
        assert status == 200
        seen += [(h["step"], h["position"]) for h in data["hits"]]
        rounds += 1
        if data["done"]:
            break
        after = data["cursor"]
    assert rounds > 2  # sliced, 3 lines at a time
    assert seen == [(1, EMPTY_AT), (2, EMPTY_AT)]
    assert data["matches"] == 2


def test_search_unknown_flag_is_a_400_with_the_known_ones(client, write_step):
    flagged_step(write_step)
    status, data = search(client, q="question", flag="bogus")
    assert status == 400 and "unknown flag" in data["message"] and "repeats" in data["message"]
    response = client.get(PREFIX + "/train/search/", {"q": "question", "flag": "bogus"})
    assert response.status_code == 400 and "unknown flag" in response.content.decode()


def test_sample_page_from_a_flagged_search_moves_among_its_flagged_matches(client, write_step):
    flagged_step(write_step, step=1)
    flagged_step(write_step, step=2)
    p = page(client, f"/train/1/sample/{CUT_AT}/?q=question&flag=cut")
    assert position_of(p.by_id["rv-next"]["href"]) == CUT_AT
    assert "/train/2/" in p.by_id["rv-next"]["href"]


def test_search_page_lists_the_flagged_hits_and_keeps_the_flag_chosen(client, write_step):
    flagged_step(write_step)
    p = page(client, "/train/search/?q=question&flag=empty")
    assert p.by_id["rv-search-flag"]
    assert '<option value="empty" selected>' in p.html
    hits = p.html.split('id="rv-hits"', 1)[1].split("</ol>", 1)[0]
    assert hits.count('class="rv-hit"') == 1
    assert f"sample {EMPTY_AT} " in hits and "flag=empty" in hits
    everything = page(client, "/train/search/?q=question")
    choices = everything.html.split('id="rv-search-flag"', 1)[1].split("</select>", 1)[0]
    assert " selected" not in choices  # "any sample", the first
    listed = everything.html.split('id="rv-hits"', 1)[1].split("</ol>", 1)[0]
    assert listed.count('class="rv-hit"') == 8
