"""Plain-Python data layer: no Django imports here, so the terminal UI and scripts share it."""

from .catalog import DEFAULT_BUCKET, STEP_FILE, Catalog, DictCache, StepFile, find_runs
from .columns import Columns
from .errors import BadRequest, NotFound, StoreError, UnreadableLine
from .index import Sample, StepIndex, ValueRange
from .jsonio import decode_line, dumps_strict, finite_or_none, line_as_json

__all__ = [
    "DEFAULT_BUCKET",
    "STEP_FILE",
    "BadRequest",
    "Catalog",
    "Columns",
    "DictCache",
    "NotFound",
    "Sample",
    "StepFile",
    "StepIndex",
    "StoreError",
    "UnreadableLine",
    "ValueRange",
    "decode_line",
    "dumps_strict",
    "find_runs",
    "finite_or_none",
    "line_as_json",
]
