"""The viewer's HTML pages and their JSON twins, built from one context per page.

A page's whole state is in its URL: bucket and step in the path, the sample as its line
position (stable while the file grows, unlike its rank in a sorted list), and sort, order and
filters in the query string. `RV-Fragment: 1` asks for just the swappable `<main>`, which the
page's script fetches to move between samples without a reload.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import asdict
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from .conf import conf
from .http import JSON_TYPE, api_view, dumps, status_of
from .presenter import format_bytes, present_sample
from .render import compile_mask
from .store import BadRequest, Catalog, NotFound, StepIndex, StoreError, UnreadableLine
from .store.jsonio import line_as_json
from .views import get_catalog

FRAGMENT_HEADER = "RV-Fragment"
# No inline script, nothing from another origin; sample text can never become code.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
FILTER_NAMES = ("status", "dataset")
# Steps up to this size get their columns before the first page (well under 0.1 s), so small
# steps never show a provisional ordering; bigger ones show the first sample at once instead.
INLINE_COLUMNS_BYTES = 32 * 1024 * 1024


class Query:
    """sort / order / filters from a query string, validated against the step's columns."""

    def __init__(self, request: HttpRequest) -> None:
        self.sort = request.GET.get("sort") or None
        if self.sort == "position":
            self.sort = None
        self.order = request.GET.get("order") or "asc"
        if self.order not in ("asc", "desc"):
            raise BadRequest(f"order must be 'asc' or 'desc', got {self.order!r}")
        self.filters = {n: request.GET[n] for n in FILTER_NAMES if request.GET.get(n)}

    @property
    def is_file_order(self) -> bool:
        return self.sort is None and not self.filters

    def params(self, **extra: Any) -> dict[str, str]:
        params: dict[str, str] = {}
        if self.sort:
            params["sort"] = self.sort
        if self.order != "asc":
            params["order"] = self.order
        params.update(self.filters)
        params.update({k: str(v) for k, v in extra.items()})
        return params

    def suffix(self, **extra: Any) -> str:
        params = self.params(**extra)
        return "?" + urlencode(params) if params else ""

    def as_json(self) -> dict[str, Any]:
        return {"sort": self.sort or "position", "order": self.order, "filters": self.filters}


def with_page_headers(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response["Vary"] = FRAGMENT_HEADER
        return response

    return wrapper


# -- URLs ------------------------------------------------------------------------------------
def step_url(bucket: str, step: str) -> str:
    return reverse("rollouts:step", kwargs={"bucket": bucket, "step": step})


def sample_url(bucket: str, step: str, position: int) -> str:
    return reverse("rollouts:sample", kwargs={"bucket": bucket, "step": step, "position": position})


def _step_name(filename: str) -> str:
    return filename.removesuffix(".jsonl")


# -- context ---------------------------------------------------------------------------------
def _ordering(catalog: Catalog, index: StepIndex, query: Query) -> Sequence[int]:
    """Positions in the current order. File order needs no columns: a 1 GB step opens at once."""
    if query.is_file_order and not index.columns_ready:
        if index.identity.size > INLINE_COLUMNS_BYTES:
            catalog.prepare_columns(index)
            return range(len(index))
        catalog.columns(index)
    return catalog.ordering(index, query.sort, query.order, query.filters)


def _choices(index: StepIndex, sample: dict[str, Any] | None, query: Query) -> dict[str, Any]:
    """Sort columns and filter values for the controls.

    Before the column pass has finished, the shown sample's own numeric fields stand in, so the
    controls are usable on a step that is still being indexed.
    """
    columns = index.columns if index.columns_ready else None
    if columns is not None:
        sorts = sorted(columns.numeric)
        values = {name: list(columns.categories.get(name, [])) for name in FILTER_NAMES}
    else:
        sample = sample or {}
        sorts = sorted(
            k for k, v in sample.items() if isinstance(v, int | float) and not isinstance(v, bool)
        )
        if isinstance(sample.get("reward"), dict):
            sorts.append("reward")
        values = {
            name: [sample[name]] if isinstance(sample.get(name), str) else []
            for name in FILTER_NAMES
        }
    if query.sort and query.sort not in sorts:
        sorts.append(query.sort)
    for name, wanted in query.filters.items():
        if wanted not in values[name]:
            values[name].append(wanted)
    return {
        "sorts": sorts,
        "statuses": sorted(values["status"]),
        "datasets": sorted(values["dataset"]),
    }


def _steps_context(catalog: Catalog, bucket: str, step: str | None) -> dict[str, Any]:
    steps = catalog.steps(bucket)
    return {
        "data_dir": catalog.name,
        "buckets": [
            {"name": name, "url": reverse("rollouts:bucket", kwargs={"bucket": name})}
            for name in catalog.buckets()
        ],
        "bucket": bucket,
        "step": step,
        "steps": [
            {
                "step": s.step,
                "name": _step_name(s.filename),
                "size": format_bytes(s.size_bytes),
                "url": step_url(bucket, _step_name(s.filename)),
            }
            for s in steps
        ],
    }


def sample_context(
    request: HttpRequest, bucket: str, step: str, position: int | None
) -> tuple[dict[str, Any], int]:
    """Everything the sample page and its JSON twin show, and the HTTP status.

    Raises `_OutsideResult` when the URL names a sample the current filters leave out; the
    caller redirects to its own view of the step's first matching sample.
    """
    catalog = get_catalog()
    context = _steps_context(catalog, bucket, step)
    query = Query(request)
    filename = f"{step}.jsonl"
    index = catalog.open_step(bucket, filename)
    ordering = _ordering(catalog, index, query)
    step_link = step_url(bucket, step)
    context.update(
        {
            "query": query,
            "filename": filename,
            "records": len(index),
            "total": len(ordering),
            "columns_ready": index.columns_ready,
            "invalid": index.invalid_lines(),
            "partial_tail_bytes": index.partial_tail_bytes,
            "step_url": step_link + query.suffix(),
            "form_url": step_link,
            "json_url": reverse("rollouts:api-view-step", kwargs={"bucket": bucket, "step": step})
            + query.suffix(),
            "sample": None,
            "error": None,
        }
    )
    if not ordering:
        if query.filters:
            context["error"] = "No samples in this step match " + ", ".join(
                f"{k} = {v}" for k, v in query.filters.items()
            )
        elif len(index) == 0:
            context["error"] = f"Step {step} has no samples yet."
        else:
            context["error"] = f"No line of step {step} could be read."
        context["choices"] = _choices(index, None, query)
        return context, HTTPStatus.OK

    if position is None:
        position = ordering[0]
    rank = _rank_of(ordering, position)
    if rank is None:
        if position >= len(index) or position < 0:
            raise NotFound(f"step {step} has no sample at position {position}")
        if position in index.invalid:  # a link to it, made before the line was known bad
            return _unreadable(
                context, index, query, index.lines[position], index.invalid[position]
            )
        raise _OutsideResult(query.suffix())

    def url_at(r: int) -> str:
        return sample_url(bucket, step, ordering[r]) + query.suffix()

    last = len(ordering) - 1
    context.update(
        {
            "position": position,
            "rank": rank + 1,
            "page_url": url_at(rank),
            "json_url": reverse(
                "rollouts:api-view-sample",
                kwargs={"bucket": bucket, "step": step, "position": position},
            )
            + query.suffix(),
            "first_url": url_at(0),
            "last_url": url_at(last),
            "prev_url": url_at(rank - 1) if rank > 0 else None,
            "next_url": url_at(rank + 1) if rank < last else None,
            "neighbours": {
                "first": ordering[0],
                "prev": ordering[rank - 1] if rank > 0 else None,
                "next": ordering[rank + 1] if rank < last else None,
                "last": ordering[last],
            },
        }
    )
    try:
        record = index.read(position)
    except UnreadableLine as exc:
        return _unreadable(context, index, query, exc.line, exc.reason)
    decoded = record.decoded
    values = {key: decoded.value(key) for key in decoded.field_names()}
    context["line"] = record.line
    context["warnings"] = decoded.warnings
    context["sample"] = present_sample(values, compile_mask(conf.MASK_STR))
    context["sample_json"] = line_as_json(decoded, record.data)
    context["choices"] = _choices(index, values, query)
    return context, HTTPStatus.OK


def _unreadable(
    context: dict[str, Any], index: StepIndex, query: Query, line: int, reason: str
) -> tuple[dict[str, Any], int]:
    context["error"] = f"Line {line} of step {context['step']} could not be read: {reason}"
    context["error_line"] = line
    context["choices"] = _choices(index, None, query)
    return context, HTTPStatus.UNPROCESSABLE_ENTITY


def _rank_of(ordering: Sequence[int], position: int) -> int | None:
    if isinstance(ordering, range):
        return position if 0 <= position < len(ordering) else None
    try:
        return ordering.index(position)
    except ValueError:
        return None


class _OutsideResult(Exception):
    """A signal, not an error: the URL names a sample outside the filtered result."""

    def __init__(self, query_suffix: str) -> None:
        self.query_suffix = query_suffix


# -- pages -----------------------------------------------------------------------------------
def _render(request: HttpRequest, context: dict[str, Any], status: int) -> HttpResponse:
    fragment = request.headers.get(FRAGMENT_HEADER) == "1"
    template = "rollouts/_main.html" if fragment else "rollouts/sample.html"
    return TemplateResponse(request, template, context, status=status)


def _error_page(request: HttpRequest, exc: StoreError, bucket: str | None = None) -> HttpResponse:
    """The message in the normal layout, with whatever navigation still works around it."""
    context: dict[str, Any] = {"error": str(exc), "bucket": bucket}
    try:
        catalog = get_catalog()
        buckets = catalog.buckets()
        context.update(_steps_context(catalog, bucket if bucket in buckets else buckets[0], None))
        if bucket not in buckets:
            context["bucket"] = None
    except StoreError:
        pass
    if isinstance(exc, UnreadableLine):
        context["error_line"] = exc.line
    return _render(request, context, status_of(exc))


def _page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A read-only page: store errors become an error page in the layout, not a bare 500."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse(status=HTTPStatus.METHOD_NOT_ALLOWED)
            response["Allow"] = "GET, HEAD"
            return response
        try:
            return view(request, *args, **kwargs)
        except _OutsideResult as outside:
            return HttpResponseRedirect(
                step_url(kwargs["bucket"], kwargs["step"]) + outside.query_suffix
            )
        except StoreError as exc:
            return _error_page(request, exc, kwargs.get("bucket"))

    return with_page_headers(wrapper)


@_page
def index(request: HttpRequest) -> HttpResponse:
    """The latest step of the first bucket: what someone watching a live run wants first."""
    catalog = get_catalog()
    for bucket in catalog.buckets():
        steps = catalog.steps(bucket)
        if steps:
            return HttpResponseRedirect(step_url(bucket, _step_name(steps[-1].filename)))
    bucket = catalog.buckets()[0]
    context = _steps_context(catalog, bucket, None)
    context["error"] = f"No step files yet in {catalog.name!r} (looking for <step>.jsonl)."
    return _render(request, context, HTTPStatus.OK)


@_page
def bucket_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog()
    steps = catalog.steps(bucket)
    if steps:
        url = step_url(bucket, _step_name(steps[-1].filename))
        return HttpResponseRedirect(url + Query(request).suffix())
    context = _steps_context(catalog, bucket, None)
    context["error"] = f"No step files yet in bucket {bucket!r}."
    return _render(request, context, HTTPStatus.OK)


@_page
def step_page(request: HttpRequest, bucket: str, step: str) -> HttpResponse:
    wanted = request.GET.get("i")
    if wanted:
        return _jump(request, bucket, step, wanted)
    context, status = sample_context(request, bucket, step, None)
    return _render(request, context, status)


def _jump(request: HttpRequest, bucket: str, step: str, wanted: str) -> HttpResponse:
    """`?i=K`: the K-th sample (1-based) of the current ordering, as its own URL."""
    catalog = get_catalog()
    query = Query(request)
    index = catalog.open_step(bucket, f"{step}.jsonl")
    ordering = _ordering(catalog, index, query)
    try:
        rank = int(wanted)
    except ValueError:
        raise BadRequest(f"sample number must be an integer, got {wanted!r}") from None
    if not ordering:
        raise NotFound(f"step {step} has no samples to jump to")
    rank = min(max(rank, 1), len(ordering))  # typing 9999 means "the last one"
    return HttpResponseRedirect(sample_url(bucket, step, ordering[rank - 1]) + query.suffix())


@_page
def sample_page(request: HttpRequest, bucket: str, step: str, position: int) -> HttpResponse:
    context, status = sample_context(request, bucket, step, position)
    return _render(request, context, status)


# -- JSON twins ------------------------------------------------------------------------------
def _twin(request: HttpRequest, bucket: str, step: str, position: int | None) -> HttpResponse:
    try:
        context, status = sample_context(request, bucket, step, position)
    except _OutsideResult as outside:
        url = reverse("rollouts:api-view-step", kwargs={"bucket": bucket, "step": step})
        return HttpResponseRedirect(url + outside.query_suffix)
    keys = (
        "data_dir", "bucket", "step", "filename", "records", "total", "columns_ready",
        "invalid", "partial_tail_bytes", "position", "rank", "line", "warnings", "neighbours",
        "error", "error_line",
    )  # fmt: skip
    data: dict[str, Any] = {key: context.get(key) for key in keys}
    data.update(context["query"].as_json())
    data["steps"] = [{"step": s["step"], "name": s["name"]} for s in context["steps"]]
    data["buckets"] = [b["name"] for b in context["buckets"]]
    data["choices"] = context["choices"]
    data["urls"] = {
        name: context.get(f"{name}_url")
        for name in ("page", "json", "first", "prev", "next", "last")
    }
    presented = context["sample"]
    if presented is not None:
        data["info"] = [asdict(row) for row in presented.info]
        data["rendered"] = {
            s.name: asdict(s.rendered) for s in presented.texts if s.rendered is not None
        }
    body = dumps(data)
    if presented is not None:
        body = body[:-1] + b', "sample": ' + context["sample_json"] + b"}"
    return HttpResponse(body, status=status, content_type=JSON_TYPE)


@api_view("GET", "HEAD")
def api_view_step(request: HttpRequest, bucket: str, step: str) -> HttpResponse:
    return _twin(request, bucket, step, None)


@api_view("GET", "HEAD")
def api_view_sample(request: HttpRequest, bucket: str, step: str, position: int) -> HttpResponse:
    return _twin(request, bucket, step, position)


__all__ = [
    "api_view_sample",
    "api_view_step",
    "bucket_page",
    "index",
    "sample_page",
    "step_page",
]
