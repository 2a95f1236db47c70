from __future__ import annotations

from django.urls import path

from . import views

app_name = "rollouts"

_step = "api/jsonl/<str:subdir>/file/<str:filename>"

urlpatterns = [
    path("", views.index, name="index"),
    path("api/jsonl/subdirs", views.api_subdirs, name="api-subdirs"),
    path("api/jsonl/<str:subdir>/steps", views.api_steps, name="api-steps"),
    path(_step, views.api_file, name="api-file"),
    path(f"{_step}/samples", views.api_samples, name="api-samples"),
    path(f"{_step}/sample/<int:position>", views.api_sample, name="api-sample"),
    path(f"{_step}/columns", views.api_columns, name="api-columns"),
    path("api/cache/stats", views.api_cache_stats, name="api-cache-stats"),
    path("api/cache/clear", views.api_cache_clear, name="api-cache-clear"),
    # Anything else under api/ answers in the API's own error shape, not an HTML 404 page.
    path("api/<path:rest>", views.api_not_found, name="api-not-found"),
]
