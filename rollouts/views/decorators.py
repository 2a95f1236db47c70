"""Every view is one of two kinds, and these decorators are the only way in.

`page`: an HTML page (GET/HEAD); `api(*methods)`: a JSON endpoint. Both take the run out of the
URL, run the access check before anything touches the data, and turn what the store raises
into an answer of their kind: the message in the normal page layout, or the JSON error shape.
Nothing unexpected reaches a client as a traceback or a server path. Both answer HEAD with the
GET's headers and no body, in whatever site mounts the app (`strip_head_body`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers

from ..store import StoreError, UnreadableLine, serving, step_filename
from ..web import (
    DENIED_MESSAGE,
    bind_run,
    current_run,
    denied_page,
    error_response,
    get_catalog,
    is_allowed,
    picker_rows,
    sample_url,
    status_of,
    step_url,
    strip_head_body,
)
from .header import header_context

logger = logging.getLogger("rollouts")

View = Callable[..., HttpResponseBase]
FRAGMENT_HEADER = "RV-Fragment"  # "1": just the swappable <main>, for instant navigation
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# No inline script, nothing from another origin; sample text can never become code.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


def _asked_for(request: HttpRequest) -> None:
    """A request for a run's pages puts that run first in the picker's background indexing."""
    run = current_run(request)
    if run is not None:
        picker_rows().asked(run)


class Redirect(Exception):
    """Raised by a context builder: answer with a redirect to `url` instead of the page."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


def page(view: View) -> View:
    """A read-only HTML page: store errors become the message in the page layout, not a 500."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        with serving():  # background indexing waits while a person's request is answered
            response = _answer_page(view, request, args, kwargs)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        patch_vary_headers(response, (FRAGMENT_HEADER,))
        return strip_head_body(request, response)

    # A page changes nothing, so Django's CSRF check has nothing to protect; left on, it would
    # answer a POST/PUT/DELETE with its 403 page before the view's 405 (with `Allow`).
    wrapper.csrf_exempt = True  # type: ignore[attr-defined]
    return wrapper


def _answer_page(
    view: View, request: HttpRequest, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> HttpResponseBase:
    if request.method not in ("GET", "HEAD"):
        response = HttpResponse(status=HTTPStatus.METHOD_NOT_ALLOWED)
        response["Allow"] = "GET, HEAD"
        return response
    bind_run(request, kwargs)
    if not is_allowed(request):
        return denied_page(request)
    _asked_for(request)
    try:
        return view(request, *args, **kwargs)
    except Redirect as redirect:
        return HttpResponseRedirect(redirect.url)
    except StoreError as exc:
        return error_page(
            request, exc, kwargs.get("bucket"), kwargs.get("step"), kwargs.get("position")
        )


def api(*methods: str) -> Callable[[View], View]:
    """A JSON endpoint answering only `methods` (any, if none are given).

    Store errors become the JSON error shape with their status; anything unexpected becomes
    a bare 500 with the details in the log, never in the response.
    """

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            with serving():
                return strip_head_body(request, answer(request, *args, **kwargs))

        def answer(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
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
            _asked_for(request)
            try:
                return view(request, *args, **kwargs)
            except Redirect as redirect:
                return HttpResponseRedirect(redirect.url)
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


def render_sample_page(request: HttpRequest, context: dict[str, Any], status: int) -> HttpResponse:
    """The sample page's layout (or only its <main>, when the script asks for a fragment)."""
    fragment = request.headers.get(FRAGMENT_HEADER) == "1"
    template = "rollouts/_main.html" if fragment else "rollouts/sample.html"
    return TemplateResponse(request, template, context, status=status)


def error_page(
    request: HttpRequest,
    exc: StoreError,
    bucket: str | None = None,
    step: Any = None,
    position: Any = None,
) -> HttpResponse:
    """The message in the normal layout, with whatever navigation still works around it, and
    links to what does exist (`error_links`: the step's samples, the bucket's steps)."""
    context: dict[str, Any] = {"error": str(exc), "bucket": bucket, "error_links": []}
    try:
        catalog = get_catalog(request)
        buckets = catalog.buckets()
        shown = bucket if bucket in buckets else buckets[0]
        steps = catalog.steps(shown)
        known = next((s.name for s in steps if step is not None and s.name == str(step)), None)
        context.update(header_context(request, catalog, shown, known))  # the selector keeps it
        context["error_links"] = where_instead(request, catalog, shown, steps, known, position)
        if bucket not in buckets:
            context["bucket"] = None
    except StoreError:
        pass
    return render_sample_page(request, context, status_of(exc))


def where_instead(
    request: HttpRequest, catalog: Any, bucket: str, steps: Any, step: str | None, position: Any
) -> list[dict[str, str]]:
    """What exists near what was asked for: the step's first and last sample (a sample that is
    not there), else the bucket's first and latest step."""
    links: list[dict[str, str]] = []
    if step is not None and position is not None:
        count = len(catalog.open_step(bucket, step_filename(step)))
        for label, at in (("first", 0), ("last", count - 1))[: 2 if count > 1 else count]:
            url = sample_url(request, bucket, step, at)
            links.append(
                {"text": f"step {step} has {count} samples: the {label}, {at}", "url": url}
            )
        return links
    if steps:
        first, latest = steps[0].name, steps[-1].name
        what = f"{bucket} has {len(steps)} step{'s' if len(steps) != 1 else ''}"
        links.append(
            {"text": f"{what}: the latest, {latest}", "url": step_url(request, bucket, latest)}
        )
        if first != latest:
            links.append({"text": f"the first, {first}", "url": step_url(request, bucket, first)})
    return links


def is_same_origin(request: HttpRequest) -> bool:
    """A browser POST must come from our own pages; scripts (no Origin header) may POST.

    Browsers send `Origin` (and `Sec-Fetch-Site`) on every cross-site POST, so checking them
    stops cross-site requests without making curl users fetch a CSRF token first. An origin
    matches on scheme, host and port: `request.scheme` is what the browser used (behind a
    proxy: `SECURE_PROXY_SSL_HEADER`, or the WSGI server's own trusted-proxy header).
    """
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    parts = urlsplit(origin)
    return parts.scheme == request.scheme and parts.netloc == request.get_host()
