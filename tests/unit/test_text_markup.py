"""A sample's formatted text and info rows, built in one pass (`rollouts_text`), write exactly
what the four templates they replace wrote: those templates are kept here, verbatim (revision
c19c408), as the reference, and both render the same texts."""

# The pad runs are written with the multiplication sign.
# ruff: noqa: RUF001

from __future__ import annotations

import pytest
from django.template import Context, Engine

from rollouts.presentation.render import compile_mask, render_text
from rollouts.presentation.sample import InfoRow
from rollouts.templatetags.rollouts_text import info_rows, rendered_turns

RENDERED_HTML = (
    "{% for turn in rendered.turns %}{% if not turn.is_blank or rendered.turns|le"
    'ngth == 1 %}<div class="rv-turn"{% if turn.role %} data-role="{{ turn.role }'
    '}"{% endif %}>{% if turn.role %}<div class="rv-turn-head"><span class="rv-ro'
    'le">{{ turn.role }}</span>{% if turn.start_marker %}<span class="rv-marker">'
    "{{ turn.start_marker }}</span>{% endif %}</div>{% endif %}{% for block in tu"
    'rn.blocks %}{% include "rollouts/_block.html" %}{% endfor %}{% if turn.end_m'
    'arker %}<span class="rv-marker rv-marker-end">{{ turn.end_marker }}</span>{%'
    " endif %}</div>{% endif %}{% endfor %}"
)
BLOCK_HTML = (
    '{% if block.kind == "text" %}<div class="rv-block" data-md>{% include "rollo'
    'uts/_spans.html" %}</div>{% elif block.kind == "think" %}<details class="rv-'
    'think" open><summary>think{% if not block.opened %} <span class="rv-note">(b'
    'egan in the prompt)</span>{% endif %}{% if not block.closed %} <span class="'
    'rv-note">(not closed)</span>{% endif %}</summary><div class="rv-block" data-'
    'md>{% include "rollouts/_spans.html" %}</div></details>{% elif not block.tex'
    't.strip %}<span class="rv-special rv-empty-block">{% if block.opened %}&lt;{'
    "{ block.kind }}&gt;{% endif %}{% if block.closed %}&lt;/{{ block.kind }}&gt;"
    '{% endif %}</span>{% elif block.kind == "tool_call" %}<div class="rv-tool-ca'
    'll"><div class="rv-tag">tool call{% if not block.closed %} <span class="rv-n'
    'ote">(not closed)</span>{% endif %}</div>{% if block.pretty is not None %}<p'
    're class="rv-block rv-pretty">{{ block.pretty }}</pre>{% else %}<div class="'
    'rv-block">{% include "rollouts/_spans.html" %}</div>{% endif %}</div>{% else'
    " %}<div class=\"{% if block.kind == 'tool_response' %}rv-tool-response{% else"
    ' %}rv-{{ block.kind }}{% endif %}"><div class="rv-tag">{% if block.kind == "'
    'tool_response" %}tool response{% else %}{{ block.kind }}{% endif %}</div><di'
    'v class="rv-block">{% include "rollouts/_spans.html" %}</div></div>{% endif '
    "%}"
)
SPANS_HTML = (
    '{% for span in block.display_spans %}{% if span.kind == "text" %}{{ span.tex'
    't }}{% elif span.kind == "pad" %}<span class="rv-pad" data-count="{{ span.co'
    'unt }}" title="{{ span.count }} × {{ span.text }}">{{ span.text }} × {{ span'
    '.count }}</span>{% else %}<span class="rv-special">{{ span.text }}</span>{% '
    "endif %}{% endfor %}"
)
INFO_ROW_HTML = (
    '<div class="rv-info-row" data-field="{{ row.name }}"><dt>{{ row.name }}{% fo'
    'r name in row.also %}<span class="rv-also" title="the same value"> = {{ name'
    ' }}</span>{% endfor %}</dt><dd class="rv-value rv-value-{{ row.kind }}"{% if'
    ' row.name == "status" %} data-status="{{ row.display }}"{% endif %}>{{ row.d'
    "isplay }}</dd></div>"
)
REFERENCE = Engine(
    loaders=[
        (
            "django.template.loaders.locmem.Loader",
            {
                "rollouts/_rendered.html": RENDERED_HTML,
                "rollouts/_block.html": BLOCK_HTML,
                "rollouts/_spans.html": SPANS_HTML,
                "rollouts/_info_row.html": INFO_ROW_HTML,
            },
        )
    ]
)

PAD = "<|endoftext|>"
TEXTS = {
    "plain": "The answer is 42.\nSecond line & <b>not markup</b> \"quoted\" 'single'.",
    "empty": "",
    "only blank": "\n\n",
    "chat": (
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWhat is 2+2?"
        "<|im_end|>\n<|im_start|>assistant\n<think>\nadd them\n</think>\n4<|im_end|>"
    ),
    "think began in the prompt": "reasoning <x>\n</think>\nThe result: \\boxed{4}",
    "think not closed": "<think>\nstill thinking when cut",
    "tool call as JSON": '<tool_call>\n{"name": "calc", "arguments": {"x": "<1>"}}\n</tool_call>',
    "tool call not JSON": "<tool_call>calc(<1>) & more",
    "tool response and answer": (
        "<tool_response>\n3 < 4\n</tool_response><answer>4</answer><tools>[]</tools>"
    ),
    "empty blocks": "<think></think><answer>\n</answer><tool_call> </tool_call>",
    "specials and pads": f"text <|special_1|> more{PAD * 5} tail{PAD}<|im_sep|>",
    "generation prompt only": "<|im_start|>assistant\n",
    "role with markup": "<|im_start|>us&er\nhi<|im_end|>",
    "stray closing tag": "a </answer> b <think>c</think>",
}


@pytest.mark.parametrize("name", list(TEXTS))
@pytest.mark.parametrize("mask", [None, r"<\|endoftext\|>"], ids=["no mask", "pad mask"])
def test_the_formatted_text_is_what_the_templates_wrote(name, mask):
    rendered = render_text(TEXTS[name], compile_mask(mask))
    expected = REFERENCE.get_template("rollouts/_rendered.html").render(
        Context({"rendered": rendered})
    )
    assert rendered_turns(rendered) == expected


def test_the_reference_covers_every_kind_of_block_and_span():
    """The texts above reach every branch of the templates (else the comparison proves less)."""
    seen = set()
    for text in TEXTS.values():
        for mask in (None, compile_mask(r"<\|endoftext\|>")):
            markup = rendered_turns(render_text(text, mask))
            for piece in (
                'class="rv-pad"', 'class="rv-special"', "(began in the prompt)", "(not closed)",
                "rv-pretty", 'class="rv-tool-response"', 'class="rv-answer"', 'class="rv-tools"',
                "rv-empty-block", 'data-role="us&amp;er"', "rv-marker-end", 'class="rv-turn"',
            ):  # fmt: skip
                if piece in markup:
                    seen.add(piece)
    assert len(seen) == 12


ROWS = [
    InfoRow("reward", "1.0000", "number", also=("score", "acc<1>")),
    InfoRow("status", "completed", "string"),
    InfoRow("label", "<b>&\"'", "string"),
    InfoRow("note", "null", "null"),
    InfoRow("response_length", "4096", "number", group="length"),
]


def test_the_info_rows_are_what_the_template_wrote():
    template = REFERENCE.get_template("rollouts/_info_row.html")
    expected = "".join(template.render(Context({"row": row})) for row in ROWS)
    built = info_rows(ROWS)
    assert built == expected
    assert 'data-status="completed"' in built and built.count("data-status") == 1
    assert "&lt;b&gt;&amp;&quot;&#x27;" in built and "<b>" not in built
    assert info_rows([]) == ""
