"""What a request needs beside the store: which run it reads (`runs`), the URLs it carries
(`links`), what its query string asks for (`query`), who may see it (`access`), the Host guard
(`hosts`), the JSON answer shapes (`responses`), a run's TensorBoard scalars (`scalars`), the
tokenizer and the hosted training's questions (`training`). Views, commands, checks and
template tags import this face, never a module inside it."""

from .access import DENIED_MESSAGE, denied_page, is_allowed
from .hosts import HostCheckMiddleware
from .links import app_url, sample_url, step_entries, step_url, url_maker
from .picker import PickerRows, picker_rows
from .query import int_param, query_suffix, selection_of
from .responses import (
    JSON_TYPE,
    error_response,
    json_response,
    status_of,
    stream_object,
    strip_head_body,
    with_raw,
)
from .runs import (
    bind_run,
    catalog_of,
    current_run,
    data_dir_of,
    get_catalog,
    gone_runs,
    has_runs,
    history_of,
    index_cache,
    listed_runs,
    overlay_runs,
    run_folder,
)
from .scalars import (
    OFF_VALUES,
    absent_source,
    bucket_reading,
    configured_dir,
    reference_lines,
    rule_scalars,
    scalars_state,
    store_for,
    tensorboard_flag_problem,
    trend_scalars,
    with_scalars_version,
    with_update_rules,
)
from .tokenizer import INSTALL_TOKENS, tokenizer_problem, tokenizer_state
from .training import may_train, training_hosted

__all__ = [
    "DENIED_MESSAGE",
    "INSTALL_TOKENS",
    "JSON_TYPE",
    "OFF_VALUES",
    "HostCheckMiddleware",
    "PickerRows",
    "absent_source",
    "app_url",
    "bind_run",
    "bucket_reading",
    "catalog_of",
    "configured_dir",
    "current_run",
    "data_dir_of",
    "denied_page",
    "error_response",
    "get_catalog",
    "gone_runs",
    "has_runs",
    "history_of",
    "index_cache",
    "int_param",
    "is_allowed",
    "json_response",
    "listed_runs",
    "may_train",
    "overlay_runs",
    "picker_rows",
    "query_suffix",
    "reference_lines",
    "rule_scalars",
    "run_folder",
    "sample_url",
    "scalars_state",
    "selection_of",
    "status_of",
    "step_entries",
    "step_url",
    "store_for",
    "stream_object",
    "strip_head_body",
    "tensorboard_flag_problem",
    "tokenizer_problem",
    "tokenizer_state",
    "training_hosted",
    "trend_scalars",
    "url_maker",
    "with_raw",
    "with_scalars_version",
    "with_update_rules",
]
