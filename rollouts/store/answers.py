"""A response's final answer, and whether it agrees with the sample's label.

The answer is what the model committed to: the content of its last `\\boxed{...}` (braces
balanced, so `\\boxed{\\frac{1}{2}}` is whole) or of its last `<answer>...</answer>`, whichever
comes later. Matching is a reader's judgement, not the reward function's: it forgives spacing,
`$...$`, `\\left`/`\\right`, thousands separators and equal numbers written differently
(`0.5`, `1/2`, `\\frac{1}{2}`), and says None when there is nothing to compare.
Plain Python, no Django: the pages, the JSON and the terminal share it.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_FRACTION = re.compile(r"([-+]?)\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}")
_NOISE = re.compile(r"\\left|\\right|\\!|\\,|\\;|\\:|\\ |\\displaystyle|\s+")
_CLOSE = 1e-9  # relative tolerance for numbers that are equal but printed differently


ANSWER_MAX_CHARS = 200  # an <answer> longer than this is reasoning that never closed


def find_answer(text: object) -> tuple[str, str] | None:
    """(the answer, where it came from: "boxed" or "answer"): the last `\\boxed{}` or
    `<answer></answer>` of a response, whichever comes later (an answer block's own
    `\\boxed{}` when it has one), stripped; None when there is none, or it is empty."""
    found = locate_answer(text)
    return None if found is None else (found[0], found[1])


def locate_answer(text: object) -> tuple[str, str, int, int] | None:
    """`find_answer`'s answer and source, with where its marker starts and ends in `text`
    (`\\boxed{...}` or `<answer>...</answer>` whole): a preview shows the text around it."""
    if not isinstance(text, str):
        return None
    found: list[tuple[int, str, str, int]] = []
    for match in _BOXED.finditer(text):
        inner = _balanced(text, match.end())
        if inner is not None:
            found.append((match.start(), inner, "boxed", match.end() + len(inner) + 1))
    tags = list(_ANSWER_TAG.finditer(text))
    if tags and len(tags[-1].group(1)) <= ANSWER_MAX_CHARS * 4:
        content = tags[-1].group(1)
        boxed = extract_answer(content) if _BOXED.search(content) else None
        found.append(
            (tags[-1].start(), boxed if boxed is not None else content, "answer", tags[-1].end())
        )
    if not found:
        return None
    start, answer, source, end = max(found)
    answer = answer.strip()
    if not answer or (source == "answer" and len(answer) > ANSWER_MAX_CHARS):
        return None
    return answer, source, start, end


def extract_answer(text: object) -> str | None:
    """The answer `find_answer` finds, without where it came from."""
    found = find_answer(text)
    return found[0] if found else None


def _balanced(text: str, start: int) -> str | None:
    """The text from `start` up to the brace that closes the one before it; None if unclosed."""
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2  # an escaped character (`\\{`, `\\}`) is content, never a brace
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
        i += 1
    return None


def answers_match(answer: str | None, label: object) -> bool | None:
    """Whether an extracted answer says what the label says; None when either is missing or the
    label is not a scalar (a list or object label cannot be compared to one answer)."""
    if answer is None or label is None or isinstance(label, bool):
        return None
    if isinstance(label, int | float):
        if isinstance(label, float) and not math.isfinite(label):
            return None
        label = repr(label) if isinstance(label, float) else str(label)
    if not isinstance(label, str):
        return None
    inner = extract_answer(label)  # a label written as "\boxed{7}"
    wanted, given = _normal(inner if inner is not None else label), _normal(answer)
    if wanted == given:
        return True
    a, b = _number(given), _number(wanted)
    if a is None or b is None:
        return False
    return math.isclose(a, b, rel_tol=_CLOSE, abs_tol=_CLOSE)


def _normal(text: str) -> str:
    text = text.strip().rstrip(".").strip().strip("$").strip()  # "$5$." is 5
    text = _TEXT.sub(r"\1", text)
    text = _NOISE.sub("", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return text.rstrip(".").lower()


def _number(text: str) -> float | None:
    """The value of a number, a fraction `a/b` or `\\frac{a}{b}` (also negative), or None."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,000 -> 1000
    fraction = _FRACTION.fullmatch(text)
    if fraction:
        sign, top, bottom = fraction.groups()
        value = _ratio(top, bottom)
        return None if value is None else (-value if sign == "-" else value)
    if "/" in text:
        top, _, bottom = text.partition("/")
        return _ratio(top, bottom)
    return float(text) if _NUMBER.fullmatch(text) else None


def _ratio(top: str, bottom: str) -> float | None:
    if not (_NUMBER.fullmatch(top) and _NUMBER.fullmatch(bottom)):
        return None
    try:
        return float(Fraction(top) / Fraction(bottom))
    except (ValueError, ZeroDivisionError):
        return None
