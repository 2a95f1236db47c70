"""The sample header: reward and status chips, the extracted answer beside the label, the
truncation marker, the one line naming the sample's numbers, and the same facts in the JSON twin."""

from __future__ import annotations

import json
import re

import pytest

from rollouts.presentation.sample import info_rows
from rollouts.presentation.verdict import (
    extract_answer,
    judge_sample,
    reward_badges,
)
from tests.support.data import sample
from tests.support.pages import PREFIX, page

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def twin(client, path: str) -> dict:
    response = client.get(PREFIX + "/api/view" + path)
    assert response.status_code == 200
    return json.loads(response.content)


def chips(html: str) -> dict[str, tuple[str, str]]:
    """data-field -> (tone, shown value) of each reward chip."""
    found = re.findall(
        r'class="rv-chip rv-reward-chip rv-tone-([\w-]+)" data-field="([\w.]+)"[^>]*>'
        r'<span class="rv-chip-name">[\w.]+</span> ([^<]*)</span>',
        html,
    )
    return {field: (tone, value) for tone, field, value in found}


def text_of(html: str, element_id: str) -> str:
    """The text of the element with that id up to its first closing tag."""
    found = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', html)
    assert found, element_id
    return found.group(1)


def paragraph_text(html: str, element_id: str) -> str:
    """A <p>'s text, tags dropped and spaces collapsed (entities are left as written)."""
    inner = html.split(f'id="{element_id}"', 1)[1].split(">", 1)[1].split("</p>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", "", inner).split()).replace("&middot;", "·")


# -- the presentation, no Django -------------------------------------------------------------
@pytest.mark.parametrize(
    ("reward", "scale", "tone", "kind"),
    [
        (1, None, "right", "binary"),
        (1.0, None, "right", "binary"),
        (0, None, "wrong", "binary"),
        (0.0, (0.0, 0.5), "wrong", "binary"),
        (0.5, None, "scale-2", "scale"),
        (0.95, None, "scale-4", "scale"),
        (0.1, None, "scale-0", "scale"),
        (-0.5, (-1.0, 1.0), "scale-1", "scale"),
        (3.0, (0.0, 4.0), "scale-3", "scale"),
        (7.0, None, "scale-4", "scale"),  # outside 0..1: the top of a stretched scale
        (float("nan"), None, "none", "missing"),
        (None, None, "none", "missing"),
        ("high", None, "none", "missing"),
    ],
)
def test_reward_tone_by_value(reward, scale, tone, kind):
    (badge,) = reward_badges({"reward": reward}, scale)
    assert (badge.tone, badge.kind) == (tone, kind)
    assert badge.css_class == f"rv-tone-{tone}"


def test_object_reward_is_one_chip_per_component_and_no_reward_no_chip():
    badges = reward_badges({"reward": {"acc": 1, "format": 0.5, "len": None}}, None)
    assert [(b.name, b.tone) for b in badges] == [
        ("reward.acc", "right"),
        ("reward.format", "scale-2"),
        ("reward.len", "none"),
    ]
    assert reward_badges({}, None) == ()


@pytest.mark.parametrize(
    ("response", "answer", "source"),
    [
        ("so \\boxed{12} then \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}", "boxed"),
        ("<think>maybe 3</think><answer> 42 </answer>", "42", "answer"),
        ("<answer>the result is \\boxed{7}</answer> \\boxed{9}", "9", "boxed"),  # the later
        ("\\boxed{unclosed", None, None),
        ("no answer at all", None, None),
        ("\\boxed{}", None, None),
    ],
)
def test_extract_answer(response, answer, source):
    found = extract_answer(response)
    assert (found and found.text, found and found.source) == (answer, source)


def test_verdict_compares_only_when_both_are_there():
    assert judge_sample({"response": "\\boxed{4}", "label": 4}).match is True
    assert judge_sample({"response": "\\boxed{4}", "label": "5"}).match is False
    assert judge_sample({"response": "\\boxed{4}"}).match is None
    assert judge_sample({"response": "four", "label": "4"}).match is None
    assert judge_sample({"response": "x", "label": 0}).label == "0"


def test_truncation_marker_names_the_length_and_only_when_truncated():
    assert judge_sample({"status": "truncated", "response_length": 4096}).cut == (
        "cut at 4,096 tokens"
    )
    only_count = {"status": "truncated", "response_token_count": 512}
    assert judge_sample(only_count).cut == "cut at 512 tokens"
    assert judge_sample({"status": "truncated"}).cut == "cut here (truncated)"
    assert judge_sample({"status": "completed", "response_length": 4096}).cut is None


def test_token_counts_equal_to_their_lengths_fold_into_the_length_row():
    rows = info_rows(
        {
            "reward": 1,
            "status": "completed",
            "response_length": 7,
            "response_token_count": 7,
            "total_length": 9,
            "total_token_count": 10,  # differs: kept as its own row
        }
    )
    outcome = [r.name for r in rows if r.group == "outcome"]
    lengths = [(r.name, r.also) for r in rows if r.group == "length"]
    assert outcome == ["reward", "status"]
    assert lengths == [
        ("response_length", ("response_token_count",)),
        ("total_length", ()),
        ("total_token_count", ()),
    ]


# -- the page and its twin -------------------------------------------------------------------
def test_header_shows_coloured_chips_answer_label_match_and_identity(client, write_step):
    records = [
        sample(0, reward=0.0, response="\\boxed{41}", label="42"),
        sample(1, reward=1.0, response="<answer>42</answer>", label=42, sample_index=7),
    ]
    write_step("train", 12, records)
    wrong = page(client, "/train/12/sample/0/")
    assert chips(wrong.html) == {"reward": ("wrong", "0")}
    assert wrong.by_id["rv-answer-check"]["data-match"] == "no"
    assert text_of(wrong.html, "rv-extracted") == "41"
    assert text_of(wrong.html, "rv-label-value") == "42"
    right = page(client, "/train/12/sample/1/")
    assert chips(right.html) == {"reward": ("right", "1")}
    assert right.by_id["rv-answer-check"]["data-match"] == "yes"
    assert right.by_id["rv-status-chip"]["data-tone"] == "ok"
    # One way of numbering the sample in the header: its line in the file (the rank is the
    # toolbar's, the URL's position the address bar's, sample_index the info card's).
    identity = paragraph_text(right.html, "rv-identity")
    assert identity == "line 2 of train/12.jsonl · group 0 · this prompt across training"
    sorted_page = page(client, "/train/12/sample/1/?sort=reward&order=desc")
    assert paragraph_text(sorted_page.html, "rv-identity") == identity
    assert text_of(sorted_page.html, "rv-position") == "Sample 1 of 2"


def test_continuous_reward_is_coloured_on_the_steps_range(client, write_step):
    write_step("train", 0, [sample(i, reward=r) for i, r in enumerate((2.0, 6.0, 10.0))])
    assert chips(page(client, "/train/0/sample/1/").html) == {"reward": ("scale-2", "6")}
    assert chips(page(client, "/train/0/sample/2/").html) == {"reward": ("scale-4", "10")}


def test_object_reward_chips_on_the_page(client, write_step):
    write_step("train", 0, [sample(0, reward={"acc": 0, "format": 1})])
    assert chips(page(client, "/train/0/").html) == {
        "reward.acc": ("wrong", "0"),
        "reward.format": ("right", "1"),
    }


def test_truncated_response_ends_with_a_cut_marker(client, write_step):
    records = [
        sample(0, status="truncated", response_length=4096, response="and then"),
        sample(1, status="completed"),
    ]
    write_step("train", 0, records)
    html = page(client, "/train/0/sample/0/").html
    response = html.split('data-field="response"')[1].split("</section>")[0]
    assert re.search(r'class="rv-cut"[^>]*>.*cut at 4,096 tokens', response)
    assert response.index("rv-cut") > response.index('class="rv-raw"')  # after the text
    assert "cut at 4,096 tokens" in text_of(html, "rv-cut-chip")
    assert "rv-cut" not in page(client, "/train/0/sample/1/").html


def test_json_twin_carries_the_verdict_and_identity(client, write_step):
    records = [sample(0, reward=1, status="truncated", response="\\boxed{3}", label="3")]
    write_step("train", 4, records)
    data = twin(client, "/train/4/sample/0")
    assert data["verdict"] == {
        "rewards": [
            {"name": "reward", "display": "1", "tone": "right", "kind": "binary",
             "class": "rv-tone-right"},
        ],
        "status": {"name": "status", "display": "truncated", "tone": "bad", "kind": "status",
                   "class": "rv-tone-bad"},
        "answer": {"text": "3", "source": "boxed"},
        "label": "3",
        "match": True,
        "truncation": "cut at 10 tokens",
    }  # fmt: skip
    assert data["identity"] == {
        "rank": 1, "total": 1, "order": "file order", "line": 1, "file": "train/4.jsonl",
        "position": 0, "sample_index": 0,
    }  # fmt: skip


def test_hostile_answer_and_label_are_escaped(client, write_step):
    hostile = "<img src=x onerror=alert(1)>"
    write_step("train", 0, [sample(0, response=f"<answer>{hostile}</answer>", label=hostile)])
    html = page(client, "/train/0/").html
    head = html.split('id="rv-sample-head"')[1].split("</header>")[0]
    assert "<img" not in head
    assert "&lt;img src=x onerror=alert(1)&gt;" in head


def test_numbers_too_big_for_a_float_do_not_break_the_header():
    huge = 10**400
    (badge,) = reward_badges({"reward": huge}, None)
    assert (badge.tone, badge.kind) == ("scale-4", "scale")
    assert judge_sample({"status": "truncated", "response_length": huge}).cut == (
        "cut here (truncated)"
    )


def test_the_page_says_reward_status_and_rank_once(client, write_step):
    """The chips say the reward and the status; the info card leaves them out, and "Sample N
    of M" is the toolbar's alone (the jump bar at the foot says "N / M")."""
    write_step("train", 2, [sample(0, reward=0.25, status="completed", sample_index=9)])
    html = page(client, "/train/2/sample/0/").html
    info = html.split('id="rv-info"', 1)[1].split("</section>", 1)[0]
    assert 'data-field="sample_index"' in info
    assert 'data-field="reward"' not in info
    assert 'data-field="status"' not in info
    assert chips(html) == {"reward": ("scale-1", "0.25")}
    assert html.count("Sample 1 of 1") == 1


def test_without_chips_the_info_card_keeps_reward_and_status(client, write_step):
    write_step("train", 2, [sample(0, reward={"acc": 1}, status=None)])
    html = page(client, "/train/2/sample/0/").html
    info = html.split('id="rv-info"', 1)[1].split("</section>", 1)[0]
    assert 'data-field="reward.acc"' not in info  # its chip says it
    assert 'data-field="status"' in info  # null: no chip, so the card says it
