"""Where a bare address leads: `/` and `/<bucket>/` to the newest step (what someone watching a
live run wants first), and the run picker of a portal that serves several runs."""

from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from ..conf import conf
from ..links import step_url
from ..query import query_suffix, selection_of
from ..runs import catalog_of, current_run, get_catalog, history_of
from ..store import NotFound, StoreError
from ..store.reading import convergence
from .decorators import page, render_sample_page
from .header import header_context


@page
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
        snapshot = history_of(catalog, bucket).snapshot()
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


@page
def index(request: HttpRequest) -> HttpResponse:
    """The latest step of the first bucket that has steps."""
    if current_run(request) is None and conf.DATA_DIR is None and conf.DATA_DIRS:
        return _run_picker(request)  # several runs and no default one: pick a run
    catalog = get_catalog(request)
    for bucket in catalog.buckets():
        steps = catalog.steps(bucket)
        if steps:
            return HttpResponseRedirect(step_url(request, bucket, steps[-1].name))
    bucket = catalog.buckets()[0]
    context = header_context(request, catalog, bucket, None)
    context["error"] = f"No step files yet in {catalog.name!r} (looking for <step>.jsonl)."
    return render_sample_page(request, context, HTTPStatus.OK)


@page
def bucket_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog(request)
    steps = catalog.steps(bucket)
    if steps:
        url = step_url(request, bucket, steps[-1].name)
        return HttpResponseRedirect(url + query_suffix(selection_of(request)))
    context = header_context(request, catalog, bucket, None)
    context["error"] = f"No step files yet in bucket {bucket!r}."
    return render_sample_page(request, context, HTTPStatus.OK)


@page
def page_not_found(request: HttpRequest, bucket: str, rest: str) -> HttpResponse:
    """Any other address in a bucket (`/train/abc/`, `/train/3/sample/x/`): the viewer's error
    page with the bucket's navigation, not Django's bare 404."""
    get_catalog(request).bucket_dir(bucket)  # an unknown bucket says so first
    raise NotFound(f"no page {rest!r} in bucket {bucket!r}: steps and samples are numbers")
