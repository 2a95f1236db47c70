"""A step table's rows as markup built in one pass.

A page of 200 rows of 8 cells, each with its attributes and conditions, is thousands of
variable lookups and `{% if %}`s through the template language: most of the table page's
rendering. Built here, every value is an int or text escaped here, and the markup is what the
template wrote before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_MATCH = {None: "unknown", True: "yes", False: "no"}
_SIDE = {"up": "above", "down": "below", "even": "at"}


@register.simple_tag
def table_rows(rows: Sequence[Mapping[str, Any]]) -> SafeString:
    """One `<tr>` a row of `table.table_context`: its link, answer, chosen cells, flags,
    preview."""
    parts = []
    for r in rows:
        position, url = int(r["position"]), escape(r["url"])
        at, current = (" rv-row-at", ' aria-current="true"') if r["is_at"] else ("", "")
        parts.append(
            f'<tr id="rv-row-{position}" class="rv-table-row{at}"'
            f' data-position="{position}" data-url="{url}"{current}>'
            f'<td><a class="rv-row-link" href="{url}">{position}</a>'
            f' <span class="rv-meta">line {int(r["line"])}</span></td>'
            f"{_answer(r)}"
        )
        parts.extend(_cell(r, cell) for cell in r["cells"])
        parts.append(_flags(r.get("flags") or ()))
        parts.append(f'<td data-field="response" class="rv-response-cell">{_preview(r)}</td></tr>')
    return mark_safe("\n".join(parts))  # noqa: S308


def _answer(r: Mapping[str, Any]) -> str:
    match = r["match"]
    cell = f'<td data-field="answer" data-match="{_MATCH[match]}">'
    if r["answer"] is None:
        return cell + '<span class="rv-meta">&ndash;</span></td>'
    if match is not None:
        tone, title, mark = (
            ("right", "matches the label", "&#x2713;")
            if match
            else ("wrong", "differs from the label", "&#x2717;")
        )
        cell += f'<span class="rv-answer-mark rv-tone-{tone}" title="{title}">{mark}</span> '
    return cell + f'<span class="rv-answer-text">{escape(r["answer"])}</span></td>'


def _cell(r: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    key, value, tone = escape(cell["key"]), cell["value"], cell["tone"]
    text = str(escape(cell["text"]))
    if tone:
        tone = escape(tone)
        attrs = (
            f' data-tone="{tone}" class="rv-advantage rv-advantage-{tone}"'
            f' title="{_SIDE.get(cell["tone"], "at")} its group&#x27;s mean reward"'
        )
    elif value is None and (cell["key"] != "reward" or not r["reward_parts"]):
        attrs = ' class="rv-value-null"'
    else:
        attrs = ""
    if cell["key"] == "status" and value is not None:
        text = f'<span class="rv-value" data-status="{escape(value)}">{text}</span>'
    return f'<td data-field="{key}"{attrs}>{text}</td>'


def _flags(flags: Sequence[Mapping[str, str]]) -> str:
    """The row's flags as chips: the name shown, the reason in the title and, for screen
    readers (a title is not read everywhere), in hidden text after the name."""
    if not flags:
        return '<td data-field="flags" data-flags=""></td>'
    names = escape(" ".join(f["name"] for f in flags))
    chips = "".join(
        f'<span class="rv-flag-chip" data-flag="{escape(f["name"])}"'
        f' title="{escape(f["reason"])}">{escape(f["name"])}'
        f'<span class="rv-visually-hidden">: {escape(f["reason"])}</span></span>'
        for f in flags
    )
    return f'<td data-field="flags" data-flags="{names}">{chips}</td>'


def _preview(r: Mapping[str, Any]) -> str:
    response = r["response"]
    if response is None:
        return '<span class="rv-meta">none</span>'
    if response == "":
        return '<span class="rv-meta">(empty string)</span>'
    return str(escape(response))
