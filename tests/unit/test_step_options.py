"""The header's step selector, built in one pass (`rollouts_header.step_options`), writes exactly
what the template loop it replaces wrote: that loop is kept here as the reference."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from rollouts.templatetags.rollouts_header import step_options

# base.html's loop before it became a tag (revision c19c408), in the header's {% localize off %}.
STEP_LOOP = Template(
    "{% load l10n %}{% localize off %}"
    '{% for s in steps %}<option value="{{ s.url }}" data-step="{{ s.step }}" '
    'data-name="{{ s.name }}" data-size-bytes="{{ s.size_bytes }}"'
    "{% if s.name == step %} selected{% endif %}>Step {{ s.step }} ({{ s.size }})</option>"
    "{% endfor %}{% endlocalize %}"
)


def entry(step: int, name: str, size_bytes: int, url: str, size: str) -> dict:
    return {"step": step, "name": name, "size_bytes": size_bytes, "url": url, "size": size}


STEPS = [
    entry(0, "0.jsonl", 512, "/runs/a/train/0.jsonl/", "512 B"),
    entry(12345, "12345.jsonl", 1_234_567_890, "/runs/a/train/12345.jsonl/", "1.2 GB"),
    entry(7, "007.jsonl", 10, "/runs/<b>&\"x'/train/007.jsonl/?a=1&b=2", "10 B"),
]


@pytest.mark.parametrize("current", [None, "0.jsonl", "12345.jsonl", "007.jsonl", "9.jsonl"])
def test_the_options_are_what_the_template_loop_wrote(current):
    built = step_options(STEPS, current)
    assert built == STEP_LOOP.render(Context({"steps": STEPS, "step": current}))
    assert built.count("<option ") == 3 and built.count(" selected") == (
        current in {"0.jsonl", "12345.jsonl", "007.jsonl"}
    )


def test_markup_in_a_run_name_is_escaped_and_big_numbers_have_no_separators():
    built = step_options(STEPS, "007.jsonl")
    assert "/runs/&lt;b&gt;&amp;&quot;x&#x27;/train/007.jsonl/?a=1&amp;b=2" in built
    assert "<b>" not in built
    assert 'data-size-bytes="1234567890"' in built and "Step 12345 (1.2 GB)" in built
    assert (
        '<option value="/runs/&lt;b' in built
        and 'data-name="007.jsonl" data-size-bytes="10" selected>' in built
    )
