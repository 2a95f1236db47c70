"""The header of every page of a bucket: the run, the buckets, the step selector, the page
links and the live hooks (the poll URL and interval, the newest step the page knows)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from ..conf import conf
from ..store import Catalog, StepFile
from ..web import app_url, current_run, step_entries, step_url


def header_context(
    request: HttpRequest, catalog: Catalog, bucket: str, step: str | None
) -> dict[str, Any]:
    steps = catalog.steps(bucket)
    run = current_run(request)
    shown = next((s for s in steps if s.name == step), None)
    # The view links are the same on every page of a bucket: a page of no step (trends, search,
    # a prompt, compare) links to the newest step's samples, statistics and table.
    linked = step if step else (steps[-1].name if steps else None)
    return {
        "data_dir": catalog.name,
        "run": run,
        "runs_url": reverse("rollouts:runs") if run is not None else None,
        "buckets": [
            {
                "name": name,
                "url": app_url(request, "bucket", bucket=name),
                "trends_url": app_url(request, "trends", bucket=name),
            }
            for name in catalog.buckets()
        ],
        "bucket": bucket,
        "step": step,
        "step_size_bytes": shown.size_bytes if shown is not None else None,
        "steps": step_entries(request, bucket, steps),
        "latest": steps[-1] if steps else None,
        "poll_url": app_url(request, "api-poll", bucket=bucket),
        "poll_ms": conf.POLL_MS,
        "trends_url": app_url(request, "trends", bucket=bucket),
        "search_url": app_url(request, "search", bucket=bucket),
        "samples_url": step_url(request, bucket, linked) if linked else None,
        "stats_url": app_url(request, "step-stats", bucket=bucket, step=linked) if linked else None,
        "table_url": app_url(request, "step-table", bucket=bucket, step=linked) if linked else None,
        "compare_url": compare_url(request, bucket, steps, linked),
        **neighbour_steps(request, bucket, steps, step),
    }


def neighbour_steps(
    request: HttpRequest, bucket: str, steps: list[StepFile], step: str | None
) -> dict[str, str | None]:
    """The samples and statistics URLs of the steps before and after `step`, for the `[` and
    `]` keys (keys.js); None at either end, and for a page of no step."""
    names = [s.name for s in steps]
    at = names.index(step) if step in names else None
    links: dict[str, str | None] = {}
    for side, offset in (("prev", -1), ("next", 1)):
        other = names[at + offset] if at is not None and 0 <= at + offset < len(names) else None
        links[f"{side}_step_url"] = step_url(request, bucket, other) if other else None
        links[f"{side}_step_stats_url"] = (
            app_url(request, "step-stats", bucket=bucket, step=other) if other else None
        )
        links[f"{side}_step_table_url"] = (
            app_url(request, "step-table", bucket=bucket, step=other) if other else None
        )
    return links


def compare_url(
    request: HttpRequest, bucket: str, steps: list[StepFile], step: str | None
) -> str | None:
    """The compare page for `step` against the step before it (itself when it is the first)."""
    names = [s.name for s in steps]
    if step not in names:
        return None
    before = names[max(names.index(step) - 1, 0)]
    return app_url(request, "compare", bucket=bucket) + f"?a={before}&b={step}"
