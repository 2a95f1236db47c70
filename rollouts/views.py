"""HTTP in, store calls, HTTP out. Every JSON shape here is documented in the README."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from pathlib import Path

from django.core.cache import InvalidCacheBackendError, caches
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from .cache import ByteLimitedCache
from .conf import conf
from .http import (
    JSON_TYPE,
    Unavailable,
    api_view,
    dumps,
    error_response,
    is_same_origin,
    json_response,
)
from .store import BadRequest, Catalog, NotFound, StepIndex, StoreError, line_as_json
from .store.stats import step_stats

_catalogs: dict[tuple[str, str], Catalog] = {}
_catalogs_lock = threading.Lock()
_fallback_cache = ByteLimitedCache("rollouts-fallback", {})


def index_cache():
    try:
        return caches[conf.CACHE_ALIAS]
    except InvalidCacheBackendError:
        return _fallback_cache  # the W002 system check has said so at start-up


RUN_ATTRIBUTE = "rollouts_run"  # set on the request by the view wrappers from the URL


def current_run(request: HttpRequest) -> str | None:
    return getattr(request, RUN_ATTRIBUTE, None)


def data_dir_of(run: str | None) -> Path:
    """The directory a request reads: its run's (ROLLOUTS_DATA_DIRS), or ROLLOUTS_DATA_DIR."""
    runs = conf.DATA_DIRS
    if run is not None:
        if run not in runs:
            raise NotFound(f"no run {run!r}; the runs are: {', '.join(runs) or 'none'}")
        return runs[run]
    data_dir = conf.DATA_DIR
    if data_dir is None:
        if runs:
            raise NotFound("several runs are configured: choose one under runs/<name>/")
        raise Unavailable("no data directory is configured (ROLLOUTS_DATA_DIR)")
    return data_dir


def get_catalog(request: HttpRequest) -> Catalog:
    data_dir = data_dir_of(current_run(request))
    # One catalog per data dir for all threads: its per-step build locks must be shared.
    # (Django hands each thread its own cache object; ours is thread-safe, so any one serves.)
    key = (str(data_dir), conf.CACHE_ALIAS)
    catalog = _catalogs.get(key)
    if catalog is None:
        with _catalogs_lock:
            try:
                catalog = _catalogs.get(key) or Catalog(data_dir, index_cache())
                _catalogs[key] = catalog
            except OSError:
                raise Unavailable(
                    f"the data directory {Path(data_dir).name!r} is not readable"
                ) from None
    return catalog


# -- parameters ------------------------------------------------------------------------------
def _int_param(request: HttpRequest, name: str, default: int, low: int, high: int) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise BadRequest(f"{name} must be between {low} and {high}, got {value}")
    return value


def _ordering_params(request: HttpRequest) -> tuple[str | None, str, dict[str, str]]:
    sort = request.GET.get("sort") or None
    order = request.GET.get("order") or "asc"
    if order not in ("asc", "desc"):
        raise BadRequest(f"order must be 'asc' or 'desc', got {order!r}")
    if sort == "position":
        sort = None  # file order
    filters = {name: request.GET[name] for name in ("status", "dataset") if request.GET.get(name)}
    return sort, order, filters


# -- JSON API --------------------------------------------------------------------------------
@api_view("GET", "HEAD")
def api_subdirs(request: HttpRequest) -> HttpResponse:
    catalog = get_catalog(request)
    return json_response({"data_dir": catalog.name, "subdirs": catalog.buckets()})


@api_view("GET", "HEAD")
def api_steps(request: HttpRequest, subdir: str) -> HttpResponse:
    steps = get_catalog(request).steps(subdir)
    return json_response(
        {
            "subdir": subdir,
            "steps": [
                {"filename": s.filename, "step": s.step, "size_bytes": s.size_bytes} for s in steps
            ],
            "total": len(steps),
        }
    )


def _stream_object(
    head: dict, key: str, items: Iterable[bytes], tail: Callable[[], dict]
) -> Iterator[bytes]:
    """`head` as a JSON object, then `key` holding already-encoded JSON items, then `tail()`.

    Streamed item by item, so a page of 500 multi-MB samples or a whole 1 GB step is never
    held in memory; `tail` is called last, so it can report what the items counted.
    """
    yield dumps(head)[:-1] + b', "' + key.encode() + b'": ['
    for number, item in enumerate(items):
        yield (b", " if number else b"") + item
    yield b"], " + dumps(tail())[1:-1] + b"}"


def _page_items(index: StepIndex, positions: list[int]) -> Iterator[bytes]:
    for position in positions:
        try:
            sample = index.read(position)
        except StoreError:
            # The file was rewritten mid-response; keep `samples` aligned with `positions`.
            yield b"null"
            continue
        yield line_as_json(sample.decoded, sample.data)


@api_view("GET", "HEAD")
def api_samples(request: HttpRequest, subdir: str, filename: str) -> HttpResponse:
    page = _int_param(request, "page", 1, 1, 10**9)
    page_size = _int_param(request, "page_size", 50, 1, conf.MAX_PAGE_SIZE)
    sort, order, filters = _ordering_params(request)
    catalog = get_catalog(request)
    index = catalog.open_step(subdir, filename)
    ordering = catalog.ordering(index, sort, order, filters)
    total = len(ordering)
    positions = list(ordering[(page - 1) * page_size : page * page_size])
    head = {
        "subdir": subdir,
        "filename": filename,
        "page": page,
        "page_size": page_size,
        "total": total,
        "total_pages": math.ceil(total / page_size),
        "sort": sort or "position",
        "order": order,
        "filters": filters,
    }
    body = _stream_object(
        head, "samples", _page_items(index, positions), lambda: {"positions": positions}
    )
    return StreamingHttpResponse(body, content_type=JSON_TYPE)


@api_view("GET", "HEAD")
def api_sample(request: HttpRequest, subdir: str, filename: str, position: int) -> HttpResponse:
    catalog = get_catalog(request)
    index = catalog.open_step(subdir, filename)
    catalog.prepare_columns(index)  # the next thing a viewer asks for is a sorted list
    sample = index.read(position)
    head = {
        "subdir": subdir,
        "filename": filename,
        "position": position,
        "line": sample.line,
        "records": len(index),
        "warnings": sample.decoded.warnings,
    }
    body = dumps(head)[:-1] + b', "sample": ' + line_as_json(sample.decoded, sample.data) + b"}"
    return HttpResponse(body, content_type=JSON_TYPE)


@api_view("GET", "HEAD")
def api_columns(request: HttpRequest, subdir: str, filename: str) -> HttpResponse:
    catalog = get_catalog(request)
    index = catalog.open_step(subdir, filename)
    columns = catalog.columns(index)
    names = columns.names()
    wanted = request.GET.get("names")
    if wanted:
        names = [n for n in wanted.split(",") if n]
        unknown = [n for n in names if n not in columns.numeric and n not in columns.categorical]
        if unknown:
            raise BadRequest(
                f"unknown column(s) {', '.join(unknown)}; this step has: "
                f"{', '.join(columns.names())}"
            )
    rows = range(columns.rows)
    return json_response(
        {
            "subdir": subdir,
            "filename": filename,
            **step_summary(index),
            "columns": {name: [columns.value(name, r) for r in rows] for name in names},
            "labels": columns.labels if not wanted else None,
        }
    )


@api_view("GET", "HEAD")
def api_stats(request: HttpRequest, subdir: str, filename: str) -> HttpResponse:
    """Counts, reward, lengths, groups and histograms of one step, from its columns."""
    catalog = get_catalog(request)
    index = catalog.open_step(subdir, filename)
    columns = catalog.columns(index)
    return json_response(
        {
            "subdir": subdir,
            "filename": filename,
            "size_bytes": index.identity.size,
            "partial_tail_bytes": index.partial_tail_bytes,
            **step_stats(columns, index.invalid),
        }
    )


def step_summary(index: StepIndex) -> dict:
    """What a client needs to know about a step besides its samples."""
    columns = index.columns
    return {
        "records": len(index),
        "total": len(index) - len(index.invalid),
        "size_bytes": index.identity.size,
        "columns_ready": index.columns_ready,
        "keys": list(columns.keys) if columns is not None else [],
        "invalid": index.invalid_lines(),
        "partial_tail_bytes": index.partial_tail_bytes,
    }


@api_view("GET", "HEAD")
def api_file(request: HttpRequest, subdir: str, filename: str) -> HttpResponse:
    """The whole step, streamed line by line: a 1 GB step never sits in memory."""
    index = get_catalog(request).open_step(subdir, filename)
    count = 0

    def records() -> Iterator[bytes]:
        nonlocal count
        for _, decoded, data in index.iter_readable():
            count += 1
            yield line_as_json(decoded, data)

    head = {"subdir": subdir, "filename": filename}
    body = _stream_object(head, "samples", records(), lambda: {"total": count})
    response = StreamingHttpResponse(body, content_type=JSON_TYPE)
    stem = filename.removesuffix(".jsonl")
    response["Content-Disposition"] = f'inline; filename="{subdir}-{stem}.json"'
    return response


def _cache_stats() -> dict:
    cache = index_cache()
    return cache.stats() if hasattr(cache, "stats") else {}  # a portal's own backend may not


@api_view("GET", "HEAD")
def api_cache_stats(request: HttpRequest) -> HttpResponse:
    return json_response({"alias": conf.CACHE_ALIAS, **_cache_stats()})


@csrf_exempt  # protected by the same-origin check below; see the README's Security section
@api_view("POST")
def api_cache_clear(request: HttpRequest) -> HttpResponse:
    if not is_same_origin(request):
        return error_response(HTTPStatus.FORBIDDEN, "cross-origin requests may not clear the cache")
    index_cache().clear()
    return json_response({"ok": True, "alias": conf.CACHE_ALIAS, **_cache_stats()})


@api_view()
def api_not_found(request: HttpRequest, rest: str) -> HttpResponse:
    return error_response(HTTPStatus.NOT_FOUND, "no such API endpoint")
