"""Inside a turn of sample text: tagged blocks (``<think>``, ``<tool_call>``, ...) and spans (plain
text, special tokens, runs of pad tokens). `render.py` splits text into turns and uses these.

Blocks do not nest: inside ``<think>``, a ``<tool_call>`` is text. Reasoning often quotes tags,
and a flat list is what both UIs lay out, so the first opening tag owns everything up to its own
closing tag.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from ..store import without_surrogates

BLOCK_KINDS = ("think", "tool_call", "tools", "tool_response", "answer")

_TAG_RE = re.compile(r"<(/?)(" + "|".join(BLOCK_KINDS) + r")>")
# Bounded and free of '<', '>', '|' and whitespace, so "a <| b |> c" in prose stays text.
_SPECIAL_RE = re.compile(r"<\|[^|\s<>]{1,64}\|>")


@dataclass(frozen=True, slots=True)
class Span:
    """Inline content: kind is "text", "special" or "pad" (``text`` repeated ``count`` times)."""

    kind: str
    text: str
    count: int = 1

    @property
    def original(self) -> str:
        """The exact source text this span stands for (a pad run expanded back)."""
        return self.text * self.count


@dataclass(frozen=True, slots=True)
class Block:
    """A tagged region of a turn, or plain text; the tags themselves are not in ``spans``."""

    kind: str
    spans: tuple[Span, ...]
    opened: bool = False
    closed: bool = False
    pretty: str | None = None

    @property
    def text(self) -> str:
        return "".join(span.original for span in self.spans)

    @property
    def display_spans(self) -> tuple[Span, ...]:
        """The spans to show: a tagged block without the line breaks that only set its content
        apart from its tags (``<think>\n...\n</think>``). ``spans`` keep them (raw views)."""
        spans = list(self.spans)
        if self.kind == "text" or not spans:
            return self.spans
        if spans[0].kind == "text":
            spans[0] = Span("text", spans[0].text.lstrip("\n"))
        if spans[-1].kind == "text":
            spans[-1] = Span("text", spans[-1].text.rstrip("\n"))
        return tuple(span for span in spans if span.kind != "text" or span.text)


@functools.lru_cache(maxsize=64)
def compile_mask(pattern: str | None) -> re.Pattern[str] | None:
    """The pad pattern, compiled once per distinct string; "" or None turns masking off.

    A bad pattern raises ``re.error`` so the caller can report it (a CLI flag, a setting).
    """
    if not pattern:
        return None
    return re.compile(pattern)


def split_blocks(text: str, mask: re.Pattern[str] | None) -> tuple[Block, ...]:
    """The blocks of one turn's text, in order; text between and around them is "text"."""
    blocks: list[Block] = []
    tags = list(_TAG_RE.finditer(text))
    pos = 0
    orphan = _orphan_close(tags)
    if orphan is not None:
        # The text started inside this block: a prompt ending in "<think>\n" leaves the
        # response holding the reasoning and only the closing tag.
        close = tags[orphan]
        blocks.append(_block(close.group(2), text[: close.start()], mask, False, True))
        pos = close.end()
        tags = tags[orphan + 1 :]
    open_kind: str | None = None
    for tag in tags:
        closing, kind = tag.group(1) == "/", tag.group(2)
        if open_kind is None:
            if closing:
                continue  # stray closing tag: stays text
            _add_text_block(blocks, text[pos : tag.start()], mask)
            open_kind, pos = kind, tag.end()
        elif closing and kind == open_kind:
            blocks.append(_block(kind, text[pos : tag.start()], mask, True, True))
            open_kind, pos = None, tag.end()
    if open_kind is not None:  # unclosed: runs to the end of the turn (e.g. cut-off generation)
        blocks.append(_block(open_kind, text[pos:], mask, True, False))
    else:
        _add_text_block(blocks, text[pos:], mask)
    return tuple(blocks)


def _orphan_close(tags: list[re.Match[str]]) -> int | None:
    """Index of the first closing tag whose kind was not opened before it, if any."""
    opened: set[str] = set()
    for index, tag in enumerate(tags):
        if tag.group(1) != "/":
            opened.add(tag.group(2))
        elif tag.group(2) not in opened:
            return index
    return None


def _block(kind: str, body: str, mask: re.Pattern[str] | None, opened: bool, closed: bool) -> Block:
    pretty = _pretty_json(body) if kind == "tool_call" else None
    return Block(kind, _spans(body, mask), opened, closed, pretty)


def _add_text_block(blocks: list[Block], body: str, mask: re.Pattern[str] | None) -> None:
    if body:
        blocks.append(Block("text", _spans(body, mask)))


def _pretty_json(body: str) -> str | None:
    try:
        pretty = json.dumps(json.loads(body.strip()), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):  # not JSON, an over-long int, absurd nesting
        return None
    return without_surrogates(pretty)  # a "\udcc3" escape in the call's JSON: not UTF-8


def _spans(text: str, mask: re.Pattern[str] | None) -> tuple[Span, ...]:
    """Pads first (a pad token is not a special token), then specials in the gaps."""
    spans: list[Span] = []
    pos = 0
    if mask is not None:
        run_token, run_count = "", 0
        for match in mask.finditer(text):
            start, end = match.span()
            if start == end:
                continue  # a pattern like "x*" matches nothing everywhere; that is not a pad
            token = match.group()
            if start == pos and token == run_token:
                run_count += 1
            else:
                if run_count:
                    spans.append(Span("pad", run_token, run_count))
                _add_plain(spans, text[pos:start])
                run_token, run_count = token, 1
            pos = end
        if run_count:
            spans.append(Span("pad", run_token, run_count))
    _add_plain(spans, text[pos:])
    return tuple(spans)


def _add_plain(spans: list[Span], text: str) -> None:
    pos = 0
    for match in _SPECIAL_RE.finditer(text):
        if match.start() > pos:
            spans.append(Span("text", text[pos : match.start()]))
        spans.append(Span("special", match.group()))
        pos = match.end()
    if pos < len(text):
        spans.append(Span("text", text[pos:]))


def merge_block(blocks: list[Block], block: Block) -> None:
    """Append, joining plain text with a preceding plain-text block so parts read as one."""
    if not (blocks and block.kind == "text" and blocks[-1].kind == "text"):
        blocks.append(block)
        return
    head, tail = blocks[-1].spans, block.spans
    if head and tail and head[-1].kind == "text" and tail[0].kind == "text":
        head = (*head[:-1], Span("text", head[-1].text + tail[0].text))
        tail = tail[1:]
    blocks[-1] = Block("text", head + tail)
