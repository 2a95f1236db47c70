"""Number formatting for the statistics pages, the same as the sample pages use."""

# An en dash stands for "no value", as in printed tables.
# ruff: noqa: RUF001, RUF002

from __future__ import annotations

from typing import Any

from django import template

from rollouts.presentation import (
    format_delta,
    format_number,
    format_share,
    format_share_delta,
    format_stat,
)

register = template.Library()


@register.filter
def num(value: Any) -> str:
    """The number rule (`format_number`: 4 significant digits, whole values as integers), or "–"
    for no value."""
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


@register.filter
def delta(value: Any) -> str:
    """A change with its sign ("+0.25", "-3", "±0"), or "–" for no value."""
    return "–" if value is None else format_delta(value)


@register.filter
def share_delta(value: Any) -> str:
    """A change of a share in percentage points with its sign ("+5.0 pp"), or "–"."""
    return "–" if value is None else format_share_delta(value)
