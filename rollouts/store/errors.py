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


class UnreadableFile(StoreError):
    """A step file the server cannot read for a reason of the system (an I/O error...): 503.

    Built by `unreadable`, so the message names the step as pages do, never its path (and
    takes one argument, so it survives a trip through a process pool's pickling)."""


class ForbiddenFile(UnreadableFile):
    """A step file the server's user may not read (permission denied): 403. The viewer is up
    and the rest of the bucket answers; this one file is closed to it, which is no outage."""


def os_reason(exc: OSError) -> str:
    """What went wrong, without the file name an OSError carries: "permission denied"."""
    reason = exc.strerror or type(exc).__name__
    return reason[:1].lower() + reason[1:]


def unreadable(name: str, exc: OSError) -> StoreError:
    """The store's error for an OSError on step `name` ("train/8.jsonl")."""
    if isinstance(exc, FileNotFoundError):
        return NotFound(f"step {name} no longer exists")
    if isinstance(exc, PermissionError):
        return ForbiddenFile(f"{name} cannot be read: {os_reason(exc)}")
    return UnreadableFile(f"{name} cannot be read: {os_reason(exc)}")


class StepChanged(StoreError):
    """The step file was rewritten or truncated while being read: what was read is stale."""
