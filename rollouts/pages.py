"""The viewer's HTML pages and their JSON twins, built from one context per page (`context.py`).

`RV-Fragment: 1` asks for just the swappable `<main>`, which the page's script fetches to move
between samples without a reload.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import asdict
from http import HTTPStatus
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from .access import denied_page, is_allowed
from .catalogs import bind_run, catalog_of, current_run, get_catalog
from .conf import conf
from .context import (
    OutsideResult,
    Query,
    app_url,
    ordering_of,
    sample_context,
    sample_url,
    step_name,
    step_url,
    steps_context,
)
from .http import JSON_TYPE, api_view, dumps, status_of
from .store import BadRequest, NotFound, StoreError
from .store.history import convergence

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


def with_page_headers(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response["Vary"] = FRAGMENT_HEADER
        return response

    return wrapper


# -- pages -----------------------------------------------------------------------------------
def _render(request: HttpRequest, context: dict[str, Any], status: int) -> HttpResponse:
    fragment = request.headers.get(FRAGMENT_HEADER) == "1"
    template = "rollouts/_main.html" if fragment else "rollouts/sample.html"
    return TemplateResponse(request, template, context, status=status)


def _error_page(request: HttpRequest, exc: StoreError, bucket: str | None = None) -> HttpResponse:
    """The message in the normal layout, with whatever navigation still works around it."""
    context: dict[str, Any] = {"error": str(exc), "bucket": bucket}
    try:
        catalog = get_catalog(request)
        buckets = catalog.buckets()
        context.update(
            steps_context(request, catalog, bucket if bucket in buckets else buckets[0], None)
        )
        if bucket not in buckets:
            context["bucket"] = None
    except StoreError:
        pass
    return _render(request, context, status_of(exc))


def _page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A read-only page: store errors become an error page in the layout, not a bare 500."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse(status=HTTPStatus.METHOD_NOT_ALLOWED)
            response["Allow"] = "GET, HEAD"
            return response
        bind_run(request, kwargs)
        if not is_allowed(request):
            return denied_page(request)
        try:
            return view(request, *args, **kwargs)
        except OutsideResult as outside:
            return HttpResponseRedirect(
                step_url(request, kwargs["bucket"], kwargs["step"]) + outside.query_suffix
            )
        except StoreError as exc:
            return _error_page(request, exc, kwargs.get("bucket"))

    return with_page_headers(wrapper)


@_page
def runs_page(request: HttpRequest) -> HttpResponse:
    return _run_picker(request)


def _run_picker(request: HttpRequest) -> HttpResponse:
    """The run picker of a portal serving several runs (ROLLOUTS_DATA_DIRS), each with how its
    training reads so far (its first bucket's trends, indexed in the background)."""
    runs = [_run_summary(name, path) for name, path in conf.DATA_DIRS.items()]
    # Until every reading is in, the page reloads itself every 2 s (a meta refresh: no script).
    context: dict[str, Any] = {"runs": runs, "indexing": any("indexed" in run for run in runs)}
    if not runs:
        context["error"] = "No runs are configured (ROLLOUTS_DATA_DIRS)."
    return TemplateResponse(request, "rollouts/runs.html", context)


def _run_summary(name: str, path: Path) -> dict[str, Any]:
    run: dict[str, Any] = {"name": name, "url": reverse("rollouts:run:index", kwargs={"run": name})}
    try:
        catalog = catalog_of(path)
        bucket = catalog.buckets()[0]
        snapshot = catalog.history(bucket).snapshot()
    except StoreError as exc:
        run["error"] = str(exc)
        return run
    run["bucket"] = bucket
    run["steps"] = snapshot.total
    run["trends_url"] = reverse("rollouts:run:trends", kwargs={"run": name, "bucket": bucket})
    if snapshot.done:
        run["reading"] = convergence(snapshot.points)
    else:
        run["indexed"] = snapshot.total - snapshot.pending
    return run


@_page
def index(request: HttpRequest) -> HttpResponse:
    """The latest step of the first bucket: what someone watching a live run wants first."""
    if current_run(request) is None and conf.DATA_DIR is None and conf.DATA_DIRS:
        return _run_picker(request)  # several runs and no default one: pick a run
    catalog = get_catalog(request)
    for bucket in catalog.buckets():
        steps = catalog.steps(bucket)
        if steps:
            return HttpResponseRedirect(step_url(request, bucket, step_name(steps[-1].filename)))
    bucket = catalog.buckets()[0]
    context = steps_context(request, catalog, bucket, None)
    context["error"] = f"No step files yet in {catalog.name!r} (looking for <step>.jsonl)."
    return _render(request, context, HTTPStatus.OK)


@_page
def bucket_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog(request)
    steps = catalog.steps(bucket)
    if steps:
        url = step_url(request, bucket, step_name(steps[-1].filename))
        return HttpResponseRedirect(url + Query(request).suffix())
    context = steps_context(request, catalog, bucket, None)
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
    catalog = get_catalog(request)
    query = Query(request)
    index = catalog.open_step(bucket, f"{step}.jsonl")
    ordering = ordering_of(catalog, index, query)
    try:
        rank = int(wanted)
    except ValueError:
        raise BadRequest(f"sample number must be an integer, got {wanted!r}") from None
    if not ordering:
        raise NotFound(f"step {step} has no samples to jump to")
    rank = min(max(rank, 1), len(ordering))  # typing 9999 means "the last one"
    return HttpResponseRedirect(
        sample_url(request, bucket, step, ordering[rank - 1]) + query.suffix()
    )


@_page
def sample_page(request: HttpRequest, bucket: str, step: str, position: int) -> HttpResponse:
    context, status = sample_context(request, bucket, step, position)
    return _render(request, context, status)


# -- JSON twins ------------------------------------------------------------------------------
def _twin(request: HttpRequest, bucket: str, step: str, position: int | None) -> HttpResponse:
    try:
        context, status = sample_context(request, bucket, step, position)
    except OutsideResult as outside:
        url = app_url(request, "api-view-step", bucket=bucket, step=step)
        return HttpResponseRedirect(url + outside.query_suffix)
    keys = (
        "data_dir", "bucket", "step", "filename", "records", "total", "columns_ready",
        "invalid", "partial_tail_bytes", "position", "rank", "line", "warnings", "neighbours",
        "error", "error_line", "empty",
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
