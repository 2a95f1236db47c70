"""What a request's query string asks for: the selection of samples, and bounded integers.

The parsing itself is the store's (`Selection.from_params`), so the terminal UI and the web read
a selection the same way; this module only takes it from the request and writes it back.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from ..store import BadRequest, Selection


def selection_of(request: HttpRequest) -> Selection:
    return Selection.from_params(request.GET)


def query_suffix(selection: Selection, **extra: Any) -> str:
    """ "?sort=reward&order=desc" for URLs that keep the selection ("" for none); `extra` as for
    `Selection.params` (name="" drops a parameter)."""
    params = selection.params(**extra)
    return "?" + urlencode(params) if params else ""


def int_param(request: HttpRequest, name: str, default: int, low: int, high: int) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise BadRequest(f"{name} must be between {low} and {high}, got {value}")
    return value
