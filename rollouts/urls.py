"""The app's URLs, for `include("rollouts.urls")` (namespace `rollouts`): the patterns are the
views' own (`rollouts/views/routes.py`)."""

from __future__ import annotations

from .views import urlpatterns

app_name = "rollouts"

__all__ = ["app_name", "urlpatterns"]
