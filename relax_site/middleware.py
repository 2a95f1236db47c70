"""The standalone site's own middleware.

`BasePathMiddleware` serves the same URLs whether or not a reverse proxy strips the base path.
With `FORCE_SCRIPT_NAME = "/absproxy/8080"`, Django builds every URL with the prefix. A proxy
that strips it sends `/api/...`; one that forwards the full path sends `/absproxy/8080/api/...`.
It turns the second into the first before URL resolution and static file lookup.

`HeadMiddleware` answers HEAD without a body where the app's views (which do it themselves)
do not answer: the host check's 400s, Django's own 404s and 500s. Static files need nothing:
whitenoise already answers HEAD with the file's headers, an empty body, and no file opened.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase

from rollouts.web import strip_head_body


class HeadMiddleware:
    """First in MIDDLEWARE, so it sees every answer last, after Content-Length is set."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return strip_head_body(request, self.get_response(request))


class BasePathMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        prefix = (settings.FORCE_SCRIPT_NAME or "").rstrip("/")
        if prefix:
            path_info = request.path_info
            if path_info == prefix or path_info.startswith(prefix + "/"):
                request.path_info = path_info[len(prefix) :] or "/"
                request.path = prefix + request.path_info
        return self.get_response(request)
