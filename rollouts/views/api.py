"""The JSON API of a data directory's files: buckets, steps, samples, columns, statistics, and the
index cache. Every shape here is documented in docs/api.md. URLs and code say `bucket`, as the
pages do; the JSON keeps the original tool's name for it, `subdir`, so its clients still work.
A step is addressed by its file name here (`3.jsonl`), by its step name on the pages (`3`)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from http import HTTPStatus
from typing import Any, cast

from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from ..conf import conf
from ..store import (
    PAGE_RELEASE_BYTES,
    BadRequest,
    StepIndex,
    UnreadableLine,
    clipped_histograms,
    line_as_json,
    release_freed_memory,
    step_name,
)
from ..web import (
    JSON_TYPE,
    error_response,
    get_catalog,
    index_cache,
    int_param,
    json_response,
    selection_of,
    stream_object,
    with_raw,
)
from .decorators import api, is_same_origin
from .samples import INLINE_COLUMNS_BYTES, ordering_of
from .twins import ClippedHistogram, StatsTwin


@api("GET", "HEAD")
def api_subdirs(request: HttpRequest) -> HttpResponseBase:
    catalog = get_catalog(request)
    return json_response({"data_dir": catalog.name, "subdirs": catalog.buckets()})


@api("GET", "HEAD")
def api_steps(request: HttpRequest, bucket: str) -> HttpResponseBase:
    steps = get_catalog(request).steps(bucket)
    return json_response(
        {
            "subdir": bucket,
            "steps": [
                {"filename": s.filename, "step": s.step, "size_bytes": s.size_bytes} for s in steps
            ],
            "total": len(steps),
        }
    )


def _page_items(index: StepIndex, positions: Sequence[int]) -> Iterator[bytes]:
    """The page's samples; an unreadable line is `null` (`samples` stays aligned with
    `positions`). Then the rest of a partly scanned step is scanned, for the totals that follow.
    Read through one open file (`StepIndex.read_many`): a step deleted or made unreadable
    meanwhile is sent whole; one rewritten or truncated ends the page (see `stream_object`)."""
    sent = 0
    for sample in index.read_many(positions):
        if isinstance(sample, UnreadableLine):
            yield b"null"
            continue
        sent += len(sample.data)
        yield line_as_json(sample.decoded, sample.data)
    release_freed_memory(sent, PAGE_RELEASE_BYTES)  # a page of big samples: see store.memory
    index.finish_scan()


@api("GET", "HEAD")
def api_samples(request: HttpRequest, bucket: str, filename: str) -> HttpResponseBase:
    """One page of a step. In file order, a big step's page is read as soon as the newline scan
    has passed it, and goes out while the scan finishes and before its columns are decoded
    (whatever a request before started): `total` and `total_pages` come after the samples."""
    page = int_param(request, "page", 1, 1, 10**9)
    page_size = int_param(request, "page_size", 50, 1, conf.MAX_PAGE_SIZE)
    selection = selection_of(request)
    catalog = get_catalog(request)
    first = (page - 1) * page_size
    # A page in file order needs only its lines; a sorted or filtered one, every record.
    records = first + page_size if selection.is_file_order else None
    index = catalog.open_step(bucket, filename, records)
    # Every record, unreadable ones included (not known yet): see docs/api.md.
    early = (
        selection.is_file_order
        and index.identity.size > INLINE_COLUMNS_BYTES
        and not index.columns_ready
    )
    ordering: Sequence[int] = range(len(index)) if early else ordering_of(catalog, index, selection)
    positions = list(ordering[first : first + page_size])
    head = {
        "subdir": bucket,
        "filename": filename,
        "page": page,
        "page_size": page_size,
        "columns_ready": index.columns_ready,
        **selection.as_json(),
    }

    def tail() -> dict[str, Any]:
        total = len(index) if early else len(ordering)
        if early:
            catalog.prepare_columns(index)  # after the page, so that it never competes with it
        return {
            "total": total,
            "total_pages": math.ceil(total / page_size),
            "positions": positions,
        }

    body = stream_object(head, "samples", _page_items(index, positions), tail)
    return StreamingHttpResponse(body, content_type=JSON_TYPE)


@api("GET", "HEAD")
def api_sample(request: HttpRequest, bucket: str, filename: str, position: int) -> HttpResponseBase:
    catalog = get_catalog(request)
    index = catalog.open_step(bucket, filename)
    catalog.prepare_columns(index)  # the next thing a viewer asks for is a sorted list
    sample = index.read(position)
    head = {
        "subdir": bucket,
        "filename": filename,
        "position": position,
        "line": sample.line,
        "records": len(index),
        "warnings": sample.decoded.warnings,
    }
    body = with_raw(head, "sample", line_as_json(sample.decoded, sample.data))
    return HttpResponse(body, content_type=JSON_TYPE)


@api("GET", "HEAD")
def api_columns(request: HttpRequest, bucket: str, filename: str) -> HttpResponseBase:
    catalog = get_catalog(request)
    index = catalog.open_step(bucket, filename)
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
            "subdir": bucket,
            "filename": filename,
            **step_summary(index),
            "columns": {name: [columns.value(name, r) for r in rows] for name in names},
            "labels": columns.labels if not wanted else None,
        }
    )


@api("GET", "HEAD")
def api_stats(request: HttpRequest, bucket: str, filename: str) -> HttpResponseBase:
    """Counts, reward, lengths, groups and histograms of one step, from its columns."""
    catalog = get_catalog(request)
    index = catalog.open_step(bucket, filename)
    stats = catalog.stats(index)
    clipped = cast(
        "dict[str, ClippedHistogram]", clipped_histograms(catalog.columns(index), index.invalid)
    )
    twin: StatsTwin = {
        "subdir": bucket,
        "filename": filename,
        "size_bytes": index.identity.size,
        "partial_tail_bytes": index.partial_tail_bytes,
        # the keys of stats.step_stats, in its order
        "samples": stats["samples"],
        "invalid": stats["invalid"],
        "status": stats["status"],
        "truncation_rate": stats["truncation_rate"],
        "reward": stats["reward"],
        "reward_by_dataset": stats["reward_by_dataset"],
        "reward_components": stats["reward_components"],
        "response_length": stats["response_length"],
        "groups": stats["groups"],
        "histograms": stats["histograms"],
        "histograms_clipped": clipped,
        "flags": {name: int(count) for name, count in stats["flags"]["counts"].items()},
    }
    return json_response(twin)


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


@api("GET", "HEAD")
def api_file(request: HttpRequest, bucket: str, filename: str) -> HttpResponseBase:
    """The whole step, streamed line by line: a 1 GB step never sits in memory."""
    index = get_catalog(request).open_step(bucket, filename)
    count = 0

    def records() -> Iterator[bytes]:
        nonlocal count
        for _, decoded, data in index.iter_readable():
            count += 1
            yield line_as_json(decoded, data)

    head = {"subdir": bucket, "filename": filename}
    body = stream_object(head, "samples", records(), lambda: {"total": count})
    response = StreamingHttpResponse(body, content_type=JSON_TYPE)
    response["Content-Disposition"] = f'inline; filename="{bucket}-{step_name(filename)}.json"'
    return response


def _cache_stats() -> dict:
    cache = index_cache()
    return cache.stats() if hasattr(cache, "stats") else {}  # a portal's own backend may not


@api("GET", "HEAD")
def api_cache_stats(request: HttpRequest) -> HttpResponseBase:
    return json_response({"alias": conf.CACHE_ALIAS, **_cache_stats()})


@csrf_exempt  # protected by the same-origin check below; see docs/security.md
@api("POST")
def api_cache_clear(request: HttpRequest) -> HttpResponseBase:
    if not is_same_origin(request):
        return error_response(HTTPStatus.FORBIDDEN, "cross-origin requests may not clear the cache")
    index_cache().clear()
    return json_response({"ok": True, "alias": conf.CACHE_ALIAS, **_cache_stats()})


@api()
def api_not_found(request: HttpRequest, rest: str) -> HttpResponseBase:
    return error_response(HTTPStatus.NOT_FOUND, "no such API endpoint")
