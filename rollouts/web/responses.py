"""JSON responses: strict JSON always (`store.jsonio.dumps_strict`), one error shape, no paths or
tracebacks ever, and objects streamed item by item when they hold samples. And any response to
a HEAD request: its headers without the body (`strip_head_body`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from http import HTTPStatus
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.template.response import SimpleTemplateResponse

from ..store import (
    BadRequest,
    ForbiddenFile,
    NotFound,
    StoreError,
    UnreadableLine,
    dumps_strict,
    unreadable,
    without_wide_ints,
)

logger = logging.getLogger("rollouts")

JSON_TYPE = "application/json"
# Anything else (the data directory missing or unreadable, a step's I/O error) is a 503.
_STATUS_OF: list[tuple[type[StoreError], HTTPStatus]] = [
    (NotFound, HTTPStatus.NOT_FOUND),
    (ForbiddenFile, HTTPStatus.FORBIDDEN),  # a step the server's user may not read
    (BadRequest, HTTPStatus.BAD_REQUEST),
    (UnreadableLine, HTTPStatus.UNPROCESSABLE_ENTITY),
]


def json_response(data: Any, status: int = HTTPStatus.OK) -> HttpResponse:
    return HttpResponse(dumps_strict(data), status=status, content_type=JSON_TYPE)


def error_response(status: HTTPStatus, message: str, **extra: Any) -> HttpResponse:
    body = {"ok": False, "status": status.value, "error": status.phrase, "message": message}
    return json_response({**body, **extra}, status=status)


def status_of(exc: StoreError) -> HTTPStatus:
    for cls, status in _STATUS_OF:
        if isinstance(exc, cls):
            return status
    return HTTPStatus.SERVICE_UNAVAILABLE


def strip_head_body(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """The answer to a HEAD request: the GET's headers (its Content-Length too), no body.

    Django sends a GET's body for HEAD and leaves dropping it to the server, which gunicorn
    does with a warning on every request. A streamed body is replaced before it starts, so a
    HEAD of a 1 GB step never reads it; a page not rendered yet is emptied once it is.
    Harmless on a response already stripped (the view's decorator, then the site's middleware).
    """
    if request.method != "HEAD":
        return response
    if isinstance(response, SimpleTemplateResponse) and not response.is_rendered:
        response.add_post_render_callback(_drop_content)
    elif isinstance(response, StreamingHttpResponse):  # FileResponse too: its file is closed
        response.streaming_content = []
    elif isinstance(response, HttpResponse):
        _drop_content(response)
    return response


def _drop_content(response: HttpResponse) -> None:
    # Set here, before the body goes: CommonMiddleware would otherwise measure the empty one.
    if not response.has_header("Content-Length"):
        response["Content-Length"] = str(len(response.content))
    response.content = b""


def with_raw(head: Mapping[str, Any], key: str, raw: bytes) -> bytes:
    """`head` as a JSON object with `key` set to `raw`, JSON text that is already encoded
    (one sample: its integers beyond 64 bits become strings, as in every object we write)."""
    raw = without_wide_ints(raw)
    return dumps_strict(head)[:-1] + b', "' + key.encode() + b'": ' + raw + b"}"


def stream_object(
    head: dict[str, Any], key: str, items: Iterable[bytes], tail: Callable[[], dict[str, Any]]
) -> Iterator[bytes]:
    """`head` as a JSON object, then `key` holding already-encoded JSON items, then `tail()`.

    Streamed item by item, so a page of 500 multi-MB samples or a whole 1 GB step is never
    held in memory; `tail` is called last, so it can report what the items counted.

    The 200 has gone out before the first item is read, so a failure on the way (the file
    deleted, truncated, rewritten or made unreadable meanwhile) cannot be an error status: the
    object still closes as valid JSON, with `"complete": false` and the `error` that stopped it.
    """
    yield dumps_strict(head)[:-1] + b', "' + key.encode() + b'": ['
    error = None
    try:
        for number, item in enumerate(items):
            yield (b", " if number else b"") + item
    except StoreError as exc:
        error = str(exc)
    except OSError as exc:  # its str() holds the absolute path: say what happened, not where
        error = str(unreadable(head.get("filename", "the file"), exc))
    except Exception:
        logger.exception("unexpected error while streaming %s", head.get("filename"))
        error = "internal error; see the server log"
    end = {**tail(), "complete": error is None}
    if error is not None:
        end["error"] = error
    yield b"], " + dumps_strict(end)[1:-1] + b"}"
