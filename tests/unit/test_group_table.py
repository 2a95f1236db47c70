"""The group page's member table and its JSON twin, via Django's client: summary, label once,
sorting by links, the sample the user came from, and two answers compared word by word."""

from __future__ import annotations

import html
import json
import re

import pytest

from tests.support.data import sample
from tests.support.pages import PREFIX, page

HOSTILE = "<script>window.__xss=1</script>"
# (reward, status, response_length, response); label "42"
MEMBERS = [
    (1.0, "completed", 300, "So the answer is \\boxed{42}."),
    (0.0, "truncated", 4096, "Let me think forever about 41"),
    (0.0, "completed", 120, "So the answer is \\boxed{41}."),
    (1.0, "completed", 80, f"<answer>42</answer> {HOSTILE}"),
]


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.fixture
def group_step(write_step):
    records = [
        sample(i, reward=r, status=s, response_length=n, response=text, group_index=5, label="42")
        for i, (r, s, n, text) in enumerate(MEMBERS)
    ] + [sample(len(MEMBERS), group_index=6, label="7")]
    return write_step("train", 1, records)


def get_json(client, path: str, status: int = 200) -> dict:
    response = client.get(PREFIX + path)
    assert response.status_code == status, response.content[:300]
    return json.loads(response.content)


def rows(p) -> list[int]:
    return [
        int(x) for x in re.findall(r'<tbody class="rv-member[^"]*" id="rv-member-(\d+)"', p.html)
    ]


def text_of(p, element_id: str, end: str) -> str:
    """The text of the element with this id, up to its closing tag `end`, spaces collapsed."""
    found = re.search(rf'id="{element_id}"[^>]*>(.*?){end}', p.html, re.S)
    assert found, element_id
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


def cell(p, position: int, field: str) -> str:
    body = re.search(rf'id="rv-member-{position}".*?</tbody>', p.html, re.S)
    assert body
    found = re.search(rf'<td data-field="{field}"[^>]*>(.*?)</td>', body.group(0), re.S)
    assert found, field
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1))).strip()


def test_group_table_shows_summary_label_once_answers_and_matches(client, group_step):
    p = page(client, "/train/1/group/5/")
    assert rows(p) == [0, 1, 2, 3]
    summary = text_of(p, "rv-group-summary", "</dl>")
    assert "members 4" in summary and "mean reward 0.5" in summary
    assert "solved 2 of 4 (50.0 %)" in summary and "truncated 1" in summary
    assert (
        p.html.count('class="rv-label-value"') == 1
        and text_of(p, "rv-group-label", "</p>") == "label 42"
    )
    assert [cell(p, i, "answer") for i in range(4)] == ["42", "none", "41", "42"]
    assert [cell(p, i, "match") for i in range(4)] == ["✓ yes", "\N{EN DASH}", "✗ no", "✓ yes"]
    assert cell(p, 1, "length") == "4096" and cell(p, 1, "reward") == "0"
    assert HOSTILE not in p.html and html.escape(HOSTILE) in p.html
    assert p.html.count('data-field="prompt"') == 1  # the shared prompt, once


def test_group_table_sorts_by_links_without_script_and_the_json_carries_the_same(
    client, group_step
):
    p = page(client, "/train/1/group/5/")
    links = dict(re.findall(r'<th scope="col" data-sort="(\w+)"[^>]*><a class="rv-sort-link" '
                            r'href="([^"]+)"', p.html))  # fmt: skip
    by_reward = page(client, "/train/1/group/5/" + html.unescape(links["reward"]))
    assert rows(by_reward) == [0, 3, 1, 2]  # descending first, ties in file order
    assert 'data-sort="reward" aria-sort="descending"' in by_reward.html
    again = re.search(
        r'data-sort="reward"[^>]*><a class="rv-sort-link" href="([^"]+)"', by_reward.html
    )
    assert again and "order=asc" in html.unescape(again.group(1))
    by_length = page(client, "/train/1/group/5/?sort=length&order=asc")
    assert rows(by_length) == [3, 2, 0, 1]
    by_match = page(client, "/train/1/group/5/?sort=match")
    assert rows(by_match) == [0, 3, 2, 1]  # yes, yes, no, then the unjudged last
    data = get_json(client, "/api/jsonl/train/file/1.jsonl/group/5?sort=length&order=asc")
    assert [m["position"] for m in data["members"]] == [3, 2, 0, 1]
    assert [m["answer"] for m in data["members"]] == ["42", "41", "42", None]
    assert [m["match"] for m in data["members"]] == [True, False, True, None]
    assert data["summary"]["solved"] == 2 and data["summary"]["truncated"] == 1
    assert data["label"] == {"same": True, "label": "42", "labels": ["42"], "text": ["42"]}
    assert data["mean"] == 0.5 and data["group"] == 5
    assert html.unescape(by_length.by_id["rv-json"]["href"]) == (
        f"{PREFIX}/api/jsonl/train/file/1.jsonl/group/5?sort=length&order=asc"
    )
    assert (
        "sort must be one of"
        in get_json(client, "/api/jsonl/train/file/1.jsonl/group/5?sort=x", 400)["message"]
    )


def test_group_table_highlights_the_sample_the_user_came_from(client, group_step):
    sample_page = page(client, "/train/1/sample/2/")
    link = html.unescape(sample_page.by_id["rv-group-link"]["href"])
    assert link == f"{PREFIX}/train/1/group/5/?from=2"
    p = page(client, link.removeprefix(PREFIX))
    highlighted = re.findall(r'<tbody class="rv-member rv-member-from" id="rv-member-(\d+)"[^>]*'
                             r'aria-current="true"', p.html)  # fmt: skip
    assert highlighted == ["2"]
    assert (
        'details class="rv-member-details" open'
        in p.html.split('id="rv-member-2"')[1].split("</tbody>")[0]
    )
    assert p.html.count('rv-member-details" open') == 1
    # Sorting keeps it highlighted.
    sorted_page = page(client, "/train/1/group/5/?sort=reward&from=2")
    assert 'id="rv-member-2" data-position="2" aria-current="true"' in sorted_page.html
    sort_link = re.search(r'class="rv-sort-link" href="([^"]+)"', sorted_page.html)
    assert sort_link and "from=2" in html.unescape(sort_link.group(1))
    assert "rv-member-from" not in page(client, "/train/1/group/5/").html


def test_two_members_compared_word_by_word_escaped(client, group_step):
    p = page(client, "/train/1/group/5/?from=0")
    compare = re.search(r'id="rv-member-2".*?class="rv-compare-link" href="([^"]+)"', p.html, re.S)
    assert compare and html.unescape(compare.group(1)).startswith("?from=0&a=0&b=2")
    shown = page(client, "/train/1/group/5/" + html.unescape(compare.group(1)).split("#")[0])
    sides = re.findall(r'<pre class="rv-diff"[^>]*>(.*?)</pre>', shown.html, re.S)
    assert len(sides) == 2
    assert sides[0] == 'So the answer is <del class="rv-diff-del">\\boxed{42}.</del>'
    assert sides[1] == 'So the answer is <ins class="rv-diff-ins">\\boxed{41}.</ins>'
    hostile = page(client, "/train/1/group/5/?a=0&b=3")
    assert HOSTILE not in hostile.html and "&lt;script&gt;" in hostile.html
    data = get_json(client, "/api/jsonl/train/file/1.jsonl/group/5?a=0&b=2")
    assert data["compare"]["diff"]["changed_a"] == 1 and data["compare"]["b"]["position"] == 2
    bad = get_json(client, "/api/jsonl/train/file/1.jsonl/group/5?a=0&b=4", 400)
    assert "b must be a shown sample of group 5" in bad["message"]
