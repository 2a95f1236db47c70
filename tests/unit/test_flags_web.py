"""Flags on the table, the step statistics, the samples API and the trends JSON (issue 30), via
Django's client on a step written with known flagged positions (`tests/support/flagged.py`):
the table's flags column, its filter and its twin, the samples API's `flag=`, the statistics'
counts and links, the trends' table links and the rising-rate warning; unknown flags are 400s."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from rollouts.store import FLAGS
from tests.support.flagged import FLAGGED, ROWS, flagged_rows, flagged_step, rising_repeats
from tests.support.pages import PREFIX, page
from tests.support.wait import wait_for

pytestmark = pytest.mark.usefixtures("app_data_dir")


RISING = rising_repeats()


@pytest.fixture(autouse=True)
def _steps(write_step):
    write_step("train", 1, flagged_step())
    for step, records in enumerate(RISING, start=1):
        write_step("eval", step, records)


def get_json(client, path: str, status: int = 200) -> dict:
    response = client.get(PREFIX + path)
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    if response.streaming:
        return json.loads(b"".join(response.streaming_content))
    return json.loads(response.content)


def trends(client, bucket: str) -> dict:
    """The trends JSON once every step is indexed (the background pass is quick here)."""
    return wait_for(
        lambda: get_json(client, f"/api/jsonl/{bucket}/trends"),
        "every step indexed",
        until=lambda data: data["done"],
    )


def table(client, query: str = "", status: int = 200) -> dict:
    return get_json(client, "/api/jsonl/train/file/1.jsonl/table" + query, status)


def expected_flags(position: int) -> list[str]:
    return [name for name in FLAGS if position in FLAGGED[name]]


# -- the table ------------------------------------------------------------------------------
def test_each_row_of_the_twin_carries_its_flags_with_reasons(client):
    rows = table(client)["rows"]
    assert len(rows) == ROWS
    for row in rows:
        assert [f["name"] for f in row["flags"]] == expected_flags(row["position"])
        for flag in row["flags"]:
            assert set(flag) == {"name", "reason"}
            assert flag["reason"].strip()
    # a reason states its numbers: the loop's repeats, the outlier's length
    loop = rows[FLAGGED["repeats"][0]]["flags"][0]["reason"]
    assert "50 times" in loop
    assert "5000" in rows[FLAGGED["outlier_length"][0]]["flags"][0]["reason"]


def test_the_flags_column_shows_chips_with_their_reasons(client):
    p = page(client, "/train/1/table/")
    assert '<th scope="col" data-sort="flags">flags</th>' in p.html
    cells = dict(
        re.findall(
            r'<tr id="rv-row-(\d+)"(?:(?!</tr>).)*?<td data-field="flags" data-flags="([^"]*)"',
            p.html,
            re.S,
        )
    )
    assert len(cells) == ROWS
    for position, names in cells.items():
        assert names.split() == expected_flags(int(position))
    reason = table(client)["rows"][FLAGGED["repeats"][0]]["flags"][0]["reason"]
    chip = re.search(
        r'<span class="rv-flag-chip" data-flag="repeats" title="([^"]*)">repeats', p.html
    )
    assert chip and html.unescape(chip.group(1)) == reason
    # the reason as text too, for screen readers (a title is not read everywhere)
    assert f'<span class="rv-visually-hidden">: {html.escape(reason)}</span>' in p.html


@pytest.mark.parametrize("flag", FLAGS)
def test_the_flag_filter_keeps_exactly_the_flagged_rows(client, flag):
    twin = table(client, f"?flag={flag}")
    assert [r["position"] for r in twin["rows"]] == flagged_rows(flag)
    assert twin["total"] == len(FLAGGED[flag])
    assert twin["flag"] == flag
    assert f"flagged {flag}" in twin["conditions"]
    assert all(flag in [f["name"] for f in r["flags"]] for r in twin["rows"])


def test_the_flag_select_lists_every_flag_with_its_count_and_marks_the_chosen(client):
    p = page(client, "/train/1/table/?flag=cut")
    select = re.search(r'<select id="rv-table-flag" name="flag"[^>]*>(.*?)</select>', p.html, re.S)
    assert select
    options = re.findall(
        r'<option value="([^"]*)"( data-count="(\d+)")?( selected)?>([^<]*)</option>',
        select.group(1),
    )
    assert options[0][0] == "" and options[0][4] == "any sample"
    assert [o[0] for o in options[1:]] == list(FLAGS)
    for value, _, count, selected, text in options[1:]:
        assert int(count) == len(FLAGGED[value])
        assert text == f"{value} ({len(FLAGGED[value])})"
        assert bool(selected) == (value == "cut")
    assert re.search(r"<label>Flag\s*<select id=\"rv-table-flag\"", p.html)  # labelled
    twin = table(client)
    assert [(c["name"], c["count"]) for c in twin["flag_choices"]] == [
        (name, len(FLAGGED[name])) for name in FLAGS
    ]


def test_pager_sort_links_and_the_column_chooser_keep_the_flag(client, write_step):
    twin = table(client, "?flag=repeats&page_size=1&cols=reward,kl_missing")
    assert twin["pages"] == len(FLAGGED["repeats"])
    for url in [
        twin["urls"]["next"],
        twin["urls"]["last"],
        *(c["url"] for c in twin["columns"] if c["url"]),
    ]:
        query = parse_qs(urlsplit(url).query)
        assert query["flag"] == ["repeats"], url
        assert query["cols"] == ["reward"], url
    second = table(client, "?" + urlsplit(twin["urls"]["next"]).query)
    assert [r["position"] for r in second["rows"]] == [flagged_rows("repeats")[1]]
    assert second["cols"] == ["reward"]
    # the plain forms: the column chooser's hidden flag, the filter form's select
    p = page(client, "/train/1/table/?flag=repeats")
    form = re.search(r'<form id="rv-col-form".*?</form>', p.html, re.S)
    assert form and '<input type="hidden" name="flag" value="repeats">' in form.group(0)
    assert "?flag=repeats" in p.by_id["rv-table-samples"]["href"]


def test_the_flags_column_is_not_sortable_and_not_a_chosen_column(client):
    twin = table(client, "?cols=reward")
    header = {c["key"]: c for c in twin["columns"]}
    assert header["flags"]["sort"] is None and header["flags"]["url"] is None
    assert "flags" not in [c["key"] for c in twin["column_choices"]]
    assert twin["cols"] == ["reward"]


@pytest.mark.parametrize("value", ["nope", "REPEATS", "repeats,cut", "<script>"])
def test_an_unknown_flag_is_a_400_never_a_500(client, value):
    for path in (
        "/api/jsonl/train/file/1.jsonl/table",
        "/api/jsonl/train/file/1.jsonl/samples",
    ):
        body = get_json(client, f"{path}?flag={value}", 400)
        assert "unknown flag" in body["message"] and "repeats" in body["message"]
    response = client.get(PREFIX + f"/train/1/table/?flag={value}")
    assert response.status_code == 400
    assert b"<script>" not in response.content


# -- the samples API ------------------------------------------------------------------------
@pytest.mark.parametrize("flag", FLAGS)
def test_the_samples_api_filters_by_flag(client, flag):
    body = get_json(client, f"/api/jsonl/train/file/1.jsonl/samples?flag={flag}&page_size=100")
    assert body["positions"] == flagged_rows(flag)
    assert body["total"] == len(FLAGGED[flag])
    assert body["flag"] == flag
    assert [s["sample_index"] for s in body["samples"]] == flagged_rows(flag)


def test_the_samples_api_pages_and_sorts_within_a_flag(client):
    body = get_json(client, "/api/jsonl/train/file/1.jsonl/samples?flag=cut&page_size=2&page=2")
    assert body["positions"] == flagged_rows("cut")[2:4]
    assert body["total_pages"] == 2
    body = get_json(
        client, "/api/jsonl/train/file/1.jsonl/samples?flag=cut&sort=response_length&order=desc"
    )
    lengths = {i: 100 + i % 5 for i in FLAGGED["cut"]}
    assert body["positions"] == sorted(FLAGGED["cut"], key=lambda i: (-lengths[i], i))


# -- the step statistics --------------------------------------------------------------------
def test_the_stats_twin_carries_every_flags_count(client):
    stats = get_json(client, "/api/jsonl/train/file/1.jsonl/stats")
    assert stats["flags"] == {name: len(FLAGGED[name]) for name in FLAGS}


def test_the_stats_page_shows_counts_shares_and_links_to_the_filtered_table(client):
    p = page(client, "/train/1/stats/")
    card = re.search(r'<section class="rv-card" id="rv-stat-flags".*?</section>', p.html, re.S)
    assert card
    found = re.findall(
        r'<tr data-flag="(\w+)" data-count="(\d+)"><td>\w+</td>'
        r'<td><a class="rv-flag-count" href="([^"]+)"[^>]*>(\d+)</a></td>'
        r'<td class="rv-flag-share">([^<]+)</td></tr>',
        card.group(0),
    )
    assert [f[0] for f in found] == list(FLAGS)
    for name, count, href, text, share in found:
        assert int(count) == int(text) == len(FLAGGED[name])
        expected_share = 100 * len(FLAGGED[name]) / ROWS
        assert float(share.rstrip("%")) == pytest.approx(expected_share, abs=0.05)
        url = html.unescape(href)
        assert urlsplit(url).path == PREFIX + "/train/1/table/"
        assert parse_qs(urlsplit(url).query) == {"flag": [name]}
        # the link leads to a table of exactly those samples
        twin = table(client, "?" + urlsplit(url).query)
        assert [r["position"] for r in twin["rows"]] == flagged_rows(name)


# -- trends ---------------------------------------------------------------------------------
def test_the_trends_json_offers_flag_series_and_a_table_link(client):
    data = trends(client, "train")
    flag_series = [s for s in data["series"] if s["kind"] == "flag"]
    assert [s["key"] for s in flag_series] == [f"flag.{name}" for name in FLAGS]
    point = data["points"][0]
    for name in FLAGS:
        assert point["metrics"][f"flag.{name}"] == pytest.approx(len(FLAGGED[name]) / ROWS)
    table_url = data["table_url"].replace("{step}", point["name"])
    assert table_url == PREFIX + "/train/1/table/"
    assert data["step_url"].replace("{step}", point["name"]) == PREFIX + "/train/1/"


def test_a_rising_repeats_rate_is_warned_about_on_the_trends(client):
    run = RISING
    rates = [
        sum("check this again" in r["response"] for r in records) / len(records) for records in run
    ]
    assert len(rates) >= 10 and rates[-1] - rates[0] > 0.02
    data = trends(client, "eval")
    assert [p["metrics"]["flag.repeats"] for p in data["points"]] == pytest.approx(rates)
    warnings = [w for w in data["reading"]["warnings"] if w.startswith("flag repeats is rising")]
    assert len(warnings) == 1
    assert f"-> {rates[-1]:.3f} of the samples" in warnings[0]  # the latest rate, stated
    # and a flat run is not warned about
    trends_flat = trends(client, "train")
    assert not [w for w in trends_flat["reading"]["warnings"] if w.startswith("flag ")]
