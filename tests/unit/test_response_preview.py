"""A table row's response preview (`presentation/preview.py`): the text around the final answer,
without think blocks and chat template tokens, on responses written the way models write them."""

from __future__ import annotations

import pytest

from rollouts.presentation import response_preview
from rollouts.store.answers import locate_answer

REASONING = (
    "<think>\nOkay, let me think about this step by step. First, I need to understand what the "
    "problem is asking. We have 48 apples and give away 6. " + "Let me check again. " * 30 + "\n"
    "</think>\n\n"
)


def preview(text: object, chars: int = 120) -> str | None:
    found = locate_answer(text)
    return response_preview(text, None if found is None else found[2:], chars)


def test_a_qwen_reply_shows_the_sentence_before_its_boxed_answer():
    text = REASONING + "So 48 - 6 = 42 apples remain.\n\nThe answer is $\\boxed{42}$.<|im_end|>"
    assert preview(text) == "So 48 - 6 = 42 apples remain. The answer is $\\boxed{42}$."


def test_a_long_reply_keeps_the_answer_and_cuts_its_start_at_a_word():
    text = REASONING + "Counting again " * 40 + "gives the total \\boxed{\\frac{1}{2}}. Done."
    got = preview(text)
    assert got is not None and len(got) <= 120
    assert got.startswith("\u2026Counting")
    assert got.endswith("gives the total \\boxed{\\frac{1}{2}}. Done.")
    assert "think" not in got and "Okay, let me" not in got


def test_an_answer_tag_after_reasoning_whose_think_opened_in_the_prompt():
    # The prompt ended with `<think>\n`: the response holds only the closing tag.
    text = "Let me see, 7 times 6 ... yes.\n</think>\nFinal: <answer>42</answer><|endoftext|>"
    assert preview(text) == "Final: <answer>42</answer>"


def test_an_unclosed_think_is_left_out_up_to_the_answer():
    text = "<think>\nHmm, " + "still thinking " * 50 + "so it is \\boxed{7} I guess"
    assert preview(text) == "\\boxed{7} I guess"


def test_a_response_cut_inside_its_reasoning_shows_the_reasonings_end():
    text = "<think>\nOkay, let me think. " + "We try x = 3 and check. " * 40 + "Now x = 4 fits"
    got = preview(text)
    assert got is not None and got.startswith("\u2026") and got.endswith("Now x = 4 fits")
    assert "<think>" not in got and "Okay, let me think" not in got


def test_without_an_answer_the_last_characters_are_shown():
    text = "Sure! " + "Here is some detail. " * 20 + "Let me know if you need more.<|im_end|>"
    got = preview(text)
    assert got is not None and got.endswith("Let me know if you need more.")
    assert got.startswith("\u2026Here") and len(got) <= 120


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|im_start|>assistant\nHello there.<|im_end|>\n<|endoftext|>", "Hello there."),
        (
            "<|start_header_id|>assistant<|end_header_id|>\n\nHi, how can I help?<|eot_id|>",
            "Hi, how can I help?",
        ),
        ("Done.<\uff5cend\u2581of\u2581sentence\uff5c>", "Done."),
        ("Answer: 5</s>", "Answer: 5"),
        ("<think>all of it</think>", "all of it"),  # only reasoning: the reasoning
        ("", ""),
        ("<|im_end|>", "<|im_end|>"),  # only markup: shown as it is, never "(empty)"
        (None, None),
        ({"tool": "calc"}, '{"tool": "calc"}'),
    ],
)
def test_template_tokens_go_and_edge_cases_keep_a_preview(text, expected):
    assert preview(text) == expected


def test_an_answer_longer_than_the_preview_is_shown_from_its_start():
    text = "Thus \\boxed{" + "x+" * 100 + "1}."
    got = preview(text, chars=40)
    assert got == "\\boxed{" + "x+" * 16 + "\u2026"
