"""The header's step selector as markup built in one pass.

A run of a few hundred steps makes as many `<option>`s on every page; through the template
language each cost about ten variable lookups and escapes, the largest single part of a sample
page's rendering (1.9 ms of 17 on the demo's 40 steps). The markup is the same as the template
wrote: every value is an int or text escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.simple_tag
def step_options(steps: Sequence[dict[str, Any]], current: str | None) -> SafeString:
    """One `<option>` a step (`links.step_entries`), the page's own step selected."""
    parts = []
    for s in steps:
        selected = " selected" if s["name"] == current else ""
        parts.append(
            f'<option value="{escape(s["url"])}" data-step="{int(s["step"])}"'
            f' data-name="{escape(s["name"])}" data-size-bytes="{int(s["size_bytes"])}"'
            f"{selected}>Step {int(s['step'])} ({escape(s['size'])})</option>"
        )
    return mark_safe("".join(parts))  # noqa: S308
