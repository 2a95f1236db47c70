"""A response in one line of a table: the text around its final answer, without the boilerplate.

Every response of a reasoning model opens the same way (`<think>` and a paragraph of "Okay, let
me..."), so its first characters tell rows apart by nothing. The preview shows instead where
the response commits: the text just before its final answer (`\\boxed{}` or `<answer>`, the
one the ✓/✗ is about) and the answer itself; without an answer, its last characters. Reasoning
is left out (`<think>...</think>`, and an unclosed `<think>` up to the answer), and so are chat
template tokens (`<|im_end|>`, `<|eot_id|>`, `<|start_header_id|>assistant<|end_header_id|>`,
...). When only reasoning is left (a response cut inside its `<think>`), it shows the
reasoning's end.

Cheap on purpose: the answer is found once (`answers.locate_answer`, which the ✓/✗ uses too)
and only a window of a few hundred characters around it is cleaned, whatever the response's
length. Plain Python, no Django.
"""

from __future__ import annotations

import json
import re
from typing import Any

PREVIEW_CHARS = 120  # of a response, whitespace runs collapsed to one space
AFTER_ANSWER = 24  # characters kept after the answer's marker (its closing sentence)
_MARGIN = 4  # a window of chars * _MARGIN raw characters is enough to fill `chars` when cleaned
_ELLIPSIS = "\u2026"
_WORD_CUT = 20  # a word cut by the window's start is dropped when it is shorter than this

OPEN_THINK, CLOSE_THINK = "<think>", "</think>"
# Chat template tokens: `<|im_start|>` with its role, a Llama header with its role, any other
# `<|...|>` token (`<|im_end|>`, `<|endoftext|>`, `<|eot_id|>`, `<|image_pad|>`), DeepSeek's
# end-of-sentence token between full-width bars (U+FF5C), and the bare sentence markers.
_TEMPLATE = re.compile(
    r"<\|im_start\|>(?:system|user|assistant|tool)?"
    r"|<\|start_header_id\|>[^<>]{0,40}<\|end_header_id\|>"
    r"|<\|[^<>|\s]{1,40}\|>"
    r"|<\uff5c[^<>\uff5c]{1,40}\uff5c>"
    r"|</s>|<s>|<eos>|<bos>|<pad>"
)
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_THINK_TAG = re.compile(r"</?think>")


def response_preview(
    text: Any, answer_at: tuple[int, int] | None = None, chars: int = PREVIEW_CHARS
) -> str | None:
    """The preview of a response (None: it has none; "" only for an empty one). `answer_at` is
    where its final answer's marker starts and ends (`locate_answer`), None without one."""
    if text is None:
        return None
    if not isinstance(text, str):
        return _head(json.dumps(text, ensure_ascii=False), chars)
    if answer_at is not None:
        shown = _around_answer(text, answer_at, chars)
    else:
        shown = _tail(text, _reply_start(text, len(text)), len(text), chars)
    if not shown:  # only reasoning: the reasoning's end
        close = text.rfind(CLOSE_THINK)
        shown = _tail(text, 0, close if close >= 0 else len(text), chars, think=True)
    return shown or _head(text, chars)  # only markup: as it is


def clean(text: str) -> str:
    """`text` without reasoning blocks and template tokens, whitespace runs as one space."""
    text = _TEMPLATE.sub(" ", text)
    if "<think>" in text or "</think>" in text:
        text = _THINK_TAG.sub(" ", _THINK_BLOCK.sub(" ", text))
    return " ".join(text.split())


def _reply_start(text: str, before: int) -> int:
    """Where the reply before `before` begins: after the last `</think>` before it; at
    `before` when an unclosed `<think>` runs up to it (all reasoning)."""
    close = text.rfind(CLOSE_THINK, 0, before)
    start = 0 if close < 0 else close + len(CLOSE_THINK)
    return before if text.find(OPEN_THINK, start, before) >= 0 else start


def _around_answer(text: str, answer_at: tuple[int, int], chars: int) -> str:
    begin, end = answer_at
    core = clean(text[begin:end])
    after = clean(text[end : end + AFTER_ANSWER * _MARGIN])
    if len(after) > AFTER_ANSWER:
        after = after[: AFTER_ANSWER - 1] + _ELLIPSIS
    elif after and end + AFTER_ANSWER * _MARGIN < len(text):
        after += _ELLIPSIS
    core += " " + after if after and text[end : end + 1].isspace() else after
    if len(core) >= chars:
        return core[: chars - 1] + _ELLIPSIS
    start = _reply_start(text, begin)
    window = max(start, begin - chars * _MARGIN)
    before = clean(text[window:begin])
    space = " " if text[begin - 1 : begin].isspace() else ""  # as the text had it
    room = chars - len(core) - len(space)
    if room <= 1 or not before:
        return _ELLIPSIS + core if start < begin and before else core
    if len(before) > room or window > start:
        before = _ELLIPSIS + _last(before, room - 1)
    return before + space + core


def _tail(text: str, start: int, stop: int, chars: int, *, think: bool = False) -> str:
    """The last `chars` characters of `text[start:stop]`, cleaned (with `think`, reasoning is
    shown: only its tags go)."""
    window = max(start, stop - chars * _MARGIN)
    part = text[window:stop]
    shown = (
        " ".join(_THINK_TAG.sub(" ", _TEMPLATE.sub(" ", part)).split()) if think else clean(part)
    )
    if len(shown) > chars or (window > start and shown):
        return _ELLIPSIS + _last(shown, chars - 1)
    return shown


def _last(text: str, chars: int) -> str:
    """The last `chars` characters of `text`, less a word cut at their start (when a space
    comes soon enough)."""
    part = text[-chars:]
    if len(text) > chars and text[-chars - 1] != " ":
        space = part.find(" ", 0, _WORD_CUT)
        if space >= 0:
            part = part[space:]
    return part.lstrip()


def _head(text: str, chars: int) -> str:
    head = " ".join(text[: chars * _MARGIN].split())
    return head if len(head) <= chars else head[: chars - 1] + _ELLIPSIS
