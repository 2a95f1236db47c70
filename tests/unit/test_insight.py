"""Step statistics, group and trends pages, and the trends and poll JSON, via Django's client."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

from tests.support.data import relax_line, sample
from tests.support.pages import PREFIX, page
from tests.support.wait import wait_for

HOSTILE = "<script>window.__xss=1</script>"


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def get_json(client, path: str, status: int = 200) -> dict:
    response = client.get(PREFIX + path)
    assert response.status_code == status, response.content[:300]
    return json.loads(response.content)


def trends(client, bucket: str = "train", query: str = "") -> dict:
    """The trends JSON once every step is indexed (the background pass is quick here)."""
    return wait_for(
        lambda: get_json(client, f"/api/jsonl/{bucket}/trends{query}"),
        "every step indexed",
        until=lambda data: data["done"],
    )


def records(rewards: list[float], lengths: list[int], statuses: list[str]) -> list[dict]:
    return [
        sample(i, reward=r, response_length=n, status=s, group_index=i // 2)
        for i, (r, n, s) in enumerate(zip(rewards, lengths, statuses, strict=True))
    ]


REWARDS = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.5, 1.0]
LENGTHS = [10, 200, 35, 35, 400, 90, 120, 60]
STATUSES = ["completed", "truncated", "completed", "completed", "truncated", "aborted",
            "completed", "completed"]  # fmt: skip


@pytest.fixture
def step(write_step) -> Path:
    return write_step("train", 3, records(REWARDS, LENGTHS, STATUSES))


# -- the step statistics page ----------------------------------------------------------------
def stat(p, name: str) -> str:
    match = re.search(rf'data-stat="{name}">([^<]*)<', p.html)
    assert match, name
    return match.group(1)


def test_stats_page_shows_counts_reward_lengths_and_groups(client, step):
    p = page(client, "/train/3/stats/")
    mean = sum(REWARDS) / len(REWARDS)
    assert stat(p, "samples") == str(len(REWARDS))
    assert stat(p, "reward-mean") == f"{mean:.4f}"
    # Whole numbers as integers; a share's "%" held to its number by a no-break space.
    assert stat(p, "reward-max") == "1" and stat(p, "reward-min") == "0"
    assert stat(p, "length-max") == str(max(LENGTHS))
    assert stat(p, "length-mean") == f"{sum(LENGTHS) / len(LENGTHS):.1f}"  # 118.8, from 100 up
    share = STATUSES.count("truncated") / 8
    assert stat(p, "truncation-rate") == f"{100 * share:.1f}\N{NO-BREAK SPACE}%"
    # Groups of two: (1,0) (1,1) (0,0) (0.5,1): two of four have equal rewards.
    assert stat(p, "groups") == "4" and stat(p, "zero-signal") == "50.0\N{NO-BREAK SPACE}%"
    statuses = dict(re.findall(r'<li data-status="(\w+)">.*?<span class="rv-num">(\d+)<', p.html))
    assert statuses == {s: str(STATUSES.count(s)) for s in set(STATUSES)}
    assert p.by_id["rv-json"]["href"] == f"{PREFIX}/api/jsonl/train/file/3.jsonl/stats"
    assert p.by_id["rv-stats-link"].get("aria-current") == "page"


def test_each_histogram_bar_links_to_exactly_the_samples_it_counts(client, step):
    p = page(client, "/train/3/stats/")
    bars = re.findall(r'<a href="([^"]+)" class="rv-bar-link" data-range="([^"]+)" '
                      r'data-count="(\d+)"', p.html)  # fmt: skip
    assert bars, "no histogram bars"
    reward_bars = [b for b in bars if b[1].startswith("reward:")]
    # Rewards take three values: one bar each.
    assert [(b[1], int(b[2])) for b in reward_bars] == [
        (f"reward:[{v},{v}]", REWARDS.count(float(v))) for v in ("0", "0.5", "1")
    ]
    for url, _, count in bars:
        target = client.get(html.unescape(url), follow=True)
        total = re.search(r"Sample \d+ of (\d+)|No samples in this step match", target.text)
        assert total is not None
        assert int(total.group(1) or 0) == int(count), url


def test_scatter_links_every_sample_and_marks_the_truncated(client, step):
    p = page(client, "/train/3/stats/")
    points = re.findall(r'<a href="([^"]+)" class="rv-point-link" data-position="(\d+)">'
                        r'<circle class="rv-point( rv-point-truncated)?"', p.html)  # fmt: skip
    assert sorted(int(pos) for _, pos, _ in points) == list(range(len(REWARDS)))
    for url, position, truncated in points:
        assert html.unescape(url) == f"{PREFIX}/train/3/sample/{position}/"
        assert bool(truncated) == (STATUSES[int(position)] == "truncated")


def test_range_filter_on_the_sample_pages_keeps_through_navigation_and_clears(client, step):
    response = client.get(PREFIX + "/train/3/?range=response_length:[30,100)")
    p = page(client, "/train/3/?range=response_length:[30,100)")
    inside = [i for i, n in enumerate(LENGTHS) if 30 <= n < 100]
    assert response.status_code == 200
    assert p.text_of["rv-position"].strip() == f"Sample 1 of {len(inside)}"
    assert "response_length in [30,100)" in p.text_of["rv-range-chip"]
    assert "range=response_length" in p.by_id["rv-next"]["href"]
    clear = p.by_id["rv-range-chip"]["href"]
    assert "range" not in clear
    assert (
        page(client, clear.removeprefix(PREFIX))
        .text_of["rv-position"]
        .strip()
        .endswith(f"of {len(REWARDS)}")
    )


def test_bad_ranges_are_a_clear_400(client, step):
    p = page(client, "/train/3/?range=reward:[1,0)", status=400)
    assert "low &lt;= high" in p.html
    p = page(client, "/train/3/?range=status:[0,1)", status=400)
    assert "cannot filter on a range of &#x27;status&#x27;" in p.html
    data = get_json(client, "/api/jsonl/train/file/3.jsonl/samples?range=reward", 400)
    assert "range must look like" in data["message"]


def test_group_page_lists_the_group_as_a_table_and_links_back(client, write_step):
    prompt = f"<|im_start|>user\nsame question {HOSTILE}<|im_end|>\n<|im_start|>assistant\n"
    lines = [
        sample(i, prompt=prompt, response=f"answer number {i}", reward=float(i == 1), group_index=7)
        for i in range(3)
    ] + [sample(3, group_index=8)]
    write_step("train", 0, lines)
    p = page(client, "/train/0/group/7/")
    members = re.findall(r'<tbody class="rv-member" id="rv-member-(\d+)"', p.html)
    assert members == ["0", "1", "2"]
    assert [f"answer number {i}" in p.html for i in range(4)] == [True, True, True, False]
    assert p.html.count('data-field="prompt"') == 1  # the shared prompt, once
    assert HOSTILE not in p.html and html.escape(HOSTILE) in p.html
    assert "rv-zero-signal" not in p.by_id  # rewards 0, 1, 0: a signal
    shown = re.findall(r'<td data-field="reward" class="">([^<]+)</td>', p.html)
    assert shown == ["0", "1", "0"]  # whole rewards as integers
    sample_page = page(client, "/train/0/sample/1/")
    assert sample_page.by_id["rv-group-link"]["href"] == f"{PREFIX}/train/0/group/7/?from=1"
    assert page(client, "/train/0/group/9/", status=404).text_of["rv-main"]
    data = get_json(client, "/api/jsonl/train/file/0.jsonl/group/7")
    assert [m["position"] for m in data["members"]] == [0, 1, 2] and data["mean"] == 1 / 3


# -- trends ----------------------------------------------------------------------------------
def test_trends_json_has_points_series_cards_and_reading(client, write_step):
    means = [0.1, 0.3, 0.5, 0.7]
    for step_number, mean in enumerate(means):
        write_step("train", step_number * 10, [sample(i, reward=mean) for i in range(4)])
    data = trends(client)
    assert data["done"] and data["total"] == data["indexed"] == 4
    assert [p["step"] for p in data["points"]] == [0, 10, 20, 30]
    assert [p["metrics"]["reward_mean"] for p in data["points"]] == pytest.approx(means)
    assert data["step_url"] == f"{PREFIX}/train/{{step}}/"
    assert data["series"][0] == {"key": "reward_mean", "label": "Mean reward", "direction": 1,
                                 "kind": "metric"}  # fmt: skip
    reward_card = data["cards"][0]
    assert reward_card["latest"] == pytest.approx(0.7)
    assert reward_card["delta"] == pytest.approx(0.2)
    assert data["reading"]["reading"] == "rising"
    assert data["cursor"] == {"after": 30, "size": data["points"][-1]["size_bytes"]}
    later = trends(client, query="?after=10")
    assert [p["step"] for p in later["points"]] == [20, 30]
    assert later["reading"] == data["reading"]  # the reading always covers every step


def test_a_status_a_step_lacks_is_a_zero_share_not_a_gap(client, write_step):
    write_step("train", 0, [sample(0, status="truncated"), sample(1)])
    write_step("train", 1, [sample(0), sample(1)])
    write_step("train", 2, [])
    points = trends(client)["points"]
    assert [p["metrics"].get("status.truncated") for p in points] == [0.5, 0.0, None]
    assert [p["metrics"].get("status.completed") for p in points] == [0.5, 1.0, None]


def test_trends_of_an_eval_bucket_have_accuracy_per_dataset(client, write_step):
    write_step("eval", 0, [sample(0, reward=1.0, dataset="gsm8k"),
                           sample(1, reward=0.0, dataset="math")])  # fmt: skip
    data = trends(client, "eval")
    keys = {s["key"]: s for s in data["series"]}
    assert keys["dataset.gsm8k"]["label"] == "Accuracy gsm8k"
    assert data["points"][0]["metrics"]["dataset.math"] == 0.0


def test_trends_page_carries_the_urls_its_script_reads(client, step):
    p = page(client, "/train/trends/")
    main = p.by_id["rv-main"]
    assert main["data-trends-url"] == f"{PREFIX}/api/jsonl/train/trends"
    # The page carries the trends' first answer, so the script draws without asking again.
    assert p.by_id["rv-trends-data"]["type"] == "application/json"
    inline = inline_trends(p.html)
    assert inline["subdir"] == "train" and inline["total"] == 1
    assert p.by_id["rv-trends-link"].get("aria-current") == "page"
    assert page(client, "/nope/trends/", status=404)


def inline_trends(html_text: str) -> dict:
    """The trends JSON a page carries in its <script type="application/json"> element."""
    found = re.search(r'<script type="application/json" id="rv-trends-data">(.*?)</script>',
                      html_text, re.S)  # fmt: skip
    assert found is not None
    return json.loads(found.group(1))


def test_trends_page_carries_hostile_names_inert_in_its_inline_json(client, write_step):
    write_step("eval", 0, [sample(0, reward=1.0, dataset=HOSTILE + "&"),
                           sample(1, reward=math.nan, dataset="math")])  # fmt: skip
    trends(client, "eval")  # indexed: the page's answer holds the point
    p = page(client, "/eval/trends/")
    assert "window.__xss" not in p.html.replace("\\u003Cscript\\u003Ewindow.__xss", "")
    inline = inline_trends(p.html)
    keys = {s["key"] for s in inline["series"]}
    assert f"dataset.{HOSTILE}&" in keys
    assert inline["points"][0]["metrics"]["reward_mean"] == 1.0  # NaN left out, strict JSON
    assert inline["done"] is True and inline["indexed"] == 1


@pytest.mark.parametrize("path", ["/train/3/", "/train/3/stats/", "/train/trends/"])
def test_every_page_of_a_bucket_renders_the_poll_interval_setting(client, step, settings, path):
    assert page(client, path).by_id["rv-header"]["data-poll-ms"] == "3000"
    settings.ROLLOUTS_POLL_MS = 200
    assert page(client, path).by_id["rv-header"]["data-poll-ms"] == "200"


# -- polling ---------------------------------------------------------------------------------
def test_poll_reports_new_and_grown_steps_after_the_cursor(client, write_step):
    first = write_step("train", 1, [sample(0)])
    write_step("train", 2, [sample(0)])
    data = get_json(client, "/api/jsonl/train/poll")
    assert data["changed"] and [s["step"] for s in data["steps"]] == [1, 2]
    cursor = data["cursor"]
    assert cursor == {"after": 2, "size": (first.parent / "2.jsonl").stat().st_size}
    unchanged = get_json(client, f"/api/jsonl/train/poll?after=2&size={cursor['size']}")
    assert unchanged["changed"] is False and unchanged["steps"] == []
    grown = write_step("train", 2, [sample(0), sample(1)])
    write_step("train", 5, [sample(0)])
    data = get_json(client, f"/api/jsonl/train/poll?after=2&size={cursor['size']}")
    assert [(s["step"], s["size_bytes"]) for s in data["steps"]] == [
        (2, grown.stat().st_size),
        (5, (first.parent / "5.jsonl").stat().st_size),
    ]
    assert data["steps"][1]["url"] == f"{PREFIX}/train/5/"


def test_poll_watches_the_shown_step_and_never_reports_a_half_line(client, write_step):
    path = write_step("train", 0, [sample(0), sample(1)])
    size = path.stat().st_size
    quiet = get_json(client, f"/api/jsonl/train/poll?after=0&size={size}&watch=0&watch_size={size}")
    assert quiet["watched"] is None and not quiet["changed"]
    with path.open("a") as f:
        f.write(relax_line(sample(2)) + relax_line(sample(3))[:20])  # one line and a half
    data = get_json(client, f"/api/jsonl/train/poll?after=0&size={size}&watch=0&watch_size={size}")
    assert data["changed"]
    assert data["watched"] == {"name": "0", "size_bytes": path.stat().st_size, "records": 3,
                               "partial_tail_bytes": 20}  # fmt: skip
    gone = get_json(client, "/api/jsonl/train/poll?watch=9")  # deleted under the page
    assert gone["changed"] and gone["watched"] == {"name": "9", "deleted": True}
    assert "integer" in get_json(client, "/api/jsonl/train/poll?after=x", 400)["message"]


# -- several runs ----------------------------------------------------------------------------
def test_run_picker_shows_each_runs_reading(client, settings, tmp_path):
    def run(name: str, means: list[float]) -> Path:
        train = tmp_path / name / "train"
        train.mkdir(parents=True)
        for step_number, mean in enumerate(means):
            (train / f"{step_number}.jsonl").write_text(
                "".join(relax_line(sample(i, reward=mean)) for i in range(2))
            )
        return tmp_path / name

    settings.ROLLOUTS_DATA_DIR = None
    up, down = run("up", [0.1 * i for i in range(8)]), run("down", [1 - 0.1 * i for i in range(8)])
    settings.ROLLOUTS_DATA_DIRS = {"up": str(up), "down": str(down)}

    def readings_of():
        p = page(client, "/")
        return p, dict(re.findall(r'data-run="(\w+)">.*?data-reading="([^"]+)"', p.html, re.S))

    p, readings = wait_for(readings_of, "both runs' readings", until=lambda got: len(got[1]) == 2)
    assert readings == {"up": "rising", "down": "not rising"}
    assert 'http-equiv="refresh"' not in p.html  # it refreshes itself only while indexing
    assert f'href="{PREFIX}/runs/up/train/trends/"' in p.html


def test_sample_pages_summarise_their_step_and_link_its_statistics(client, step):
    p = page(client, "/train/3/sample/2/")
    summary = " ".join(p.text_of["rv-step-summary"].split())
    mean = sum(REWARDS) / len(REWARDS)
    truncated = 100 * STATUSES.count("truncated") / len(STATUSES)
    assert summary.startswith(f"Step 3: {len(REWARDS)} samples · mean reward {mean:.4f}")
    assert f"{truncated:.1f} % truncated" in summary
    assert "50.0 % of 4 groups without signal" in summary
    assert f'href="{PREFIX}/train/3/stats/">statistics</a>' in p.html


def test_bucket_tabs_of_the_trends_page_lead_to_each_buckets_trends(client, write_step):
    write_step("train", 0, [sample(0)])
    write_step("eval", 0, [sample(0, dataset="gsm8k")])
    p = page(client, "/train/trends/")
    tabs = re.findall(r'<a class="rv-bucket" href="([^"]+)"[^>]*>(train|eval)</a>', p.html)
    assert tabs == [(f"{PREFIX}/train/trends/", "train"), (f"{PREFIX}/eval/trends/", "eval")]
    samples = page(client, "/train/0/")
    assert f'<a class="rv-bucket" href="{PREFIX}/eval/"' in samples.html


def test_group_page_shows_an_object_reward_by_component(client, write_step):
    write_step("train", 0, [sample(0, reward={"acc": 1.0, "format": 0.5}, group_index=2),
                            sample(1, reward=None, group_index=2)])  # fmt: skip
    p = page(client, "/train/0/group/2/")
    shown = re.findall(r'<td data-field="reward" class="[^"]*">([^<]+)</td>', p.html)
    assert shown == ["acc 1, format 0.5", "null"]
