"""The run picker of a portal serving several runs (ROLLOUTS_DATA_DIRS): each run with its
reading, latest mean reward, a sparkline, its step count and when it last changed, sortable
by any of them (`?sort=reward&order=desc`: the state is in the URL, no script needed)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from ..conf import conf
from ..presentation import run_colour_index, spark_path, tone_class
from ..store import StoreError, series
from ..web import bucket_reading, catalog_of, history_of, rule_scalars

SPARK_STEPS = 30  # the last steps a run's sparkline draws
# Sort keys: a run's value to sort by (a run without one sorts last either way).
SORTS = {
    "name": lambda run: run["name"],
    "reward": lambda run: run.get("latest_reward"),
    "steps": lambda run: run.get("steps"),
    "changed": lambda run: run.get("changed_ns"),
}


def run_picker(request: HttpRequest) -> HttpResponse:
    runs = [_run_summary(name, path) for name, path in conf.DATA_DIRS.items()]
    sort = request.GET.get("sort", "")
    order = "desc" if request.GET.get("order") == "desc" else "asc"
    if sort in SORTS:
        present = [r for r in runs if SORTS[sort](r) is not None]
        present.sort(key=SORTS[sort], reverse=order == "desc")
        runs = present + [r for r in runs if SORTS[sort](r) is None]
    # Until every reading is in, runs.js reads the page again every 2 s and swaps in its rows.
    context: dict[str, Any] = {
        "runs": runs,
        "indexing": any("indexed" in run for run in runs),
        "sort": sort if sort in SORTS else "",
        "order": order,
        "sort_links": {
            key: f"?sort={key}&order={'asc' if sort == key and order == 'desc' else 'desc'}"
            if key != "name"
            else f"?sort=name&order={'desc' if sort == 'name' and order == 'asc' else 'asc'}"
            for key in SORTS
        },
    }
    if not runs:
        context["error"] = "No runs are configured (ROLLOUTS_DATA_DIRS)."
    return TemplateResponse(request, "rollouts/runs.html", context)


def _run_summary(name: str, path: Path) -> dict[str, Any]:
    run: dict[str, Any] = {
        "name": name,
        "url": reverse("rollouts:run:index", kwargs={"run": name}),
        "colour": run_colour_index(name),  # the run's colour on every page
    }
    try:
        catalog = catalog_of(path)
        bucket = catalog.buckets()[0]
        steps = catalog.steps(bucket)
        snapshot = history_of(catalog, bucket).snapshot()
    except StoreError as exc:
        run["error"] = str(exc)
        return run
    run["bucket"] = bucket
    run["steps"] = snapshot.total
    run["trends_url"] = reverse("rollouts:run:trends", kwargs={"run": name, "bucket": bucket})
    if steps:
        changed = max(s.mtime_ns for s in steps)
        run["changed_ns"] = changed
        run["changed_iso"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(changed / 1e9))
        run["changed_ago"] = _ago(time.time() - changed / 1e9)
    rewards = series(snapshot.points, "reward_mean")
    pairs = zip(snapshot.points, rewards, strict=True)
    finite = [(p.step, v) for p, v in pairs if math.isfinite(v)]
    if finite:
        run["latest_reward"] = finite[-1][1]
        run["latest_step"] = finite[-1][0]
        run["spark"] = spark_path([v for _, v in finite[-SPARK_STEPS:]])
    if snapshot.done:
        # The reading its trends page shows: the same points, the same scalars' rules.
        scalars = rule_scalars(catalog.root, name)
        run["reading"] = bucket_reading(snapshot.points, scalars)
        run["verdict_class"] = tone_class(run["reading"]["verdict"]["tone"])
    else:
        run["indexed"] = snapshot.total - snapshot.pending
    return run


def _ago(seconds: float) -> str:
    """How long ago, as people say it."""
    seconds = max(seconds, 0)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''} ago"
    return "just now"
