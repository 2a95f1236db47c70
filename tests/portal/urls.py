from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def home(request: HttpRequest) -> HttpResponse:
    """The host's own page, next to the mounted app."""
    return HttpResponse("<!doctype html><title>Portal</title><h1>Portal home</h1>")


urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("rollouts/", include("rollouts.urls")),  # rollouts: the mount point
]
