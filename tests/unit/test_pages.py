"""The viewer's HTML pages and JSON twins through Django's test client, mounted under a prefix."""

from __future__ import annotations

import json
import math
import re

import pytest

from rollouts.presentation.sample import info_rows, value_node
from rollouts.store.numbers import format_bytes, format_number
from rollouts.views import samples
from tests.support.data import sample
from tests.support.pages import PREFIX, Page, page

HOSTILE = ('<script>window.__xss=1</script>', '<img src=x onerror="window.__xss=2">',
           '"><svg onload="window.__xss=3">')  # fmt: skip


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def position_text(p: Page) -> str:
    return p.text_of["rv-position"].strip()


def twin(client, path: str, status: int = 200) -> dict:
    response = client.get(PREFIX + "/api/view" + path)
    assert response.status_code == status
    return json.loads(response.content, parse_constant=lambda t: pytest.fail(f"bare {t}"))


# -- landing ---------------------------------------------------------------------------------
def test_root_redirects_to_the_latest_step_of_the_first_bucket_in_numeric_order(client, write_step):
    for step in (0, 1, 2, 10):
        write_step("train", step, [sample(0)])
    write_step("eval", 50, [sample(0)])
    response = client.get(PREFIX + "/")
    assert response.status_code == 302
    assert response["Location"] == f"{PREFIX}/train/10/"
    assert client.get(PREFIX + "/eval/")["Location"] == f"{PREFIX}/eval/50/"


def test_flat_data_dir_is_one_bucket_without_tabs(client, write_step):
    write_step("", 3, [sample(0)])
    assert client.get(PREFIX + "/")["Location"] == f"{PREFIX}/default/3/"
    p = page(client, "/default/3/")
    assert "rv-buckets" not in p.by_id


def test_no_step_files_is_a_message_not_a_blank_page(client, data_dir):
    (data_dir / "train").mkdir()
    (data_dir / "train" / "notes.jsonl").write_text("{}\n")
    p = page(client, "/")
    assert "No step files yet" in p.html
    assert 'class="rv-error"' in p.html


def test_step_selector_lists_steps_numerically_with_sizes(client, write_step):
    sizes = {step: write_step("train", step, [sample(0)]).stat().st_size for step in (10, 2, 9)}
    write_step("eval", 1, [sample(0)])
    p = page(client, "/train/9/")
    option = r'<option value="([^"]+)"[^>]*?( selected)?>Step (\d+) \(([^)]+)\)'
    options = re.findall(option, p.html)
    assert [(o[0], o[2]) for o in options] == [(f"{PREFIX}/train/{s}/", str(s)) for s in (2, 9, 10)]
    assert [o[1] for o in options] == ["", " selected", ""]
    assert options[0][3] == format_bytes(sizes[2])
    tabs = re.findall(
        r'<a class="rv-bucket" href="([^"]+)"( aria-current="page")?>(\w+)</a>', p.html
    )
    assert tabs == [(f"{PREFIX}/train/", ' aria-current="page"', "train"),
                    (f"{PREFIX}/eval/", "", "eval")]  # fmt: skip


# -- navigation ------------------------------------------------------------------------------
def test_step_page_shows_the_first_sample_with_neighbours(client, write_step):
    write_step("train", 4, [sample(i) for i in range(3)])
    p = page(client, "/train/4/")
    assert position_text(p) == "Sample 1 of 3"
    assert p.by_id["rv-sample"]["data-position"] == "0"
    assert p.by_id["rv-next"]["href"] == f"{PREFIX}/train/4/sample/1/"
    assert p.by_id["rv-prev"].get("aria-disabled") == "true"
    assert "href" not in p.by_id["rv-prev"]
    assert p.by_id["rv-sample"]["data-last-url"] == f"{PREFIX}/train/4/sample/2/"


def rewards_step(write_step):
    """Rewards by position: 0.5, NaN, 2.0, missing, -1.0, 2.0."""
    lines = [
        sample(0, reward=0.5),
        json.dumps(sample(1, reward=0.0)).replace('"reward": 0.0', '"reward": NaN') + "\n",
        sample(2, reward=2.0),
        {k: v for k, v in sample(3).items() if k != "reward"},
        sample(4, reward=-1.0, status="truncated"),
        sample(5, reward=2.0),
    ]
    write_step("train", 7, lines)


@pytest.mark.parametrize(
    ("order", "expected"),
    [("desc", [2, 5, 0, 4, 1, 3]), ("asc", [4, 0, 2, 5, 1, 3])],
)
def test_sorted_neighbours_are_stable_with_missing_values_last(client, write_step, order, expected):
    rewards_step(write_step)
    query = f"?sort=reward&order={order}"
    visited = []
    p = page(client, f"/train/7/{query}")
    while True:
        visited.append(int(p.by_id["rv-sample"]["data-position"]))
        assert position_text(p) == f"Sample {len(visited)} of 6"
        nxt = p.by_id["rv-next"].get("href")
        if not nxt:
            break
        assert nxt.endswith(query.replace("&", "&") if order == "desc" else "?sort=reward")
        p = page(client, nxt.removeprefix(PREFIX))
    assert visited == expected


def test_deep_link_reproduces_rank_within_the_ordering(client, write_step):
    rewards_step(write_step)
    p = page(client, "/train/7/sample/0/?sort=reward&order=desc")
    assert position_text(p) == "Sample 3 of 6"  # after the two 2.0 rewards
    assert p.by_id["rv-prev"]["href"] == f"{PREFIX}/train/7/sample/5/?sort=reward&order=desc"
    assert 'data-field="sample_index"><dt>sample_index</dt><dd class="rv-value' in p.html


def test_filter_keeps_the_sample_when_it_is_still_in_the_result(client, write_step):
    rewards_step(write_step)
    p = page(client, "/train/7/sample/4/?status=truncated")
    assert position_text(p) == "Sample 1 of 1"
    response = client.get(PREFIX + "/train/7/sample/2/?status=truncated")
    assert response.status_code == 302
    assert response["Location"] == f"{PREFIX}/train/7/?status=truncated"


def test_jump_by_number_goes_to_that_rank_and_clamps(client, write_step):
    rewards_step(write_step)
    response = client.get(PREFIX + "/train/7/?sort=reward&order=desc&i=4")
    assert response["Location"] == f"{PREFIX}/train/7/sample/4/?sort=reward&order=desc"
    assert client.get(PREFIX + "/train/7/?i=99")["Location"] == f"{PREFIX}/train/7/sample/5/"
    assert page(client, "/train/7/?i=x", 400).by_id  # an error page, in the layout


def test_controls_offer_numeric_columns_and_present_statuses(client, write_step):
    rewards_step(write_step)
    p = page(client, "/train/7/")
    sorts = re.findall(
        r'<option value="(\w+)"', p.html.split('id="rv-sort"')[1].split("</select>")[0]
    )
    assert {"reward", "response_length", "sample_index", "total_length"} <= set(sorts)
    assert "status" not in sorts and "prompt" not in sorts
    statuses = p.html.split('id="rv-status"')[1].split("</select>")[0]
    assert re.findall(r'<option value="(\w*)"', statuses) == ["", "completed", "truncated"]
    assert "rv-dataset" not in p.by_id, "a train step has no dataset filter"


def test_eval_dataset_filter(client, write_step):
    write_step("eval", 0, [sample(0, dataset="gsm8k"), sample(0, dataset="数学"), sample(1)])
    p = page(client, "/eval/0/?dataset=数学")
    assert position_text(p) == "Sample 1 of 1"
    assert p.by_id["rv-sample"]["data-position"] == "1"
    assert re.search(r'<option value="数学" selected>', p.html)


def test_unknown_sort_column_is_a_clear_400(client, write_step):
    write_step("train", 0, [sample(0)])
    p = page(client, "/train/0/?sort=nope", 400)
    assert "unknown column &#x27;nope&#x27;" in p.html


# -- fragments -------------------------------------------------------------------------------
def test_fragment_request_gets_only_the_swappable_main(client, write_step):
    write_step("train", 0, [sample(i) for i in range(3)])
    response = client.get(PREFIX + "/train/0/sample/1/", headers={"RV-Fragment": "1"})
    html = response.content.decode()
    assert html.startswith('<main id="rv-main"')
    assert "<header" not in html.split("<article")[0]
    assert f'data-page-url="{PREFIX}/train/0/sample/1/"' in html
    assert "RV-Fragment" in response["Vary"]


def test_the_page_decorator_adds_to_vary_instead_of_replacing_it(rf):
    from django.http import HttpResponse

    from rollouts.views.decorators import page as page_view

    @page_view
    def translated(request):
        response = HttpResponse("hi")
        response["Vary"] = "Accept-Language"  # what a view or an inner decorator may have set
        return response

    response = translated(rf.get("/"))
    assert response["Vary"] == "Accept-Language, RV-Fragment"
    assert "Content-Security-Policy" in response


# -- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/train/99/", 404, "no step &#x27;99.jsonl&#x27;"),
        ("/valid/0/", 404, "no bucket &#x27;valid&#x27;"),
        ("/train/0/sample/9/", 404, "no sample at position 9"),
        ("/train/abc/", 404, "no page &#x27;abc/&#x27; in bucket &#x27;train&#x27;"),
        ("/train/0/sample/x/", 404, "no page &#x27;0/sample/x/&#x27;"),
        ("/train/0/group/-1/", 404, "no page &#x27;0/group/-1/&#x27;"),
        ("/train/0/stats/x/", 404, "no page &#x27;0/stats/x/&#x27;"),
    ],
)
def test_unknown_things_are_404_pages_with_a_message(client, write_step, path, status, message):
    write_step("train", 0, [sample(0)])
    p = page(client, path, status)
    assert message in p.html
    assert 'class="rv-error" role="alert"' in p.html
    assert "rv-step" in p.by_id, "the step selector still offers a way out"


def test_empty_step_says_so(client, write_step):
    write_step("train", 0, [])
    p = page(client, "/train/0/")
    assert p.text_of["rv-empty"].strip() == "Step 0 has no samples yet."
    assert p.by_id["rv-empty"]["role"] == "status"  # news on a live run, not an error
    assert "rv-error" not in p.html


def test_unreadable_line_is_a_422_naming_its_line(client, write_step):
    write_step("train", 0, [sample(0), "{not json\n", sample(2)])
    p = page(client, "/train/0/")
    assert "1 unreadable line left out: line 2" in p.html
    assert position_text(p) == "Sample 1 of 2"
    bad = page(client, "/train/0/sample/1/", 422)
    assert "Line 2 of step 0 could not be read" in bad.html


def test_half_written_last_line_is_pending_not_an_error(client, write_step):
    write_step("train", 0, [sample(0), '{"sample_index": 1, "prom'])
    p = page(client, "/train/0/")
    assert position_text(p) == "Sample 1 of 1"
    assert "still being written" in p.html
    assert "rv-error" not in p.html


# -- rendering -------------------------------------------------------------------------------
def test_sample_info_formats_numbers_and_object_rewards(client, write_step):
    write_step("train", 0, [sample(0, reward={"acc": 1, "format": 0.000012}, total_length=42)])
    p = page(client, "/train/0/")
    rows = dict(re.findall(r'data-field="([\w.]+)"><dt>[\w.]+</dt><dd[^>]*>([^<]*)</dd>', p.html))
    assert rows["total_length"] == "42"
    # Each reward component is a chip in the header, said there once and not in the card.
    chips = dict(
        re.findall(
            r'rv-reward-chip[^"]*" data-field="([\w.]+)"[^>]*>'
            r'<span class="rv-chip-name">[\w.]+</span> ([^<]*)</span>',
            p.html,
        )
    )
    # 1.2 times 10 to the -5 in the short exponent form of the number rule.
    assert chips == {"reward.acc": "1", "reward.format": "1.2e-5"}
    assert not any(name.startswith("reward") for name in rows)


PADS = "<|image_pad|>" * 256
CALL = '{"name": "f", "arguments": {"x": 1}}'


def test_chat_prompt_renders_turns_think_tool_call_and_pad_badge(client, write_step):
    prompt = (
        "<|im_start|>system\nYou can call tools.<|im_end|>\n"
        f"<|im_start|>user\n<|vision_start|>{PADS}<|vision_end|>Hi<|im_end|>\n"
        f"<|im_start|>assistant\n<tool_call>{CALL}</tool_call><|im_end|>\n"
        "<|im_start|>assistant\n<think>\n"
    )
    write_step("train", 0, [sample(0, prompt=prompt, response="so 4\n</think>\n\n4")])
    p = page(client, "/train/0/")
    roles = re.findall(r'<div class="rv-turn" data-role="(\w+)">', p.html)
    assert roles == ["system", "user", "assistant", "assistant"]
    assert 'data-count="256"' in p.html
    formatted = p.html.split('data-field="prompt"')[1].split('class="rv-raw"')[0]
    assert formatted.count("&lt;|image_pad|&gt;") == 2  # the badge's title and its text
    assert "&quot;arguments&quot;: {\n    &quot;x&quot;: 1\n  }" in p.html
    response = p.html.split('data-field="response"')[1]
    assert '<details class="rv-think" open><summary>think <span class="rv-note">(began' in response


def test_mask_setting_decides_what_collapses(client, write_step, settings):
    write_step("train", 0, [sample(0, prompt="a" + "<|image_pad|>" * 3 + "<|video_pad|>" * 2)])
    settings.ROLLOUTS_MASK_STR = ""
    assert "rv-pad" not in page(client, "/train/0/").html
    settings.ROLLOUTS_MASK_STR = r"<\|video_pad\|>"
    html = page(client, "/train/0/").html
    assert re.findall(r'class="rv-pad" data-count="(\d+)"', html) == ["2"]


def test_empty_response_and_falsy_labels_are_shown(client, write_step):
    write_step("train", 0, [sample(0, response="", label=0), sample(1, label="")])
    first = page(client, "/train/0/").html
    response = first.split('data-field="response"')[1].split("</section>")[0]
    assert "(empty string)" in response
    label = first.split('data-field="label"')[1].split("</section>")[0]
    assert '<span class="rv-scalar">0</span>' in label
    second = page(client, "/train/0/sample/1/").html
    assert "(empty string)" in second.split('data-field="label"')[1].split("</section>")[0]


def test_arrays_are_whole_and_collapsed_with_a_count(client, write_step):
    ids = list(range(5000))
    write_step("train", 0, [sample(0, response_token_ids=ids, latency_trace={"a": {"b": [1]}})])
    html = page(client, "/train/0/").html
    section = html.split('data-field="response_token_ids"')[1].split("</section>")[0]
    assert '<details class="rv-array"><summary>5000 items</summary>' in section
    assert "[" + ", ".join(map(str, ids)) + "]" in section
    tree = html.split('data-field="latency_trace"')[1].split("</section>")[0]
    assert '<span class="rv-key">b</span> <details class="rv-array"><summary>1 item' in tree


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_text_in_any_field_is_escaped(client, write_step, hostile):
    record = sample(
        0,
        prompt=f"<|im_start|>user\n{hostile}<|im_end|>",
        response=hostile,
        label=hostile,
        extra_info={hostile: [hostile, {"k": hostile}]},
        dataset=hostile,
        status=hostile,
    )
    write_step("train", 0, [record])
    for path in ("/train/0/", "/train/0/?status=" + hostile):
        html = page(client, path).html
        assert hostile not in html
        assert "<script>window" not in html and "<svg" not in html and "<img" not in html
    html = page(client, "/train/0/").html
    escaped = hostile.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = escaped.replace('"', "&quot;")
    assert html.count(escaped) >= 5


def test_pages_carry_a_strict_content_security_policy(client, write_step):
    write_step("train", 0, [sample(0)])
    for path in ("/train/0/", "/train/99/"):
        csp = client.get(PREFIX + path)["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
        assert directives["script-src"] == "'self'"
        assert directives["default-src"] == "'self'"
        assert "unsafe-inline" not in csp and "*" not in csp


def test_every_url_on_a_page_is_inside_the_mount_point(client, write_step):
    write_step("train", 0, [sample(i) for i in range(3)])
    write_step("eval", 0, [sample(0)])
    p = page(client, "/train/0/sample/1/?sort=reward")
    assert p.urls
    for url in p.urls:
        in_page = url.startswith("#")  # the skip link: a fragment of this very page
        assert url.startswith((PREFIX + "/", "/static/")) or url == "data:," or in_page, url
    # The page's one entry module, which imports the rest; the theme needs no script first.
    assert [s.get("src") for s in p.scripts] == ["/static/rollouts/pages/sample.js"]
    assert p.scripts[0]["type"] == "module"
    # Its imports are preloaded: the readable.js of the sample page among them.
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', p.html)
    assert "/static/rollouts/readable.js" in preloads
    assert "/static/rollouts/lib/fragments.js" in preloads


# -- JSON twins ------------------------------------------------------------------------------
def test_json_twin_matches_the_page(client, write_step):
    rewards_step(write_step)
    p = page(client, "/train/7/sample/0/?sort=reward&order=desc")
    assert p.by_id["rv-json"]["href"] == (
        f"{PREFIX}/api/view/train/7/sample/0?sort=reward&order=desc"
    )
    data = twin(client, "/train/7/sample/0?sort=reward&order=desc")
    assert (data["rank"], data["total"], data["position"]) == (3, 6, 0)
    assert data["neighbours"] == {"first": 2, "prev": 5, "next": 4, "last": 3}
    assert data["urls"]["next"] == f"{PREFIX}/train/7/sample/4/?sort=reward&order=desc"
    assert data["sample"]["reward"] == 0.5
    assert data["sort"] == "reward" and data["order"] == "desc"
    nan = twin(client, "/train/7/sample/1")
    assert nan["sample"]["reward"] is None
    assert next(r for r in nan["info"] if r["name"] == "reward")["display"] == "NaN"
    assert nan["rendered"]["prompt"]["chat"] is True


def test_json_twin_of_a_sample_outside_the_filter_redirects_to_the_step_twin(client, write_step):
    rewards_step(write_step)
    response = client.get(PREFIX + "/api/view/train/7/sample/0?status=truncated")
    assert response.status_code == 302
    assert response["Location"] == f"{PREFIX}/api/view/train/7?status=truncated"
    data = twin(client, "/train/99", 404)
    assert data["ok"] is False


def test_big_step_shows_the_first_sample_before_its_columns(client, write_step, monkeypatch):
    monkeypatch.setattr(samples, "INLINE_COLUMNS_BYTES", 0)
    write_step("train", 0, [sample(i) for i in range(4)])
    p = page(client, "/train/0/sample/2/")
    assert position_text(p) == "Sample 3 of 4"
    # The shown sample's own numeric fields stand in for the column list meanwhile.
    assert 'value="response_length"' in p.html


def test_before_its_columns_an_object_reward_is_offered_by_component(
    client, write_step, monkeypatch
):
    monkeypatch.setattr(samples, "INLINE_COLUMNS_BYTES", 0)
    write_step("train", 0, [sample(0, reward={"acc": 1, "format": 0.5, "note": "x"})])
    sorts = page(client, "/train/0/").html.split('id="rv-sort"')[1].split("</select>")[0]
    assert 'value="reward.acc"' in sorts and 'value="reward.format"' in sorts
    assert 'value="reward"' not in sorts and 'value="reward.note"' not in sorts


# -- presenter -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (-12345678, "-12345678"),
        (0.5, "0.5"),
        (1.0, "1"),
        (0.0, "0"),
        (0.00012346, "1.235e-4"),
        (2.5e7, "25000000"),
        (2.5e7 + 0.5, "2.5e7"),
        (-0.25, "-0.25"),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_info_rows_keep_card_order_and_split_object_rewards():
    rows = info_rows({"status": "completed", "reward": {"a": 1, "b": None}, "rollout_id": 7})
    assert [(r.name, r.display, r.kind) for r in rows] == [
        ("rollout_id", "7", "number"),
        ("reward.a", "1", "number"),
        ("reward.b", "null", "null"),
        ("status", "completed", "string"),
    ]


def test_value_node_keeps_array_items_exact():
    node = value_node([-0.123456789, 1, True, None, "x"])
    assert node.count == 5
    assert node.display == '-0.123456789, 1, true, null, "x"'
    nested = value_node({"a": [{"b": 1}]})
    assert nested.children[0][1].children[0][1].children[0] == ("b", value_node(1))


def test_prompt_given_as_messages_renders_as_chat_turns(client, write_step):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Count <it>"}]},
    ]
    write_step("train", 0, [sample(0, prompt=messages)])
    html = page(client, "/train/0/").html
    prompt = html.split('data-field="prompt"')[1].split("</section>")[0]
    assert re.findall(r'<div class="rv-turn" data-role="(\w+)">', prompt) == ["system", "user"]
    assert "Count &lt;it&gt;" in prompt
    assert '<span class="rv-special">[image]</span>' in prompt


# -- methods ---------------------------------------------------------------------------------
PAGES = ["/", "/train/", "/train/0/", "/train/0/sample/0/", "/train/0/stats/",
         "/train/0/group/0/", "/train/trends/", "/runs/"]  # fmt: skip


@pytest.mark.parametrize("method", ["post", "put", "delete", "patch"])
@pytest.mark.parametrize("path", PAGES)
def test_pages_answer_writes_with_405_and_allow_not_the_csrf_403(write_step, path, method):
    """CSRF checks run before the view: left on, a POST got the 403 page instead of the 405."""
    from django.test import Client

    write_step("train", 0, [sample(0), sample(1)])
    client = Client(enforce_csrf_checks=True)
    response = getattr(client, method)(PREFIX + path)
    assert response.status_code == 405, response.content[:300]
    assert response["Allow"] == "GET, HEAD"
    assert client.get(PREFIX + path).status_code in (200, 302, 404)
