"""What a viewer page shows, as one context: built once, rendered as HTML or as its JSON twin.

A page's whole state is in its URL: bucket and step in the path, the sample as its line
position (stable while the file grows, unlike its rank in a sorted list), and sort, order and
filters in the query string. Views (`pages.py`) turn these contexts into responses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest
from django.urls import reverse

from .catalogs import current_run, get_catalog
from .conf import conf
from .presenter import format_bytes, present_sample
from .render import compile_mask
from .store import BadRequest, Catalog, NotFound, StepIndex, UnreadableLine, ValueRange
from .store.jsonio import line_as_json

FILTER_NAMES = ("status", "dataset")
# Steps up to this size get their columns before the first page (well under 0.1 s), so small
# steps never show a provisional ordering; bigger ones show the first sample at once instead.
INLINE_COLUMNS_BYTES = 32 * 1024 * 1024


class Query:
    """sort / order / filters from a query string (the store checks them against the columns)."""

    def __init__(self, request: HttpRequest) -> None:
        self.sort = request.GET.get("sort") or None
        if self.sort == "position":
            self.sort = None
        self.order = request.GET.get("order") or "asc"
        if self.order not in ("asc", "desc"):
            raise BadRequest(f"order must be 'asc' or 'desc', got {self.order!r}")
        self.filters = {n: request.GET[n] for n in FILTER_NAMES if request.GET.get(n)}
        raw_range = request.GET.get("range")
        self.range = ValueRange.parse(raw_range) if raw_range else None

    @property
    def is_file_order(self) -> bool:
        return self.sort is None and not self.filters and self.range is None

    def params(self, **extra: Any) -> dict[str, str]:
        params: dict[str, str] = {}
        if self.sort:
            params["sort"] = self.sort
        if self.order != "asc":
            params["order"] = self.order
        params.update(self.filters)
        if self.range is not None:
            params["range"] = str(self.range)
        params.update({k: str(v) for k, v in extra.items()})
        return {k: v for k, v in params.items() if v != ""}  # extra name="" drops a parameter

    def suffix(self, **extra: Any) -> str:
        params = self.params(**extra)
        return "?" + urlencode(params) if params else ""

    def conditions(self) -> list[str]:
        """The filters in words: ["status = truncated", "reward in [0.5,0.75)"]."""
        words = [f"{name} = {value}" for name, value in self.filters.items()]
        if self.range is not None:
            words.append(self.range.describe())
        return words

    def as_json(self) -> dict[str, Any]:
        return {
            "sort": self.sort or "position",
            "order": self.order,
            "filters": self.filters,
            "range": str(self.range) if self.range else None,
        }


# -- URLs ------------------------------------------------------------------------------------
def app_url(request: HttpRequest, name: str, **kwargs: Any) -> str:
    """The URL of one of the app's views, inside the run this request is in (if any)."""
    run = current_run(request)
    if run is None:
        return reverse(f"rollouts:{name}", kwargs=kwargs or None)
    return reverse(f"rollouts:run:{name}", kwargs={"run": run, **kwargs})


def step_url(request: HttpRequest, bucket: str, step: str) -> str:
    return app_url(request, "step", bucket=bucket, step=step)


def sample_url(request: HttpRequest, bucket: str, step: str, position: int) -> str:
    return app_url(request, "sample", bucket=bucket, step=step, position=position)


_SENTINEL = "9" * 18


def step_url_maker(request: HttpRequest, bucket: str) -> Callable[[str], str]:
    """step name -> its URL, reversing once: a run of 500 steps lists 500 links per page."""
    head, _, tail = step_url(request, bucket, _SENTINEL).partition(_SENTINEL)
    return lambda name: f"{head}{name}{tail}"


def step_name(filename: str) -> str:
    return filename.removesuffix(".jsonl")


# -- context ---------------------------------------------------------------------------------
def ordering_of(catalog: Catalog, index: StepIndex, query: Query) -> Sequence[int]:
    """Positions in the current order. File order needs no columns: a 1 GB step opens at once."""
    if query.is_file_order and not index.columns_ready:
        if index.identity.size > INLINE_COLUMNS_BYTES:
            catalog.prepare_columns(index)
            return range(len(index))
        catalog.columns(index)
    return catalog.ordering(index, query.sort, query.order, query.filters, query.range)


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
        numbers = {k: v for k, v in sample.items() if _is_number(v)}
        reward = sample.get("reward")
        if isinstance(reward, dict):  # an object reward is sorted by its components
            numbers.update({f"reward.{k}": v for k, v in reward.items() if _is_number(v)})
        sorts = sorted(numbers)
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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def steps_context(
    request: HttpRequest, catalog: Catalog, bucket: str, step: str | None
) -> dict[str, Any]:
    """The header of every page of a bucket: buckets, the step selector and the live hooks."""
    steps = catalog.steps(bucket)
    run = current_run(request)
    url_of = step_url_maker(request, bucket)
    shown = next((s for s in steps if step_name(s.filename) == step), None)
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
        "steps": [
            {
                "step": s.step,
                "name": step_name(s.filename),
                "size": format_bytes(s.size_bytes),
                "size_bytes": s.size_bytes,
                "url": url_of(step_name(s.filename)),
            }
            for s in steps
        ],
        "latest": steps[-1] if steps else None,
        "poll_url": app_url(request, "api-poll", subdir=bucket),
        "poll_ms": conf.POLL_MS,
        "trends_url": app_url(request, "trends", bucket=bucket),
        "samples_url": step_url(request, bucket, step) if step else None,
        "stats_url": app_url(request, "step-stats", bucket=bucket, step=step) if step else None,
    }


def sample_context(
    request: HttpRequest, bucket: str, step: str, position: int | None
) -> tuple[dict[str, Any], int]:
    """Everything the sample page and its JSON twin show, and the HTTP status.

    Raises `OutsideResult` when the URL names a sample the current filters leave out; the
    caller redirects to its own view of the step's first matching sample.
    """
    catalog = get_catalog(request)
    context = steps_context(request, catalog, bucket, step)
    query = Query(request)
    filename = f"{step}.jsonl"
    index = catalog.open_step(bucket, filename)
    ordering = ordering_of(catalog, index, query)
    step_link = step_url(request, bucket, step)
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
            "json_url": app_url(request, "api-view-step", bucket=bucket, step=step)
            + query.suffix(),
            "sample": None,
            "error": None,
        }
    )
    if index.columns_ready:  # once per version of the file (Catalog.stats keeps it)
        context["summary"] = catalog.stats(index)
    if query.range is not None:
        context["clear_range_url"] = step_link + query.suffix(range="")
    if not ordering:
        if query.filters or query.range:
            context["error"] = "No samples in this step match " + ", ".join(query.conditions())
        elif len(index) == 0:  # news, not an error: a live run has just created the file
            context["empty"] = f"Step {step} has no samples yet."
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
        raise OutsideResult(query.suffix())

    def url_at(r: int) -> str:
        return sample_url(request, bucket, step, ordering[r]) + query.suffix()

    last = len(ordering) - 1
    context.update(
        {
            "position": position,
            "rank": rank + 1,
            "page_url": url_at(rank),
            "json_url": app_url(
                request, "api-view-sample", bucket=bucket, step=step, position=position
            )
            + query.suffix(),
            "form_action": sample_url(request, bucket, step, position),
            "clear_range_url": sample_url(request, bucket, step, position) + query.suffix(range=""),
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
    values = decoded.values()
    context["line"] = record.line
    context["warnings"] = decoded.warnings
    context["sample"] = present_sample(values, compile_mask(conf.MASK_STR))
    context["sample_json"] = line_as_json(decoded, record.data)
    group = values.get("group_index")
    if isinstance(group, int) and not isinstance(group, bool) and group >= 0:
        context["group_index"] = group
        context["group_url"] = app_url(request, "group", bucket=bucket, step=step, group=group)
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


class OutsideResult(Exception):
    """A signal, not an error: the URL names a sample outside the filtered result."""

    def __init__(self, query_suffix: str) -> None:
        self.query_suffix = query_suffix
