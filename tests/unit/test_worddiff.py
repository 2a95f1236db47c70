"""Two answers compared word by word (plain Python, no Django)."""

from __future__ import annotations

from rollouts.presentation.worddiff import word_diff


def joined(runs: list[dict]) -> str:
    return "".join(run["text"] for run in runs)


def test_word_diff_marks_only_the_words_that_differ_and_keeps_the_text_exact():
    a, b = "  so the answer is \\boxed{42}.\n", "  so the  answer is \\boxed{41}.\n"
    diff = word_diff(a, b)
    assert joined(diff["a"]) == a and joined(diff["b"]) == b
    assert [r["text"] for r in diff["a"] if r["changed"]] == ["\\boxed{42}.\n"]
    assert [r["text"] for r in diff["b"] if r["changed"]] == ["\\boxed{41}.\n"]
    assert (diff["changed_a"], diff["changed_b"], diff["cut"]) == (
        1,
        1,
        False,
    )  # spacing alone is no change


def test_word_diff_of_long_texts_compares_a_head_and_says_so():
    a, b = "x " * 10 + "tail a", "x " * 10 + "tail b"
    diff = word_diff(a, b, limit=5)
    assert diff["cut"] and joined(diff["a"]) == a
    assert not any(r["changed"] for r in diff["a"])  # the differing tail is past the limit
    assert word_diff("", "new words")["changed_b"] == 2
