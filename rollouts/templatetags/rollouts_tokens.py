"""The tokens card's two long parts as markup built in one pass: the strip's bars and the
tokens as coloured text.

A response of 4,096 tokens makes 480 bars and up to 4,096 text spans; through the template
language each cost ~20 tag and filter lookups (and every int a trip through Django's number
localisation), 80 ms of a 100 ms page. Here they cost what their bytes cost (about 1 ms). The
markup is the same as the template wrote: every value is a number, a fixed word, or text that
is escaped here.
"""

# An en dash stands for "no value", and joins a range of tokens, as in printed tables.
# ruff: noqa: RUF001

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from rollouts.presentation import StripCell, Token, format_number

register = template.Library()


@register.simple_tag
def strip_bars(cells: list[StripCell]) -> SafeString:
    """One `<rect>` a cell, with its `<title>` (the tokens it covers and their lowest log-prob)."""
    parts = []
    for c in cells:
        index, start, end, logprob, kind = c
        span = f"tokens {start}–{end - 1}" if end > start + 1 else f"token {start}"
        if kind == "masked":
            what = "masked"
        elif kind == "missing":
            what = "no log-prob"
        else:
            what = f"log-prob {_num(logprob)}"
        height = c.height
        key = (height, type(height))  # 40 and 40.0 are equal keys, but written otherwise
        y_text, height_text = _COORDINATES.get(key) or _coordinates(key, c.y)
        parts.append(
            f'<rect class="rv-strip-{kind}" x="{index}" y="{y_text}" width="1"'
            f' height="{height_text}" data-start="{start}"><title>{span}: {what}</title></rect>'
        )
    # Numbers and fixed words only: nothing here comes from the file as text.
    return mark_safe("".join(parts))  # noqa: S308


@register.simple_tag
def token_spans(tokens: list[Token], anchored: set[int] | None = None) -> SafeString:
    """Each token as a `<span>` coloured by its bucket, titled with its position and log-prob;
    those at an `anchored` position carry the id the least likely tokens' rows link to."""
    parts = []
    anchored = anchored or set()
    for tok in tokens:
        if tok.masked:
            what = "masked" if tok.logprob is None else f"masked ({_num(tok.logprob)})"
        else:
            what = "no log-prob" if tok.logprob is None else _num(tok.logprob)
        text = "&#xFFFD;" if tok.text is None else escape(tok.text)
        anchor = f' id="rv-tok-{tok.position}"' if tok.position in anchored else ""
        parts.append(
            f'<span class="rv-tok rv-tok-{tok.kind}"{anchor} title="{tok.position}: {what}">'
            f"{text}</span>"
        )
    # The only text, the token's own, is escaped above.
    return mark_safe("".join(parts))  # noqa: S308


def _num(value: float | None) -> str:
    return "–" if value is None else format_number(value)


# A bar's y and height as text, by its height: at most 3,801 heights (2 decimals, 0-40).
_COORDINATES: dict[tuple[float, type], tuple[str, str]] = {}


def _coordinates(key: tuple[float, type], y: float) -> tuple[str, str]:
    """y and height as the template wrote them (Django's float display: `2.0`, `38.5`)."""
    return _COORDINATES.setdefault(key, (str(y), str(key[0])))
