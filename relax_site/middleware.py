"""Serve the same URLs whether or not a reverse proxy strips the base path.

With `FORCE_SCRIPT_NAME = "/absproxy/8080"`, Django builds every URL with the prefix. A proxy
that strips it sends `/api/...`; one that forwards the full path sends `/absproxy/8080/api/...`.
This middleware turns the second into the first before URL resolution and static file lookup.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse


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
