"""The sample page opens a prompt on its last user turn (issue 29, item 4): the turns before it
(system prompt, few-shot examples, earlier turns) behind one disclosure, on the sample page
only; and the prompt page's step strip (item 9): one cell per step with the prompt's mean
reward there."""

from __future__ import annotations

import re
from statistics import mean

import pytest

from rollouts.presentation import last_user_turn
from rollouts.presentation.render import render_messages, render_text
from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.data import sample
from tests.support.pages import page

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


MULTI = (
    turn("system", "be brief")
    + turn("user", "first question")
    + turn("assistant", "first answer")
    + turn("user", "second question")
    + "<|im_start|>assistant\n"
)


# -- the presentation ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "roles_before"),
    [
        (MULTI, ["system", None, "user", None, "assistant", None]),  # blank text between turns
        (turn("user", "only one") + "<|im_start|>assistant\n", []),
        (turn("system", "s") + turn("user", "q"), ["system", None]),
        ("no chat template at all", []),
        (turn("system", "s") + turn("assistant", "a"), []),  # no user turn: nothing folds
    ],
)
def test_last_user_turn_folds_what_comes_before_it(text, roles_before):
    rendered = render_text(text, None)
    at = last_user_turn(rendered)
    assert [t.role for t in rendered.turns[:at]] == roles_before
    if roles_before:
        assert rendered.turns[at].role == "user"


def test_last_user_turn_of_a_message_list():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]
    assert last_user_turn(render_messages(messages, None)) == 3


def test_nothing_but_blank_text_before_the_user_turn_folds_nothing():
    assert last_user_turn(render_text("\n\n" + turn("user", "q"), None)) == 0


# -- the sample page -------------------------------------------------------------------------
def prompt_section(html: str) -> str:
    return html.split('data-field="prompt"', 1)[1].split("</section>", 1)[0]


def test_the_sample_page_folds_the_earlier_turns_behind_one_control(client, write_step):
    write_step("train", 1, [sample(0, prompt=MULTI), sample(1)])
    body = prompt_section(page(client, "/train/1/sample/0/").html)
    folded = re.search(
        r'<details class="rv-earlier" data-turns="(\d+)">(.*?)</details>', body, re.S
    )
    assert folded, body[:400]
    assert folded.group(1) == "3"  # system, user, assistant: the blank text between is not a turn
    inside = folded.group(2)
    assert "Show the 3 earlier turns" in inside
    assert "1 system, 1 user, 1 assistant" in inside
    assert "first question" in inside and "first answer" in inside
    after = body.split("</details>", 1)[1]
    assert "second question" in after  # the last user turn shows
    assert 'data-role="assistant"' in after  # and the generation prompt after it
    assert "<details" not in after.split('class="rv-raw"', 1)[0]


def test_a_prompt_of_one_user_turn_has_nothing_to_fold(client, write_step):
    write_step("train", 1, [sample(0), sample(1, response=MULTI)])
    html = page(client, "/train/1/sample/0/").html
    assert "rv-earlier" not in html
    # A response is never folded, whatever turns it holds.
    assert "rv-earlier" not in page(client, "/train/1/sample/1/").html


def test_the_prompt_page_and_group_page_show_the_whole_prompt(client, write_step):
    write_step("train", 1, [sample(0, prompt=MULTI, group_index=0)])
    pid = format_prompt_id(prompt_id_of_value(MULTI))
    assert "rv-earlier" not in page(client, f"/train/prompt/{pid}/").html
    assert "rv-earlier" not in page(client, "/train/1/group/0/").html


# -- the prompt page's step strip ------------------------------------------------------------
STEP_REWARDS = {0: [0.0, 0.0, 1.0], 3: [0.5], 7: [1.0, 1.0]}


def strip_cells(html: str) -> list[tuple[str, str, str, str]]:
    """(step, samples, tone, shown mean) of each cell, in order."""
    return re.findall(
        r'class="rv-strip-cell rv-tone-([\w-]+)" href="[^"]+" data-step="(\d+)" '
        r'data-samples="(\d+)"[^>]*><span class="rv-strip-step">step \d+</span> '
        r'<span class="rv-strip-reward">([^<]*)</span>',
        html,
    )


def test_the_prompt_page_lists_each_step_with_its_mean_reward(client, write_step):
    shared = turn("user", "the shared question")
    for step, rewards in STEP_REWARDS.items():
        records = [sample(i, prompt=shared, reward=r) for i, r in enumerate(rewards)]
        write_step("train", step, [*records, sample(len(records), prompt="another")])
    pid = format_prompt_id(prompt_id_of_value(shared))
    html = page(client, f"/train/prompt/{pid}/").html
    cells = strip_cells(html)
    assert [(int(step), int(n)) for _, step, n, _ in cells] == [
        (step, len(rewards)) for step, rewards in STEP_REWARDS.items()
    ]
    shown = [float(value) for *_, value in cells]
    assert shown == pytest.approx([mean(r) for r in STEP_REWARDS.values()], abs=1e-3)
    tones = [tone for tone, *_ in cells]
    assert tones[2] == "right" and tones[1].startswith("scale-")  # 1 and 0.5
    assert tones[0] != tones[2]
