"""The run picker of a portal serving several runs (ROLLOUTS_DATA_DIRS, or a folder of them:
ROLLOUTS_RUNS_DIR): each run with its reading, latest mean reward, a sparkline, its step count
and when it last changed; sortable, filtered by name and by reading, 50 runs a page, all in the
URL (`?q=grpo-*&reading=plateau&sort=reward&order=desc&page=2`; no script needed).

It answers at once: the runs come from a listing of the folder, each row from memory or, for
the page shown, from its compact disk cache entry within a budget; the rest fill in as the
background indexing makes them (`web/picker.py`), which runs.js polls for. `api/runs` is the
same as JSON.
"""

from __future__ import annotations

import fnmatch
import math
import time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from ..presentation import STATES
from ..store import BadRequest, ListedRun
from ..web import gone_runs, json_response, listed_runs, picker_rows
from .decorators import api

PER_PAGE = 50
MAX_QUERY = 200  # characters of a name filter
READINGS = (*STATES, "pending", "error")  # what `reading=` may name
SORTS = ("name", "reward", "steps", "changed")


def _sort_value(run: ListedRun, row: dict[str, Any] | None, sort: str) -> Any:
    """A run's value to sort by (None: a run without one sorts last either way)."""
    if sort == "name":
        return run.name
    if sort == "changed":
        return (row or {}).get("changed_ns") or run.changed_ns
    if row is None:
        return None
    return row.get("latest_reward" if sort == "reward" else "steps")


def _matches(name: str, query: str) -> bool:
    """A substring of the name, or a glob when the query has `*`, `?` or `[`; either case."""
    if not query:
        return True
    if any(c in query for c in "*?["):
        return fnmatch.fnmatchcase(name.lower(), query.lower())
    return query.lower() in name.lower()


def _reading_of(row: dict[str, Any] | None) -> str:
    if row is None:
        return "pending"
    if row.get("state") == "error":
        return "error"
    return str(row["reading"]["verdict"]["state"])


def picker(request: HttpRequest) -> dict[str, Any]:
    """What the picker shows for this request's query (the page's context and the JSON)."""
    query = request.GET.get("q", "").strip()
    if len(query) > MAX_QUERY:
        raise BadRequest(f"q is longer than {MAX_QUERY} characters")
    reading = request.GET.get("reading", "")
    if reading and reading not in READINGS:
        raise BadRequest(f"reading must be one of: {', '.join(READINGS)}")
    sort = request.GET.get("sort", "")
    sort = sort if sort in SORTS else ""
    order = "desc" if request.GET.get("order") == "desc" else "asc"
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        raise BadRequest("page must be a whole number from 1") from None

    rows = picker_rows()
    listed = listed_runs()
    matching = [run for run in listed if _matches(run.name, query)]
    known = {run.name: rows.known(run) for run in matching}
    if reading:
        matching = [run for run in matching if _reading_of(known[run.name]) == reading]
    if sort:
        values = {run.name: _sort_value(run, known[run.name], sort) for run in matching}
        present = [run for run in matching if values[run.name] is not None]
        present.sort(key=lambda run: values[run.name], reverse=order == "desc")
        matching = present + [run for run in matching if values[run.name] is None]
    pages = max(1, math.ceil(len(matching) / PER_PAGE))
    page = min(page, pages)
    shown = matching[(page - 1) * PER_PAGE : page * PER_PAGE]
    deadline = rows.deadline()
    shown_rows = [rows.row(run, deadline) for run in shown]
    rows.schedule(listed, {run.name for run in shown})
    pending = rows.pending(listed)
    # Ordered or filtered by rows it did not have yet (made just now, e.g. from the disk
    # entries after a restart): the next answer orders them by what they say.
    provisional = bool(reading or sort not in ("", "name")) and any(
        known[run.name] is None for run in shown
    )
    state = {"q": query, "reading": reading, "sort": sort, "order": order}
    return {
        "runs": shown_rows,
        "total": len(matching),
        "listed": len(listed),
        "page": page,
        "pages": pages,
        "per_page": PER_PAGE,
        "pending": pending,
        "done": pending == 0 and rows.indexing() == 0 and not provisional,
        "gone": gone_runs(),
        "next_url": _url(state, page + 1) if page < pages else None,
        "prev_url": _url(state, page - 1) if page > 1 else None,
        "state": state,
        "provisional": provisional,
    }


def _url(state: dict[str, str], page: int | None = None, **changes: str) -> str:
    """This picker's query with `changes` (empty values left out)."""
    params = {**state, **changes}
    if page is not None and page > 1:
        params["page"] = str(page)
    if params.get("order") == "asc" or not params.get("sort"):
        params.pop("order", None)
    return "?" + urlencode({k: v for k, v in params.items() if v})


def run_picker(request: HttpRequest) -> HttpResponse:
    answer = picker(request)
    state = answer["state"]
    sort, order = state["sort"], state["order"]
    runs = answer["runs"]
    context: dict[str, Any] = {
        **answer,
        "indexing": answer["provisional"]
        or any(run.get("state") in ("pending", "updating") for run in runs),
        "sort": sort,
        "order": order,
        "readings": READINGS,
        "sort_links": {
            key: _url(state, sort=key, order=_next_order(key, sort, order)) for key in SORTS
        },
    }
    for run in runs:
        if run.get("changed_ns"):
            changed = run["changed_ns"] / 1e9
            run["changed_iso"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(changed))
            run["changed_ago"] = _ago(time.time() - changed)
    if not answer["listed"]:
        context["error"] = (
            "No runs yet: none are configured (ROLLOUTS_DATA_DIRS), or the folder of runs"
            " (ROLLOUTS_RUNS_DIR) holds none."
        )
    return TemplateResponse(request, "rollouts/runs.html", context)


def _next_order(key: str, sort: str, order: str) -> str:
    """A column's link: the other order when it is the sort already; else names A-Z first and
    numbers largest first."""
    if key == sort:
        return "asc" if order == "desc" else "desc"
    return "asc" if key == "name" else "desc"


@api("GET", "HEAD")
def api_runs(request: HttpRequest) -> HttpResponse:
    answer = picker(request)
    answer.pop("state")
    answer.pop("provisional")
    answer["runs"] = [_twin_row(run) for run in answer["runs"]]
    return json_response(answer)


TWIN_KEYS = (
    "name",
    "url",
    "trends_url",
    "colour",
    "bucket",
    "steps",
    "changed_ns",
    "latest_reward",
    "latest_step",
    "state",
    "error",
)


def _twin_row(run: dict[str, Any]) -> dict[str, Any]:
    row = {key: run.get(key) for key in TWIN_KEYS}
    row["spark"] = run.get("spark_values", [])
    row["reading"] = run.get("reading")
    return row


def _ago(seconds: float) -> str:
    """How long ago, as people say it."""
    seconds = max(seconds, 0)
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''} ago"
    return "just now"
