"""The prompt page and its JSON list a prompt's appearances a page at a time (issue 26, item 10:
one prompt shared by 60,000 samples gave a 12.4 MB page in 11 s). A page size with a default
(200) and a maximum (ROLLOUTS_MAX_PAGE_SIZE), links between the pages, and totals that still
count every appearance."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from rollouts.views.lineage import PROMPT_PAGE_SIZE
from tests.support.data import sample
from tests.support.pages import PREFIX, page

SHARED = "<|im_start|>user\nthe one question everybody is asked<|im_end|>\n"
PID = format_prompt_id(prompt_id_of_value(SHARED))


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def write_prompt_steps(write_step, counts: dict[int, int]) -> None:
    """Step s holds counts[s] samples of SHARED (reward 1 on odd lines) and two others."""
    for step, count in counts.items():
        records = [sample(i, prompt=SHARED, reward=float(i % 2)) for i in range(count)]
        records += [sample(count + i, prompt=f"another {i}") for i in range(2)]
        write_step("train", step, records)


def twin(client, query: str = "", status: int = 200) -> dict:
    response = client.get(PREFIX + f"/api/jsonl/train/prompt/{PID}{query}")
    assert response.status_code == status, response.content[:300]
    return json.loads(response.content)


def sample_links(html: str) -> list[str]:
    return re.findall(r'<a class="rv-prompt-sample[^"]*" href="([^"]+)"', html)


def test_one_prompt_in_6000_samples_is_a_small_page_with_exact_totals(client, write_step):
    # The issue's 60,000 samples, a tenth of them: thirty pages' worth still makes a page of
    # them all far bigger than the bound below, at a tenth of the fast tier's time.
    write_prompt_steps(write_step, {1: 6_000, 2: 3})
    data = twin(client)
    assert (data["total"], data["page"], data["pages"], data["page_size"]) == (6_003, 1, 31, 200)
    assert len(data["appearances"]) == PROMPT_PAGE_SIZE
    assert [a["position"] for a in data["appearances"]] == list(range(PROMPT_PAGE_SIZE))
    # Every step's totals count all of its samples, not the page's.
    assert data["steps"] == [
        {"step": 1, "samples": 6_000, "mean_reward": 0.5},
        {"step": 2, "samples": 3, "mean_reward": pytest.approx(1 / 3)},
    ]
    response = client.get(PREFIX + f"/train/prompt/{PID}/")
    html = response.content.decode()
    assert response.status_code == 200 and len(response.content) < 150_000
    assert len(sample_links(html)) == PROMPT_PAGE_SIZE
    assert "6003 samples in 2 steps" in html
    form = html[html.index('id="rv-pair-form"') : html.index("</form>", html.index("rv-pair-form"))]
    # Each select offers the page's appearances and the two compared: the best and the worst of
    # step 2 (rewards 1 and 0, off this page of step 1's).
    assert form.count("<option ") == 2 * (PROMPT_PAGE_SIZE + 2)
    # The chart still has a point per step.
    chart = json.loads(page(client, f"/train/prompt/{PID}/").by_id["rv-prompt-chart"]["data-chart"])
    assert [(p["step"], p["mean_reward"]) for p in chart] == [(1, 0.5), (2, pytest.approx(1 / 3))]
    last = twin(client, "?page=31")
    assert [(a["step"], a["position"]) for a in last["appearances"]] == [(2, 0), (2, 1), (2, 2)]


def test_the_pages_link_to_each_other_and_together_list_every_appearance(client, write_step):
    write_prompt_steps(write_step, {1: 12, 2: 5, 3: 8})
    seen, query = [], "?page_size=10"
    for _ in range(10):  # bounded: 3 pages expected
        data = twin(client, query)
        seen += [(a["step"], a["position"]) for a in data["appearances"]]
        if data["urls"]["next"] is None:
            break
        query = "?" + urlsplit(data["urls"]["next"]).query
        assert data["urls"]["next"].startswith(PREFIX + "/api/jsonl/train/prompt/")
    expected = [(s, p) for s, n in ((1, 12), (2, 5), (3, 8)) for p in range(n)]
    assert seen == expected and data["page"] == data["pages"] == 3
    assert data["urls"]["prev"] is not None and data["urls"]["page"].endswith("page=3&page_size=10")

    p = page(client, f"/train/prompt/{PID}/?page=2&page_size=10")
    assert {"rv-prompt-prev", "rv-prompt-next", "rv-prompt-pages"} <= set(p.by_id)
    assert parse_qs(urlsplit(p.by_id["rv-prompt-next"]["href"]).query) == {
        "page": ["3"],
        "page_size": ["10"],
    }
    # Page 2 holds step 1's last 2 samples, step 2's 5 and step 3's first 3: each of steps
    # 1 and 3 says where the rest are.
    rows = re.findall(r'<tr data-step="(\d+)">', p.html)
    assert rows == ["1", "2", "3"] and len(sample_links(p.html)) == 10
    elsewhere = re.findall(r"and (\d+) more on pages? (.*?)</span>", p.html)
    assert [(n, re.findall(r">(\d+)</a>", where)) for n, where in elsewhere] == [
        ("10", ["1"]),
        ("5", ["3"]),
    ]
    # A page past the end is the last page.
    assert twin(client, "?page_size=10&page=99")["page"] == 3


@pytest.mark.parametrize(
    "query",
    ["?page_size=1001", "?page_size=0", "?page=0", "?page=x", "?page_size=-5"],
)
def test_the_page_size_and_page_are_bounded_on_the_page_and_in_the_json(client, write_step, query):
    write_prompt_steps(write_step, {1: 3})
    error = twin(client, query, status=400)
    assert error["ok"] is False and query.split("=")[0][1:] in error["message"]
    page(client, f"/train/prompt/{PID}/{query}", status=400)


def test_the_largest_page_is_the_settings_maximum(client, settings, write_step):
    write_prompt_steps(write_step, {1: 30})
    assert len(twin(client, "?page_size=1000")["appearances"]) == 30
    settings.ROLLOUTS_MAX_PAGE_SIZE = 20
    assert "between 1 and 20" in twin(client, "?page_size=21", status=400)["message"]


def test_a_pair_chosen_from_another_page_stays_compared_and_choosable(client, write_step):
    write_prompt_steps(write_step, {1: 12, 2: 5})
    p = page(client, f"/train/prompt/{PID}/?page_size=5&a=2:4&b=1:0")
    options = re.findall(r'<option value="([^"]+)"', p.html)
    assert "2:4" in options and "1:0" in options  # 2:4 is on page 4, not this one
    assert 'class="rv-compare-head"' in p.html
    # Page links keep the pair and the page size.
    query = parse_qs(urlsplit(p.by_id["rv-prompt-next"]["href"]).query)
    assert query == {"page": ["2"], "page_size": ["5"], "a": ["2:4"], "b": ["1:0"]}
    assert "STEP:POSITION" in page(client, f"/train/prompt/{PID}/?a=2:5", status=400).html
    assert "STEP:POSITION" in page(client, f"/train/prompt/{PID}/?a=2:{'9' * 40}", status=400).html
