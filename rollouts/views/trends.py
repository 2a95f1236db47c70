"""A bucket across steps: the trends page, its JSON (per-step metrics, cards, the reading), and
the poll that keeps every open page of the bucket live.

The page draws its curves in the browser from `api/jsonl/<bucket>/trends`, because hovering,
smoothing and live updates need a script anyway.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import get_script_prefix, reverse
from django.utils.safestring import mark_safe

from ..presentation import run_colour_index
from ..store import Point, Snapshot, StoreError, curves, dumps_strict, metric_cards
from ..web import (
    JSON_TYPE,
    app_url,
    bucket_reading,
    catalog_of,
    current_run,
    get_catalog,
    history_of,
    int_param,
    json_response,
    overlay_runs,
    reference_lines,
    step_entries,
    store_for,
    trend_scalars,
    url_maker,
    with_scalars_version,
)
from .bucket_twins import RunChoice, TrendsTwin
from .decorators import api, page
from .header import header_context

POLL_STEPS_MAX = 1000  # new steps returned by one poll (the rest come with the next)
STEP_MAX = 2**63  # bounds of the step-number parameters


class _Versioned(Protocol):
    @property
    def step(self) -> int: ...

    @property
    def size_bytes(self) -> int: ...


def cursor_of(items: Sequence[_Versioned]) -> dict[str, int] | None:
    """Where a client's next poll starts: the newest step it knows, and that step's size."""
    if not items:
        return None
    return {"after": items[-1].step, "size": items[-1].size_bytes}


# How long one answer may spend reading steps from the disk cache before it goes out: a
# restarted viewer's first answer then holds every step the cache has (about 1 ms each).
DISK_BUDGET_S = 0.25
# What the inline JSON must not hold raw inside a <script> element (as Django's json_script).
_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}
MEMO_ANSWERS = 32  # trends answers remembered (see trends_bytes), the least recently used go
_memo: OrderedDict[tuple, tuple[tuple, bytes]] = OrderedDict()
_memo_lock = threading.Lock()


@page
def trends_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, None)
    trends_url = app_url(request, "api-trends", bucket=bucket)
    # The first answer comes with the page, so what is known is drawn without another request.
    first = trends_bytes(request, bucket).decode("utf-8")
    context.update(
        {
            "page": "trends",
            "trends_json_url": trends_url,
            "json_url": trends_url,
            "trends_data": mark_safe(first.translate(_SCRIPT_ESCAPES)),  # noqa: S308
            "run_choices": run_choices(request, bucket),
        }
    )
    return TemplateResponse(request, "rollouts/trends.html", context)


@api("GET", "HEAD")
def api_trends(request: HttpRequest, bucket: str) -> HttpResponseBase:
    """Per-step metrics of a bucket, the metric cards and the convergence reading.

    Answers at once with what is indexed so far (`indexed` of `total`); `?after=N` returns only
    the points of steps after N (the cards and the reading always cover every step).
    """
    after = int_param(request, "after", -1, -1, STEP_MAX)
    return HttpResponse(trends_bytes(request, bucket, after), content_type=JSON_TYPE)


def run_choices(request: HttpRequest, bucket: str) -> list[RunChoice]:
    """The runs whose curves of this bucket can be overlaid on this one's: with several runs
    (ROLLOUTS_DATA_DIRS, or at most 20 of the folder of runs: `overlay_runs`), every run that
    has the bucket, each with its trends JSON; none else."""
    current = current_run(request)
    if current is None:
        return []
    runs = overlay_runs(current)
    if len(runs) < 2:
        return []
    choices: list[RunChoice] = []
    for name, path in runs:
        try:
            if bucket not in catalog_of(path).buckets():
                continue
        except StoreError:
            continue  # a run that cannot be read says so on its own pages
        url = reverse("rollouts:run:api-trends", kwargs={"run": name, "bucket": bucket})
        choices.append(
            {
                "name": name,
                "trends_url": url,
                "current": name == current,
                "colour": run_colour_index(name),
            }
        )
    return choices


def trends_bytes(request: HttpRequest, bucket: str, after: int = -1) -> bytes:
    """`trends_json` encoded, from the memo when nothing it is made of changed: the same steps'
    points (the very objects, kept alive by the memo), the same scalars, runs and URL prefix.
    Every open page of a bucket asks for it at each new step; most answers are the same."""
    catalog = get_catalog(request)
    snapshot = history_of(catalog, bucket).snapshot(DISK_BUDGET_S)
    run = current_run(request)
    store, why = store_for(catalog.root, run)
    if store is not None:
        store.refresh()
    choices = run_choices(request, bucket)
    key = (
        (id(catalog), bucket, run, after, get_script_prefix(), tuple(map(id, snapshot.points))),
        (snapshot.total, snapshot.pending, tuple(snapshot.failed.items())),
        store.version if store is not None else why,
        tuple((c["name"], c["trends_url"]) for c in choices),
    )
    with _memo_lock:
        memo = _memo.get(key)
        if memo is not None:
            _memo.move_to_end(key)
            return memo[1]
    answer = dumps_strict(trends_json(request, bucket, after, snapshot, choices))
    with _memo_lock:
        _memo[key] = ((catalog, snapshot.points), answer)
        while len(_memo) > MEMO_ANSWERS:
            _memo.popitem(last=False)
    return answer


def trends_json(
    request: HttpRequest,
    bucket: str,
    after: int,
    snapshot: Snapshot,
    choices: list[RunChoice],
) -> TrendsTwin:
    """The trends answer made from `trends_bytes`'s snapshot and run choices."""
    catalog = get_catalog(request)
    points = snapshot.points
    # The run's TensorBoard scalars: `tb.<tag>` series on the steps that logged them.
    run = current_run(request)
    scalars = trend_scalars(catalog.root, run, [p.step for p in points])
    keys: dict[str, None] = {}
    for point in points:
        keys.update(dict.fromkeys(point.metrics))
    statuses = [key for key in keys if key.startswith("status.")]
    return {
        "subdir": bucket,
        "total": snapshot.total,
        "indexed": snapshot.total - snapshot.pending,
        "done": snapshot.done,
        "failed": [{"name": name, "error": error} for name, error in snapshot.failed.items()],
        "after": after,
        "step_url": url_maker(request, "step", "step", bucket=bucket)("{step}"),
        "table_url": url_maker(request, "step-table", "step", bucket=bucket)("{step}"),
        "series": curves(keys) + scalars.series,
        "points": [_point_json(p, statuses, scalars.at(p.step)) for p in points if p.step > after],
        "cards": metric_cards(points),
        "reading": bucket_reading(points, scalars),
        "references": reference_lines(scalars),
        "cursor": with_scalars_version(cursor_of(points), catalog.root, run),
        "runs": choices,
        "scalars": scalars.source,
    }


def _point_json(
    point: Point, statuses: list[str], extra: dict[str, float | None] | None = None
) -> dict[str, Any]:
    """A point; a status the bucket has but this step lacks is a 0 % share, not a gap.
    `extra`: the step's TensorBoard scalars (`tb.<tag>`)."""
    metrics = point.metrics
    if metrics.get("samples"):
        metrics = {**dict.fromkeys(statuses, 0.0), **metrics}
    if extra:
        metrics = {**metrics, **extra}
    return {
        "step": point.step,
        "name": point.name,
        "size_bytes": point.size_bytes,
        "wall_time": round(point.wall_time, 3),
        "metrics": metrics,
    }


@api("GET", "HEAD")
def api_poll(request: HttpRequest, bucket: str) -> HttpResponseBase:
    """What changed in a bucket since the client's cursor: cheap when nothing did.

    `after=N&size=S`: the newest step the client knows and its size. Returned: the steps after
    N, and step N again if its size changed. `watch=NAME&watch_size=S`: the step a page shows;
    when its size changed, its current counts (the file is indexed incrementally).
    """
    after = int_param(request, "after", -1, -1, STEP_MAX)
    size = int_param(request, "size", -1, -1, STEP_MAX)
    catalog = get_catalog(request)
    steps = catalog.steps(bucket)
    changed = [s for s in steps if s.step > after or (s.step == after and s.size_bytes != size)]
    body: dict[str, Any] = {
        "subdir": bucket,
        "total": len(steps),
        "changed": bool(changed),
        "steps": step_entries(request, bucket, changed[:POLL_STEPS_MAX]),
        "cursor": with_scalars_version(cursor_of(steps), catalog.root, current_run(request)),
        "watched": None,
    }
    watch = request.GET.get("watch")
    if watch:
        watched = next((s for s in steps if s.name == watch), None)
        if watched is None:  # deleted (or renamed) under the page: a change, not an error
            body["changed"] = True
            body["watched"] = {"name": watch, "deleted": True}
        elif watched.size_bytes != int_param(request, "watch_size", -1, -1, STEP_MAX):
            index = catalog.open_step(bucket, watched.filename)
            body["changed"] = True
            body["watched"] = {
                "name": watch,
                "size_bytes": index.identity.size,
                "records": len(index),
                "partial_tail_bytes": index.partial_tail_bytes,
            }
    return json_response(body)
