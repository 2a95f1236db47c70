"""JSON responses: strict JSON always (`store.jsonio.dumps_strict`), one error shape, no paths or
tracebacks ever, and objects streamed item by item when they hold samples."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import Any

from django.http import HttpResponse

from ..store import BadRequest, NotFound, StoreError, UnreadableLine, dumps_strict

JSON_TYPE = "application/json"
_STATUS_OF: list[tuple[type[StoreError], HTTPStatus]] = [
    (NotFound, HTTPStatus.NOT_FOUND),
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


def with_raw(head: dict[str, Any], key: str, raw: bytes) -> bytes:
    """`head` as a JSON object with `key` set to `raw`, JSON text that is already encoded."""
    return dumps_strict(head)[:-1] + b', "' + key.encode() + b'": ' + raw + b"}"


def stream_object(
    head: dict[str, Any], key: str, items: Iterable[bytes], tail: Callable[[], dict[str, Any]]
) -> Iterator[bytes]:
    """`head` as a JSON object, then `key` holding already-encoded JSON items, then `tail()`.

    Streamed item by item, so a page of 500 multi-MB samples or a whole 1 GB step is never
    held in memory; `tail` is called last, so it can report what the items counted.
    """
    yield dumps_strict(head)[:-1] + b', "' + key.encode() + b'": ['
    for number, item in enumerate(items):
        yield (b", " if number else b"") + item
    yield b"], " + dumps_strict(tail())[1:-1] + b"}"
