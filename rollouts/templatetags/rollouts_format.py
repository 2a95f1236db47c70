"""Number formatting for the statistics pages, the same as the sample pages use."""

# An en dash stands for "no value", as in printed tables.
# ruff: noqa: RUF001, RUF002

from __future__ import annotations

from typing import Any

from django import template

from rollouts.presentation import format_number, format_share, format_stat

register = template.Library()


@register.filter
def num(value: Any) -> str:
    """4 decimals or exponent form for floats, ints as they are, "–" for no value."""
    return "–" if value is None else format_number(value)


@register.filter
def pct(value: Any) -> str:
    """A share as "62.5 %" (one decimal, a no-break space: the "%" never wraps), or "–"."""
    return "–" if value is None else format_share(value)


share = register.filter("share", pct)


@register.filter
def count(value: Any) -> str:
    """A count with thousands separators ("1,665"), as the scripts' `formatCount`; "–" for none."""
    return "–" if value is None else f"{int(value):,}"


@register.filter
def stat(value: Any) -> str:
    """`format_stat` (whole numbers as integers), or "–" for no value."""
    return "–" if value is None else format_stat(value)
