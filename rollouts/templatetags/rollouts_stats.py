"""Statistics as the statistics and group pages print them: whole numbers as integers, and
shares whose "%" never wraps onto its own line."""

# An en dash stands for "no value", as in printed tables.
# ruff: noqa: RUF001, RUF002

from __future__ import annotations

from typing import Any

from django import template

from rollouts.presentation.formatting import format_share, format_stat

register = template.Library()


@register.filter
def stat(value: Any) -> str:
    """`format_stat`, or "–" for no value."""
    return "–" if value is None else format_stat(value)


@register.filter
def share(value: Any) -> str:
    """A share as "62.5 %" (no-break space), or "–" for no value."""
    return "–" if value is None else format_share(value)
