# ruff: noqa: RUF001  (Chinese text, its full-width punctuation on purpose)
"""The response measures (store/measures.py): the loop a response ends in, its repeated
sentences, a second writing system, and its answer bits, by the raw fast paths and by the text."""

from __future__ import annotations

import json
import random
import re

import msgspec
import pytest

from rollouts.store.answers import answers_match, locate_answer
from rollouts.store.measures import (
    AGREES,
    ANSWERED,
    DISAGREES,
    EMPTY,
    LOOP_FLOOR_CHARS,
    NOT_TEXT,
    measure_response,
    repeated_share,
    second_script,
    tail_loop,
    without_end_tokens,
)
from tests.support import flag_fixtures as fx


def raw_of(text: object) -> msgspec.Raw:
    """The response's value as a strict line holds it (the Relax writer: raw non-ASCII)."""
    return msgspec.Raw(json.dumps(text, ensure_ascii=False).encode())


# -- the loop a response ends in ------------------------------------------------------------
UNITS = [
    "Wait, ",
    "So the answer should be 12, but let me check the parity argument again. ",
    "Hmm.\n",
    "让我们再检查一遍。",
    fx.LOOP_PARAGRAPH,
]


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("n", [5, 12, 40])
@pytest.mark.parametrize("before", ["\n\n", " ", "x", ""])
@pytest.mark.parametrize("after", ["", "\n", " "])
def test_a_loop_is_its_unit_and_how_many_times_it_was_written(unit, n, before, after):
    prefix = fx.derivation(3, 5) + before
    text = prefix + unit * n + after
    if n * len(unit) < LOOP_FLOOR_CHARS:
        assert tail_loop(text) is None
    else:  # whatever ends the text: the whole cycles written, not one fewer
        assert tail_loop(text) == (len(unit), n)


@pytest.mark.parametrize(
    "text",
    [
        fx.healthy(1),
        fx.derivation(4, 60),
        "Wait, " * 2,  # below the floor of repeats
        "ab " * 10,  # 30 characters: below the floor of characters
        "",
        fx.CASES,
    ],
)
def test_no_loop_in_varied_or_short_text(text):
    assert tail_loop(text) is None


def test_the_shortest_cycle_is_the_one_reported():
    assert tail_loop("intro. " + "ab ab ab ab " * 20) == (3, 80)


@pytest.mark.parametrize("end", ["<|im_end|>", "</s>", "<|im_end|>\n<|endoftext|>", " <|eot_id|>"])
def test_the_chat_template_s_end_tokens_are_no_content(end):
    body = fx.derivation(2, 3) + " " + "Wait, " * 30
    assert without_end_tokens(body + end).rstrip() == body.rstrip()
    assert tail_loop(without_end_tokens(body + end)) == (6, 30)
    _, measures = measure_response(raw_of(body + end), "12")
    assert measures is not None and measures["loop"] == [6, 30]


# -- repeated sentences ---------------------------------------------------------------------
def test_repeated_sentences_are_counted_with_their_share():
    sentence = "Let me double-check the arithmetic once more."
    unique = fx.derivation(9, 4).split("\n\n")
    text = "\n".join([sentence, unique[0], sentence, *unique[1:], sentence, sentence])
    found = repeated_share(text)
    assert found is not None
    share, distinct, most = found
    assert (distinct, most) == (1, 4)
    assert share == pytest.approx(4 * len(sentence) / len(text), abs=0.02)


@pytest.mark.parametrize(
    "text",
    [
        fx._table(40, 1),  # rows of one structure, each its own values
        "Yes.\nNo.\nYes.\nNo.\nYes.\nNo.\nOK.\nOK.\nOK.\n" * 3,  # short pieces never count
        fx.CASES,
        fx.derivation(5, 80),
    ],
)
def test_legitimately_regular_text_is_not_repeats(text):
    found = repeated_share(text)
    assert found is None or found[0] < 0.5


# -- a second writing system ----------------------------------------------------------------
def cjk(text: str) -> int:
    return sum("\u4e00" <= char <= "\u9fff" for char in text)


def words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", text))


def test_english_that_switches_to_chinese_counts_the_chinese_characters():
    english = fx.derivation(11, 6) + "\n\n" + fx.ENGLISH_THEN_CHINESE
    found = second_script(english + fx.CHINESE_TAIL)
    assert found is not None
    share, main, second, units = found
    assert (main, second, units) == ("Latin", "CJK", cjk(fx.CHINESE_TAIL))
    prose = re.sub(r"\$[^$]*\$", " ", english)  # maths is no prose
    assert share == pytest.approx(units / (units + words(prose)), abs=1e-4)


def test_chinese_that_switches_to_english_counts_the_english_words():
    found = second_script(fx.CHINESE_REASONING + fx.ENGLISH_TAIL)
    assert found is not None
    share, main, second, units = found
    assert (main, second, units) == ("CJK", "Latin", words(fx.ENGLISH_TAIL))
    assert share == pytest.approx(units / (units + cjk(fx.CHINESE_REASONING)), abs=1e-4)


def test_english_that_switches_to_russian_counts_the_russian_words():
    russian = "Теперь я продолжу на русском языке, потому что так проще проверить ответ. "
    share, main, second, units = second_script(fx.ENGLISH_THEN_CHINESE + russian) or (0, "", "", 0)
    cyrillic = [w for w in russian.split() if len(w.strip(".,")) >= 2]  # "я" is one letter
    assert (main, second, units) == ("Latin", "Cyrillic", len(cyrillic))
    assert share == pytest.approx(units / (units + words(fx.ENGLISH_THEN_CHINESE)), abs=1e-4)


@pytest.mark.parametrize(
    "text",
    [
        "We compute it.\n\n" + fx.CODE_CHINESE + "\n\nThe code agrees with the count of 47.",
        "We compute it.\n\n" + fx.CODE_CHINESE[:-3],  # an unclosed code block runs to the end
        "The problem says “两个数的和是二十，积是九十六。” and we solve it in English prose.",
        'The problem says "两个数的和是二十，积是九十六。" and we solve it in English prose.',
        "We solve it.\n> 两个数的和是二十，积是九十六，求较大的数。\nThen we go on in English.",
        "<think>\n嗯，这道题不难。\n</think>\n\n所以 \\boxed{12} 是答案。<|im_end|>",
    ],
)
def test_code_quotes_and_markup_are_not_prose(text):
    found = second_script(text)
    assert found is None or found[3] < 3


def test_measures_skip_the_second_script_below_its_floor():
    text = fx.CHINESE_REASONING + "我们用 numpy 验证。"
    assert second_script(text) is None


# -- answer bits: the raw fast paths agree with the text --------------------------------------
def expected_bits(text: object, label: object) -> int:
    if text is None or (isinstance(text, str) and not text.strip()):
        return EMPTY
    if not isinstance(text, str):
        return NOT_TEXT
    found = locate_answer(text)
    if found is None:
        return 0
    match = answers_match(found[0], label)
    return ANSWERED | (0 if match is None else AGREES if match else DISAGREES)


def generated_responses() -> list[tuple[str, object]]:
    """Responses with answers in every place and form the fast paths read differently."""
    rng = random.Random(7)
    answers = ["12", "\\frac{1}{2}", "x^{2}+1", '"a"', "\\text{yes}", "3.5", "中文", "1,000", "{}"]
    ends = ["", ".", "$.", "$.<|im_end|>", "\n\n", "</s>", " "]
    labels = ["12", "0.5", 1000, None, "\\boxed{3.5}", "yes", 3.5]
    out = []
    for i in range(600):
        body = fx.derivation(i, rng.randint(0, 30))
        a, b = rng.choice(answers), rng.choice(answers)
        end = rng.choice(ends)
        text = [
            f"{body} \\boxed{{{a}}}{end}",
            f"\\boxed{{{a}}} {body}{end}",
            f"{body}<answer>{a}</answer>{end}",
            f"{body} \\boxed{{{a}}} then <answer>{b}</answer>",
            f"{body} \\fbox{{{a}}} and \\boxed{{{b}}}{end}",
            f"{body} <answer>{a}</answer> \\boxed {{{b}}}",
            f"{body} \\boxed{{{a}",  # unclosed
        ][i % 7]
        out.append((text, rng.choice(labels)))
    return out


FIXTURE_RESPONSES = [
    (s.record["response"], s.record.get("label")) for step in fx.all_steps() for s in step.samples
]


@pytest.mark.parametrize("source", ["fixtures", "generated"])
def test_raw_and_decoded_responses_measure_the_same(source):
    cases = FIXTURE_RESPONSES if source == "fixtures" else generated_responses()
    assert len(cases) > 50
    for text, label in cases:
        raw = measure_response(raw_of(text), label)
        assert raw == measure_response(text, label), text[-200:] if text else text
        assert raw[0] == expected_bits(text, label), text[-200:] if text else text


@pytest.mark.parametrize(
    ("value", "bits"),
    [(None, EMPTY), ("", EMPTY), (" \n\t", EMPTY), ([1, 2], NOT_TEXT), (7, NOT_TEXT)],
)
def test_missing_and_non_text_responses(value, bits):
    assert measure_response(value, "12") == (bits, None)
    assert measure_response(raw_of(value), "12") == (bits, None)


def test_a_healthy_response_keeps_no_measures():
    for seed in range(20):
        text = fx.healthy(seed, sentences=5 + seed * 10)
        assert measure_response(raw_of(text), "12") == (ANSWERED | AGREES, None)
