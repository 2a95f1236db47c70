"""A sample page opened from a search (`?q=...` with field, regex, case, steps): its ←/→ move to
the previous and next matching sample, across the steps, and the page marks the matches.

Kept apart from the sample view: `sample_context` only merges what `search_navigation` returns.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from ..conf import conf
from ..store import BadRequest
from ..store.search import Budget, Hit, StepRange, adjacent_match, match_spans
from ..web import app_url, get_catalog, sample_url
from .search import query_of, search_params


def search_navigation(
    request: HttpRequest, bucket: str, step: str, position: int, values: dict[str, Any]
) -> dict[str, Any]:
    """What the page changes when it shows a search's hit (nothing without `q`): prev/next
    links to the neighbouring matches (None where the budget found none), its own URL with the
    query kept, and `search` for the banner and the marks."""
    if not request.GET.get("q"):
        return {}
    try:
        query = query_of(request)
        steps = StepRange.parse(request.GET.get("steps"))
        query.matcher()
    except BadRequest as exc:
        return {"search": {"error": str(exc)}}
    catalog = get_catalog(request)
    # Both directions within one request's search budget.
    budget = Budget(seconds=conf.SEARCH_MS / 2000)
    params = search_params(query, steps)
    suffix = "?" + urlencode(params)

    def link(hit: Hit | None) -> str | None:
        return None if hit is None else sample_url(request, bucket, hit.name, hit.position) + suffix

    found, sure = {}, True
    for side in ("prev", "next"):
        hit, complete = adjacent_match(
            catalog, bucket, query, steps, step, position, side == "next", budget
        )
        found[side] = hit
        sure = sure and complete
    return {
        "page_url": sample_url(request, bucket, step, position) + suffix,
        "prev_url": link(found["prev"]),
        "next_url": link(found["next"]),
        "search": {
            "q": query.text,
            "field": query.field,
            "page_url": app_url(request, "search", bucket=bucket) + suffix,
            "terms": json.dumps(match_spans(query, values), ensure_ascii=False),
            "prev_step": found["prev"].name if found["prev"] else None,
            "next_step": found["next"].name if found["next"] else None,
            "sure": sure,  # False: a neighbour was still being looked for when time ran out
        },
    }
