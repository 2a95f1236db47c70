from __future__ import annotations

from django.urls import include, path, register_converter

from . import insight, pages, views

app_name = "rollouts"


class StepConverter:
    """A step as its file names it: digits, kept as text so `007.jsonl` stays reachable."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str | int) -> str:
        return str(value)


register_converter(StepConverter, "step")

_step = "api/jsonl/<str:subdir>/file/<str:filename>"
_view = "api/view/<str:bucket>/<step:step>"

# Everything about one data directory: at the top for ROLLOUTS_DATA_DIR, and under
# runs/<run>/ for each of ROLLOUTS_DATA_DIRS (names "rollouts:run:<name>", with `run`).
data_dir_patterns = [
    path("", pages.index, name="index"),
    path("api/jsonl/subdirs", views.api_subdirs, name="api-subdirs"),
    path("api/jsonl/<str:subdir>/steps", views.api_steps, name="api-steps"),
    path(_step, views.api_file, name="api-file"),
    path(f"{_step}/samples", views.api_samples, name="api-samples"),
    path(f"{_step}/sample/<int:position>", views.api_sample, name="api-sample"),
    path(f"{_step}/columns", views.api_columns, name="api-columns"),
    path(f"{_step}/stats", views.api_stats, name="api-stats"),
    path(f"{_step}/group/<int:group>", insight.api_group, name="api-group"),
    path("api/jsonl/<str:subdir>/trends", insight.api_trends, name="api-trends"),
    path("api/jsonl/<str:subdir>/poll", insight.api_poll, name="api-poll"),
    path(_view, pages.api_view_step, name="api-view-step"),
    path(f"{_view}/sample/<int:position>", pages.api_view_sample, name="api-view-sample"),
    path("<str:bucket>/", pages.bucket_page, name="bucket"),
    path("<str:bucket>/trends/", insight.trends_page, name="trends"),
    path("<str:bucket>/<step:step>/stats/", insight.step_stats_page, name="step-stats"),
    path("<str:bucket>/<step:step>/group/<int:group>/", insight.group_page, name="group"),
    path("<str:bucket>/<step:step>/", pages.step_page, name="step"),
    path("<str:bucket>/<step:step>/sample/<int:position>/", pages.sample_page, name="sample"),
]

urlpatterns = [
    path("runs/", pages.runs_page, name="runs"),
    path("runs/<str:run>/", include((data_dir_patterns, "run"))),
    path("api/cache/stats", views.api_cache_stats, name="api-cache-stats"),
    path("api/cache/clear", views.api_cache_clear, name="api-cache-clear"),
    *[p for p in data_dir_patterns if not str(p.pattern).startswith("<str:bucket>")],
    # Anything else under api/ answers in the API's own error shape, not an HTML 404 page.
    path("api/<path:rest>", views.api_not_found, name="api-not-found"),
    *[p for p in data_dir_patterns if str(p.pattern).startswith("<str:bucket>")],
]
