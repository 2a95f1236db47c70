"""Per-step line tables, columns and statistics on disk between runs, and the entry format every
reader checks: a private directory, never inside a data directory."""

from .cache import DEFAULT_DIRECTORY_TEXT, DiskCache, default_directory, protect, served_roots
from .entry import restore_index
from .prompts import PromptColumns, prompt_columns_of

__all__ = [
    "DEFAULT_DIRECTORY_TEXT",
    "DiskCache",
    "PromptColumns",
    "default_directory",
    "prompt_columns_of",
    "protect",
    "restore_index",
    "served_roots",
]
