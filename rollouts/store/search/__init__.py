"""Searching a bucket's steps for a pattern (RE2, linear time): the query and its prefilter,
the scan of a step in blocks, slices within a budget, the next or previous match of a sample."""

from .bucket import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    ORDERS,
    AnswerCheck,
    Cursor,
    Hit,
    SearchResult,
    StepRange,
    adjacent_match,
    match_spans,
    search,
)
from .query import FIELD_CHOICES, Query
from .scan import Budget

__all__ = [
    "DEFAULT_LIMIT",
    "FIELD_CHOICES",
    "MAX_LIMIT",
    "ORDERS",
    "AnswerCheck",
    "Budget",
    "Cursor",
    "Hit",
    "Query",
    "SearchResult",
    "StepRange",
    "adjacent_match",
    "match_spans",
    "search",
]
