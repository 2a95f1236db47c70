"""Every URL the app answers, each to its view: a data directory's pages and API (at the top,
and again under runs/<name>/ for each named run), the hosted training run, and the cache."""

from __future__ import annotations

from django.urls import include, path, register_converter

from . import (
    api,
    navigation,
    runpicker,
    sample_tokens,
    samples,
    stats,
    table,
    training,
    training_page,
    trends,
)
from . import compare as compare_views
from . import lineage as lineage_views
from . import scalars as scalar_views
from . import search as search_views


class StepConverter:
    """A step as its file names it: digits, kept as text so `007.jsonl` stays reachable."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str | int) -> str:
        return str(value)


register_converter(StepConverter, "step")

_step = "api/jsonl/<str:bucket>/file/<str:filename>"
_view = "api/view/<str:bucket>/<step:step>"

# Everything about one data directory: at the top for ROLLOUTS_DATA_DIR, and under
# runs/<run>/ for each of ROLLOUTS_DATA_DIRS (names "rollouts:run:<name>", with `run`).
data_dir_patterns = [
    path("", navigation.index, name="index"),
    path("api/jsonl/subdirs", api.api_subdirs, name="api-subdirs"),
    path("api/jsonl/<str:bucket>/steps", api.api_steps, name="api-steps"),
    path(_step, api.api_file, name="api-file"),
    path(f"{_step}/samples", api.api_samples, name="api-samples"),
    path(f"{_step}/sample/<int:position>", api.api_sample, name="api-sample"),
    path(f"{_step}/columns", api.api_columns, name="api-columns"),
    path(f"{_step}/stats", api.api_stats, name="api-stats"),
    path(f"{_step}/group/<int:group>", stats.api_group, name="api-group"),
    path(f"{_step}/table", table.api_table, name="api-table"),
    path("api/jsonl/<str:bucket>/trends", trends.api_trends, name="api-trends"),
    path("api/jsonl/<str:bucket>/poll", trends.api_poll, name="api-poll"),
    path("api/jsonl/<str:bucket>/search", search_views.api_search, name="api-search"),
    path(_view, samples.api_view_step, name="api-view-step"),
    path(f"{_view}/sample/<int:position>", samples.api_view_sample, name="api-view-sample"),
    # The run's TensorBoard scalars.
    path("api/scalars", scalar_views.api_scalars, name="api-scalars"),
    # A prompt across training, and two steps compared.
    path(
        "api/jsonl/<str:bucket>/prompt/<str:prompt_id>",
        lineage_views.api_prompt,
        name="api-prompt",
    ),
    path("api/jsonl/<str:bucket>/compare", compare_views.api_compare, name="api-compare"),
    # Anything else under api/ answers in the API's own error shape, not an HTML 404 page.
    path("api/<path:rest>", api.api_not_found, name="api-not-found"),
    path("<str:bucket>/", navigation.bucket_page, name="bucket"),
    path("<str:bucket>/trends/", trends.trends_page, name="trends"),
    path("<str:bucket>/prompt/<str:prompt_id>/", lineage_views.prompt_page, name="prompt"),
    path("<str:bucket>/compare/", compare_views.compare_page, name="compare"),
    path("<str:bucket>/search/", search_views.search_page, name="search"),
    path("<str:bucket>/<step:step>/stats/", stats.step_stats_page, name="step-stats"),
    path("<str:bucket>/<step:step>/group/<int:group>/", stats.group_page, name="group"),
    path("<str:bucket>/<step:step>/table/", table.table_page, name="step-table"),
    path("<str:bucket>/<step:step>/", samples.step_page, name="step"),
    path("<str:bucket>/<step:step>/sample/<int:position>/", samples.sample_page, name="sample"),
    path(
        "<str:bucket>/<step:step>/sample/<int:position>/tokens/",
        sample_tokens.sample_tokens,
        name="sample-tokens",
    ),
    # Any other address in a bucket (a step or sample that is not a number): the viewer's page.
    path("<str:bucket>/<path:rest>", navigation.page_not_found, name="not-found"),
]

# The hosted training run (404 unless ROLLOUTS_TRAIN_SPEC is set); before the data dir's
# patterns, whose api/<path> and <bucket>/ would take these addresses.
training_patterns = [
    path("api/train/schema", training.api_train_schema, name="api-train-schema"),
    path("api/train/state", training.api_train_state, name="api-train-state"),
    path("api/train/start", training.api_train_start, name="api-train-start"),
    path("api/train/pause", training.api_train_pause, name="api-train-pause"),
    path("api/train/resume", training.api_train_resume, name="api-train-resume"),
    path("api/train/stop", training.api_train_stop, name="api-train-stop"),
]

urlpatterns = [
    *training_patterns,
    path("runs/", navigation.runs_page, name="runs"),
    path("api/runs", runpicker.api_runs, name="api-runs"),
    path("training/", training_page.training_page, name="training"),
    path("runs/<str:run>/", include((data_dir_patterns, "run"))),
    path("api/cache/stats", api.api_cache_stats, name="api-cache-stats"),
    path("api/cache/clear", api.api_cache_clear, name="api-cache-clear"),
    *data_dir_patterns,
]
