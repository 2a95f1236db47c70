"""The extracted answer of a response and its match with the label (plain Python, no Django)."""

from __future__ import annotations

import pytest

from rollouts.store.answers import answers_match, extract_answer


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("so the answer is \\boxed{42}.", "42"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),  # nested braces kept whole
        ("first \\boxed{1} then corrected: \\boxed{ 2 }", "2"),  # the last one, stripped
        ("<think>x</think><answer>\n Paris \n</answer>", "Paris"),
        ("<answer>7</answer> and finally \\boxed{8}", "8"),  # whichever comes later
        ("\\boxed{3} ... <ANSWER>4</ANSWER>", "4"),
        ("\\boxed{a \\{b\\} c}", "a \\{b\\} c"),  # escaped braces are content
        ("\\boxed{}", None),  # an empty box says nothing
        ("<answer>so \\boxed{5}</answer>", "5"),  # an answer block's own box
        ("<answer>" + "x" * 900 + "</answer>", None),  # reasoning that never closed
        ("\\fbox{9}", "9"),
        ("\\boxed{unclosed", None),
        ("no final answer here", None),
        ("", None),
    ],
)
def test_extract_answer_takes_the_last_boxed_or_answer_tag(text: str, answer: str | None):
    assert extract_answer(text) == answer


def test_extract_answer_of_a_non_string_is_none():
    assert extract_answer(None) is None
    assert extract_answer(["\\boxed{1}"]) is None


@pytest.mark.parametrize(
    ("answer", "label", "match"),
    [
        ("42", "42", True),
        ("42", 42, True),  # a numeric label
        ("0", 0, True),  # 0 is a label, not a missing one
        ("$ 42 $", "42", True),
        ("0.5", "\\frac{1}{2}", True),
        ("\\dfrac{1}{2}", "1/2", True),
        ("-\\frac{3}{4}", "-0.75", True),
        ("1,000", "1000", True),
        ("42.", "42", True),
        ("\\left( 1, 2 \\right)", "(1,2)", True),
        ("\\text{Paris}", "paris", True),
        ("42", "\\boxed{42}", True),  # a label written boxed
        ("41", "42", False),
        ("x+1", "x+2", False),
        ("", "", True),
        ("", "7", False),
        (None, "42", None),  # no answer: nothing to judge
        ("42", None, None),
        ("42", ["42"], None),  # a list label cannot be compared to one answer
        ("1", True, None),
        ("1", float("nan"), None),
        ("1/0", "1/0", True),  # equal text, even when it is not a number
        ("1/0", "2/0", False),
    ],
)
def test_answers_match_forgives_notation_but_not_values(answer, label, match):
    assert answers_match(answer, label) is match
