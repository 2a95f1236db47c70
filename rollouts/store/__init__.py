"""Plain-Python data layer: no Django imports here, so the terminal UI and scripts share it."""

from .catalog import DEFAULT_BUCKET, Catalog, DictCache, IndexCache
from .columns import CATEGORICAL_KEYS, Columns
from .errors import BadRequest, NotFound, StoreError, Unavailable, UnreadableLine
from .files import (
    STEP_FILE,
    FileIdentity,
    StepFile,
    find_runs,
    runs_of,
    step_filename,
    step_name,
)
from .index import StepIndex
from .jsonio import decode_line, dumps_strict, finite_or_none, line_as_json
from .lines import Sample
from .ordering import EVERYTHING, Selection, ValueRange, order_positions, rank_of

__all__ = [
    "CATEGORICAL_KEYS",
    "DEFAULT_BUCKET",
    "EVERYTHING",
    "STEP_FILE",
    "BadRequest",
    "Catalog",
    "Columns",
    "DictCache",
    "FileIdentity",
    "IndexCache",
    "NotFound",
    "Sample",
    "Selection",
    "StepFile",
    "StepIndex",
    "StoreError",
    "Unavailable",
    "UnreadableLine",
    "ValueRange",
    "decode_line",
    "dumps_strict",
    "find_runs",
    "finite_or_none",
    "line_as_json",
    "order_positions",
    "rank_of",
    "runs_of",
    "step_filename",
    "step_name",
]
