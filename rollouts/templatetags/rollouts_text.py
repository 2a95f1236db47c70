"""A sample's formatted text and its info rows as markup built in one pass.

Each span of a response went through three nested includes (`_rendered`, `_block`, `_spans`)
and each info row through one, with a dozen variable lookups and escapes apiece: 3 ms of a
demo sample page's 15 (`bench/bench_compare.py`), and more with more turns. Here they cost what
their bytes cost. The markup is the same as those templates wrote (`tests/unit/test_text_markup.py`
keeps them as the reference): every value is an int, a fixed word, or text escaped here.
"""

# The pad runs are written with the multiplication sign, as the page always wrote them.
# ruff: noqa: RUF001

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from rollouts.presentation import Block, InfoRow, Rendered, last_user_turn

register = template.Library()

NOT_CLOSED = ' <span class="rv-note">(not closed)</span>'


@register.simple_tag
def rendered_turns(rendered: Rendered, fold: bool = False) -> SafeString:
    """The turns of a text field: a role-less blank turn is left out unless it is the only one.
    ``fold``: the turns before the last user turn go behind one disclosure (a prompt on the
    sample page, which opens on its last question; sections.js remembers the reader's choice)."""
    out: list[str] = []
    only = len(rendered.turns) == 1
    folded = last_user_turn(rendered) if fold else 0
    if folded:
        earlier = [turn for turn in rendered.turns[:folded] if not turn.is_blank]
        counts = Counter(turn.role or "text" for turn in earlier)  # in order of first turn
        roles = ", ".join(f"{n} {escape(role)}" for role, n in counts.items())
        many = f"the {len(earlier)} earlier turns" if len(earlier) > 1 else "the earlier turn"
        out.append(
            f'<details class="rv-earlier" data-turns="{len(earlier)}"><summary>'
            f'<span class="rv-earlier-show">Show {many}</span>'
            f'<span class="rv-earlier-hide">Hide {many}</span>'
            f' <span class="rv-meta">({roles})</span></summary>'
        )
    for index, turn in enumerate(rendered.turns):
        if folded and index == folded:
            out.append("</details>")
        if turn.is_blank and not only:
            continue
        role = turn.role
        out.append(
            f'<div class="rv-turn" data-role="{escape(role)}">' if role else '<div class="rv-turn">'
        )
        if role:
            out.append(f'<div class="rv-turn-head"><span class="rv-role">{escape(role)}</span>')
            if turn.start_marker:
                out.append(f'<span class="rv-marker">{escape(turn.start_marker)}</span>')
            out.append("</div>")
        for block in turn.blocks:
            _block(block, out)
        if turn.end_marker:
            out.append(f'<span class="rv-marker rv-marker-end">{escape(turn.end_marker)}</span>')
        out.append("</div>")
    return mark_safe("".join(out))  # noqa: S308


def _block(block: Block, out: list[str]) -> None:
    kind = block.kind
    if kind == "text":
        out.append('<div class="rv-block" data-md>')
        _spans(block, out)
        out.append("</div>")
    elif kind == "think":
        out.append('<details class="rv-think" open><summary>think')
        if not block.opened:
            out.append(' <span class="rv-note">(began in the prompt)</span>')
        if not block.closed:
            out.append(NOT_CLOSED)
        out.append('</summary><div class="rv-block" data-md>')
        _spans(block, out)
        out.append("</div></details>")
    elif not block.text.strip():
        name = escape(kind)
        out.append('<span class="rv-special rv-empty-block">')
        out.append(f"&lt;{name}&gt;" if block.opened else "")
        out.append(f"&lt;/{name}&gt;" if block.closed else "")
        out.append("</span>")
    elif kind == "tool_call":
        out.append('<div class="rv-tool-call"><div class="rv-tag">tool call')
        out.append("" if block.closed else NOT_CLOSED)
        out.append("</div>")
        if block.pretty is not None:
            out.append(f'<pre class="rv-block rv-pretty">{escape(block.pretty)}</pre>')
        else:
            out.append('<div class="rv-block">')
            _spans(block, out)
            out.append("</div>")
        out.append("</div>")
    else:
        response = kind == "tool_response"
        css = "rv-tool-response" if response else f"rv-{escape(kind)}"
        tag = "tool response" if response else escape(kind)
        out.append(f'<div class="{css}"><div class="rv-tag">{tag}</div><div class="rv-block">')
        _spans(block, out)
        out.append("</div></div>")


def _spans(block: Block, out: list[str]) -> None:
    for span in block.display_spans:
        if span.kind == "text":
            out.append(escape(span.text))
        elif span.kind == "pad":
            text, count = escape(span.text), int(span.count)
            out.append(
                f'<span class="rv-pad" data-count="{count}" title="{count} × {text}">'
                f"{text} × {count}</span>"
            )
        else:
            out.append(f'<span class="rv-special">{escape(span.text)}</span>')


@register.simple_tag
def info_rows(rows: Iterable[InfoRow]) -> SafeString:
    """One `<div>` of a `<dt>` (the field, and the fields of the same value) and its `<dd>`."""
    out: list[str] = []
    for row in rows:
        name = escape(row.name)
        also = "".join(
            f'<span class="rv-also" title="the same value"> = {escape(a)}</span>' for a in row.also
        )
        display = escape(row.display)
        status = f' data-status="{display}"' if row.name == "status" else ""
        out.append(
            f'<div class="rv-info-row" data-field="{name}"><dt>{name}{also}</dt>'
            f'<dd class="rv-value rv-value-{escape(row.kind)}"{status}>{display}</dd></div>'
        )
    return mark_safe("".join(out))  # noqa: S308
