"""The tokens card's bars and coloured text, built in one pass (`rollouts_tokens`), write exactly
what the template loops they replace wrote: those loops are kept here as the reference."""

from __future__ import annotations

import math

from django.template import Context, Template

from rollouts.presentation.tokens import STRIP_CELLS, token_view
from rollouts.templatetags.rollouts_tokens import strip_bars, token_spans

# The template loops of _tokens.html before they became tags (revision a9951b7).
STRIP_LOOP = Template(
    "{% load rollouts_format %}"
    '{% for c in cells %}<rect class="rv-strip-{{ c.kind }}" x="{{ c.index }}" y="{{ c.y }}" '
    'width="1" height="{{ c.height }}" data-start="{{ c.start }}"><title>'
    "{% if c.end > c.start|add:1 %}tokens {{ c.start }}–{{ c.end|add:-1 }}{% else %}"  # noqa: RUF001
    "token {{ c.start }}{% endif %}: "
    '{% if c.kind == "masked" %}masked{% elif c.kind == "missing" %}no log-prob'
    "{% else %}log-prob {{ c.logprob|num }}{% endif %}</title></rect>{% endfor %}"
)
TEXT_LOOP = Template(
    "{% load rollouts_format %}"
    '{% for tok in tokens %}<span class="rv-tok rv-tok-{{ tok.kind }}" '
    'title="{{ tok.position }}: {% if tok.masked %}masked{% if tok.logprob is not None %} '
    "({{ tok.logprob|num }}){% endif %}{% elif tok.logprob is None %}no log-prob{% else %}"
    '{{ tok.logprob|num }}{% endif %}">{% if tok.text is None %}&#xFFFD;{% else %}'
    "{{ tok.text }}{% endif %}</span>{% endfor %}"
)


class Pieces:
    """A tokenizer stand-in: text with markup in it, and one id it cannot show."""

    def pieces(self, ids):
        return [None if i == 7 else f"<t{i}>&\"'" for i in ids]


def values(n: int, **extra):
    lps = [-(i % 13) * 0.37 for i in range(n)]
    return {"response_token_ids": list(range(n)), "response_rollout_log_probs": lps, **extra}


def test_a_plain_sample_every_bar_and_token_as_the_template_wrote_them():
    view = token_view(values(40), Pieces())
    assert view is not None and view.text is not None and view.tokens_per_cell == 1
    bars = strip_bars(view.strip)
    assert bars == STRIP_LOOP.render(Context({"cells": view.strip}))
    assert bars.count("<rect ") == 40 and "<title>token 3: log-prob -1.11</title>" in bars
    text = token_spans(view.text)
    assert text == TEXT_LOOP.render(Context({"tokens": view.text}))
    assert "&lt;t1&gt;&amp;&quot;&#x27;" in text and "<t1>" not in text  # escaped, never markup
    assert '">&#xFFFD;</span>' in text  # the id the tokenizer cannot show


def test_shared_cells_masked_missing_and_odd_values_match_too():
    n = STRIP_CELLS * 3 + 7  # three tokens a bar, the last bar shorter
    v = values(n, response_rollout_log_probs_mask=[i % 5 != 0 for i in range(n)])
    lps = v["response_rollout_log_probs"]
    lps[16:20] = [math.nan, math.inf, "x", None]  # bar 4: no token with a log-prob
    lps[40], lps[41], lps[42] = 1e-300, -1e308, 800.0
    v["response_rollout_log_probs_mask"][32:36] = [False] * 4  # bar 8: every token masked
    view = token_view(v, Pieces())
    assert view is not None and view.tokens_per_cell == 4 and view.text is not None
    bars = strip_bars(view.strip)
    assert bars == STRIP_LOOP.render(Context({"cells": view.strip}))
    assert {"rv-strip-masked", "rv-strip-missing"} <= set(
        part.split('"')[0] for part in bars.split('class="')[1:]
    )
    assert "tokens 0–3" in bars  # noqa: RUF001
    text = token_spans(view.text)
    assert text == TEXT_LOOP.render(Context({"tokens": view.text}))
    assert "masked (" in text and ": no log-prob" in text
