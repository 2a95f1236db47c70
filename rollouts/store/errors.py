"""Errors the store raises; the web layer maps each to one HTTP status."""

from __future__ import annotations


class StoreError(Exception):
    """Base class. The message is safe to show to a user: it never holds an absolute path."""


class NotFound(StoreError):
    """An unknown bucket, step or sample, or a path that leaves the data directory."""


class BadRequest(StoreError):
    """A parameter the store cannot act on (unknown sort column, bad order, ...)."""


class Unavailable(StoreError):
    """The data directory itself is missing or cannot be listed (503, with this reason)."""


class UnreadableLine(StoreError):
    """A line that is not a JSON object even after the lenient fallback."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line} cannot be read: {reason}")
        self.line = line
        self.reason = reason
