"""Plain-Python data layer: no Django imports here, so the terminal UI and scripts share it."""

from .cards import metric_card, metric_cards
from .catalog import DEFAULT_BUCKET, Catalog, DictCache, IndexCache
from .columns import CATEGORICAL_KEYS, Columns
from .compare import SOLVED_ABOVE, compare_steps, first_row_of
from .errors import (
    BadRequest,
    ForbiddenFile,
    NotFound,
    StoreError,
    Unavailable,
    UnreadableLine,
    unreadable,
)
from .files import (
    STEP_FILE,
    FileIdentity,
    StepFile,
    find_runs,
    runs_of,
    step_filename,
    step_name,
)
from .history import History, Point, Snapshot
from .index import StepIndex
from .jsonio import (
    decode_line,
    dumps_strict,
    finite_or_none,
    line_as_json,
    without_surrogates,
    without_wide_ints,
)
from .lineage import Appearance, Appearances, SkippedStep, find_prompt, locate_prompt
from .lines import Sample
from .memory import PAGE_RELEASE_BYTES, release_freed_memory
from .ordering import EVERYTHING, Selection, ValueRange, order_positions, rank_of
from .previews import line_values, prompt_previews
from .promptid import NO_PROMPT, format_prompt_id, parse_prompt_id, prompt_id_of_value
from .reading import (
    EV_MIN,
    EV_WINDOW,
    KL_MAX,
    Metric,
    convergence,
    curves,
    series,
    trend_reading,
    update_rules,
)
from .stats import (
    ADVANTAGE,
    OUTLIER_FENCE,
    SUCCESS_ABOVE,
    TRUNCATED,
    clipped_histogram,
    clipped_histograms,
    group_rows,
    group_summary,
    group_table,
    has_advantage,
)

__all__ = [
    "ADVANTAGE",
    "CATEGORICAL_KEYS",
    "DEFAULT_BUCKET",
    "EVERYTHING",
    "EV_MIN",
    "EV_WINDOW",
    "KL_MAX",
    "NO_PROMPT",
    "OUTLIER_FENCE",
    "PAGE_RELEASE_BYTES",
    "SOLVED_ABOVE",
    "STEP_FILE",
    "SUCCESS_ABOVE",
    "TRUNCATED",
    "Appearance",
    "Appearances",
    "BadRequest",
    "Catalog",
    "Columns",
    "DictCache",
    "FileIdentity",
    "ForbiddenFile",
    "History",
    "IndexCache",
    "Metric",
    "NotFound",
    "Point",
    "Sample",
    "Selection",
    "SkippedStep",
    "Snapshot",
    "StepFile",
    "StepIndex",
    "StoreError",
    "Unavailable",
    "UnreadableLine",
    "ValueRange",
    "clipped_histogram",
    "clipped_histograms",
    "compare_steps",
    "convergence",
    "curves",
    "decode_line",
    "dumps_strict",
    "find_prompt",
    "find_runs",
    "finite_or_none",
    "first_row_of",
    "format_prompt_id",
    "group_rows",
    "group_summary",
    "group_table",
    "has_advantage",
    "line_as_json",
    "line_values",
    "locate_prompt",
    "metric_card",
    "metric_cards",
    "order_positions",
    "parse_prompt_id",
    "prompt_id_of_value",
    "prompt_previews",
    "rank_of",
    "release_freed_memory",
    "runs_of",
    "series",
    "step_filename",
    "step_name",
    "trend_reading",
    "unreadable",
    "update_rules",
    "without_surrogates",
    "without_wide_ints",
]
