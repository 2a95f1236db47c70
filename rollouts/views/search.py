"""Search a bucket: the page (`<bucket>/search/?q=...`) and its JSON (`api/jsonl/<bucket>/search`).

Both answer one slice of the search (`store.search`): the page renders the first slice, so it
works without a script, and its script asks the JSON for the next slices with the cursor.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse

from ..conf import conf
from ..presentation import answer_check, badge_json, hit_badges
from ..store import FLAGS, BadRequest
from ..store.search import (
    DEFAULT_LIMIT,
    FIELD_CHOICES,
    MAX_LIMIT,
    ORDERS,
    Budget,
    Cursor,
    Query,
    SearchResult,
    StepRange,
    search,
)
from ..web import app_url, get_catalog, int_param, json_response, url_maker
from .bucket_twins import SearchTwin
from .decorators import api, page
from .header import header_context

MAX_LINES = 10**9


def flag(request: HttpRequest, name: str) -> bool:
    raw = request.GET.get(name, "")
    if raw not in ("", "0", "1"):
        raise BadRequest(f"{name} must be 0 or 1, got {raw[:20]!r}")
    return raw == "1"


def query_of(request: HttpRequest) -> Query:
    """The query a request names (BadRequest when it names none, or a bad one)."""
    return Query(
        request.GET.get("q", ""),
        field=request.GET.get("field") or "any",
        regex=flag(request, "regex"),
        case=flag(request, "case"),
        flag=request.GET.get("flag") or None,
    )


def order_of(request: HttpRequest) -> str:
    """`order`: newest (the default: the latest step's hits first) or oldest."""
    order = request.GET.get("order") or ORDERS[0]
    if order not in ORDERS:
        raise BadRequest(f"order must be one of {', '.join(ORDERS)}, got {order[:20]!r}")
    return order


def search_params(query: Query, steps: StepRange) -> dict[str, str]:
    """The query string a hit's link carries, so its sample page moves among the matches."""
    params = query.params()
    if str(steps):
        params["steps"] = str(steps)
    return params


def run_search(request: HttpRequest, bucket: str) -> SearchTwin:
    """One slice of the search the request asks for, as the JSON says it."""
    query = query_of(request)
    steps = StepRange.parse(request.GET.get("steps"))
    limit = int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    # Smaller answers than the time budget gives, when a client wants them (and tests, which
    # cannot rely on the clock to slice a small bucket).
    lines = int_param(request, "lines", 0, 0, MAX_LINES) or None
    raw_after = request.GET.get("after")
    after = Cursor.parse(raw_after) if raw_after else None
    order = order_of(request)
    query.matcher()  # a bad regex is a 400 before anything is read
    result = search(
        get_catalog(request),
        bucket,
        query,
        steps,
        limit=limit,
        after=after,
        budget=Budget(seconds=conf.SEARCH_MS / 1000, lines=lines),
        newest=order == "newest",
        check=answer_check,
    )
    return result_json(request, bucket, query, steps, result, order)


def result_json(
    request: HttpRequest,
    bucket: str,
    query: Query,
    steps: StepRange,
    result: SearchResult,
    order: str = ORDERS[0],
) -> SearchTwin:
    suffix = "?" + urlencode(search_params(query, steps))
    step_urls: dict[str, Any] = {}

    def url(name: str, position: int) -> str:
        if name not in step_urls:
            step_urls[name] = url_maker(request, "sample", "position", bucket=bucket, step=name)
        return step_urls[name](position) + suffix

    return {
        "q": query.text,
        "field": query.field,
        "regex": query.regex,
        "case": query.case,
        "flag": query.flag,
        "order": order,
        "done": result.done,
        "cursor": str(result.cursor) if result.cursor is not None else None,
        "scanned_steps": result.scanned_steps,
        "total_steps": result.total_steps,
        "scanned_bytes": result.scanned_bytes,
        "elapsed_s": result.elapsed_s,
        "matches": result.matches,
        "listed": result.listed,
        "hits": [
            {
                "step": hit.step,
                "position": hit.position,
                "line": hit.line,
                "field": hit.field,
                "snippet": hit.snippet.as_json(),
                "url": url(hit.name, hit.position),
                "reward": hit.reward,
                "status": hit.status,
                "match": hit.match,
                "chips": [badge_json(b) for b in hit_badges(hit.reward, hit.status)],
            }
            for hit in result.hits
        ],
        "per_step": [
            {"step": c.step, "samples": c.samples, "matches": c.matches} for c in result.per_step
        ],
    }


@api("GET", "HEAD")
def api_search(request: HttpRequest, bucket: str) -> HttpResponseBase:
    """One slice of a search of the bucket's steps; `cursor` (with `done: false`) goes on."""
    get_catalog(request).bucket_dir(bucket)  # an unknown bucket is a 404 before a bad q a 400
    return json_response(run_search(request, bucket))


@page
def search_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, None)
    api_url = app_url(request, "api-search", bucket=bucket)
    form = {
        "q": request.GET.get("q", ""),
        "field": request.GET.get("field") or "any",
        "regex": request.GET.get("regex") == "1",
        "case": request.GET.get("case") == "1",
        "steps": request.GET.get("steps", ""),
        "order": request.GET.get("order") or ORDERS[0],
        "flag": request.GET.get("flag", ""),
    }
    context.update(
        {
            "page": "search",
            "form": form,
            "fields": FIELD_CHOICES,
            "orders": ORDERS,
            "flags": FLAGS,
            "form_url": app_url(request, "search", bucket=bucket),
            "api_url": api_url,
            "result": None,
            "search_error": None,
        }
    )
    status = HTTPStatus.OK
    if form["q"]:
        try:
            result = run_search(request, bucket)
        except BadRequest as exc:
            context["search_error"] = str(exc)
            status = HTTPStatus.BAD_REQUEST
        else:
            params = {k: v for k, v in request.GET.items() if k != "after"}
            query_string = urlencode(params)
            context["result"] = result
            context["json_url"] = f"{api_url}?{query_string}"
            context["search_api_url"] = f"{api_url}?{query_string}"
            if result["cursor"]:
                more = urlencode({**params, "after": result["cursor"]})
                context["more_url"] = f"{context['form_url']}?{more}"
            context["share"] = _shares(result)
    return TemplateResponse(request, "rollouts/search.html", context, status=status)


def _shares(result: SearchTwin) -> list[dict[str, Any]]:
    """The per-step counts of the first slice as a table (the page without a script)."""
    return [
        {**c, "share": c["matches"] / c["samples"] if c["samples"] else 0.0}
        for c in sorted(result["per_step"], key=lambda c: c["step"])
    ]
