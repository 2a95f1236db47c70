"""The app mounted under a prefix, as a host portal would mount it."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [
    path("portal/rollouts/", include("rollouts.urls")),
]
