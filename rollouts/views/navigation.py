"""Where a bare address leads: `/` and `/<bucket>/` to the newest step (what someone watching a
live run wants first), and the run picker of a portal that serves several runs."""

from __future__ import annotations

from http import HTTPStatus

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from ..conf import conf
from ..store import NotFound, StoreError
from ..web import current_run, get_catalog, has_runs, query_suffix, selection_of, step_url
from .decorators import page, render_sample_page
from .header import header_context
from .runpicker import run_picker


@page
def runs_page(request: HttpRequest) -> HttpResponse:
    return run_picker(request)


@page
def index(request: HttpRequest) -> HttpResponse:
    """The latest step of the first bucket that has steps."""
    if current_run(request) is None and conf.DATA_DIR is None and has_runs():
        return run_picker(request)  # several runs and no default one: pick a run
    # `manage.py train` of a trainer that writes no rollouts (yet): its page is the start
    training = conf.TRAIN_FOLLOW and conf.TRAIN_SPEC is not None
    try:
        catalog = get_catalog(request)
        buckets = catalog.buckets()
    except StoreError:
        if training:
            return HttpResponseRedirect(reverse("rollouts:training"))
        raise
    for bucket in buckets:
        steps = catalog.steps(bucket)
        if steps:
            return HttpResponseRedirect(step_url(request, bucket, steps[-1].name))
    if training:
        return HttpResponseRedirect(reverse("rollouts:training"))
    bucket = buckets[0]
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
