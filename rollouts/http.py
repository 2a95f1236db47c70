"""JSON responses: strict JSON always, one error shape, no paths or tracebacks ever."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse

from .access import DENIED_MESSAGE, is_allowed
from .catalogs import bind_run
from .store import BadRequest, NotFound, StoreError, UnreadableLine, finite_or_none

logger = logging.getLogger("rollouts")

JSON_TYPE = "application/json"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_STATUS_OF: list[tuple[type[StoreError], HTTPStatus]] = [
    (NotFound, HTTPStatus.NOT_FOUND),
    (BadRequest, HTTPStatus.BAD_REQUEST),
    (UnreadableLine, HTTPStatus.UNPROCESSABLE_ENTITY),
]


def dumps(data: Any) -> bytes:
    return json.dumps(finite_or_none(data), ensure_ascii=False, allow_nan=False).encode()


def json_response(data: Any, status: int = HTTPStatus.OK) -> HttpResponse:
    return HttpResponse(dumps(data), status=status, content_type=JSON_TYPE)


def error_response(status: HTTPStatus, message: str, **extra: Any) -> HttpResponse:
    body = {"ok": False, "status": status.value, "error": status.phrase, "message": message}
    return json_response({**body, **extra}, status=status)


def status_of(exc: StoreError) -> HTTPStatus:
    for cls, status in _STATUS_OF:
        if isinstance(exc, cls):
            return status
    return HTTPStatus.SERVICE_UNAVAILABLE


def int_param(request: HttpRequest, name: str, default: int, low: int, high: int) -> int:
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


def api_view(*methods: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """An API endpoint answering only `methods` (any, if none are given), always in JSON.

    Store errors become the JSON error shape with their status; anything unexpected becomes
    a bare 500 with the details in the log, never in the response.
    """

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if methods and request.method not in methods:
                allowed = ", ".join(methods)
                response = error_response(
                    HTTPStatus.METHOD_NOT_ALLOWED, f"{request.method} is not allowed; use {allowed}"
                )
                response["Allow"] = allowed
                return response
            bind_run(request, kwargs)
            if not is_allowed(request):
                return error_response(HTTPStatus.FORBIDDEN, DENIED_MESSAGE)
            try:
                return view(request, *args, **kwargs)
            except UnreadableLine as exc:
                return error_response(status_of(exc), str(exc), line=exc.line)
            except StoreError as exc:
                return error_response(status_of(exc), str(exc))
            except Exception:
                logger.exception("unexpected error in %s", request.path)
                return error_response(
                    HTTPStatus.INTERNAL_SERVER_ERROR, "internal error; see the server log"
                )

        # A read-only endpoint has no state to protect, and Django's CSRF check would answer a
        # stray POST with an HTML 403 page instead of our JSON 405. Endpoints that accept a
        # write keep the check (or, like cache/clear, do their own same-origin check).
        if not set(methods) - SAFE_METHODS:
            wrapper.csrf_exempt = True  # type: ignore[attr-defined]
        return wrapper

    return decorate


def is_same_origin(request: HttpRequest) -> bool:
    """A browser POST must come from our own pages; scripts (no Origin header) may POST.

    Browsers send `Origin` (and `Sec-Fetch-Site`) on every cross-site POST, so checking them
    stops cross-site requests without making curl users fetch a CSRF token first.
    """
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.get_host()
