"""A TensorBoard directory's scalars, merged across its event files and kept current.

`refresh()` reads only what is new in each file (`eventfile.py`) and merges it: one series per
tag, one value per step. Several files are one run's (a restarted run starts a new file beside
the old one): when two hold the same tag at the same step, the later write (by wall time) wins,
as a resumed run's value replaces the one it redid. What each file held is kept in the disk
cache, so a restarted viewer reads only what was written since.

An unchanged poll costs about what one file's does, however many files there are: the
directories are `stat`ed (listed again only when one changed), and only the `HOT_FILES` most
recently modified files are checked, the ones writers are appending to. Every `SWEEP_S` seconds
a poll lists everything again and `stat`s every file, so a file written after a long pause is
seen within that time. Answers read one published `ScalarSnapshot` (`snapshot.py`).
"""

from __future__ import annotations

import heapq
import logging
import math
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..disk import DiskCache, protect
from .decode import Scalar
from .discovery import MAX_EVENT_FILES, EventListing, TensorBoardDir, list_event_files
from .entry import KIND, encode_event_file, restore_event_file
from .eventfile import EventFile
from .snapshot import Point, ScalarSnapshot, Series
from .support import INSTALL_HINT, say_missing_once, tensorboard_available

logger = logging.getLogger("rollouts.store")

SAVE_EVERY_S = 10.0  # a growing file's disk entry is rewritten at most this often
SWEEP_S = 10.0  # every file is checked, and the directory listed again, at least this often
HOT_FILES = 4  # the most recently modified files: checked at every poll
CACHE_MIN_BYTES = 4096  # smaller files are read again rather than looked up in the disk cache


# Event files an answer lists in `source.files` (the count is in `files_total`).
FILES_LISTED = 100


class ScalarStore:
    def __init__(
        self, tb: TensorBoardDir, disk: DiskCache | None = None, max_files: int = MAX_EVENT_FILES
    ) -> None:
        self.tb = tb
        protect(tb.root)  # the disk cache never writes inside it
        self.disk = disk if disk is not None and disk.usable() else None
        self.max_files = max_files
        self.files: dict[str, EventFile] = {}
        self.missing_package = False
        self.checked = 0  # files the last refresh looked at (a stat or an open each)
        self._merged: dict[str, Series] = {}  # the published series: never changed in place
        self._snapshot = ScalarSnapshot(0, {}, (), None)
        self._listing: EventListing | None = None
        self._swept = -math.inf  # time.monotonic() of the last sweep
        self._hot: list[EventFile] = []
        self._saved: dict[str, float] = {}
        self._lock = threading.Lock()

    @property
    def version(self) -> int:
        """Grows whenever a scalar came or went (or a file, or what the message says)."""
        return self._snapshot.version

    # -- reading -------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read what was written since the last call; whether anything changed."""
        if not tensorboard_available():
            self.missing_package = True
            say_missing_once()
            return False
        with self._lock:
            now = time.monotonic()
            sweep = now - self._swept >= SWEEP_S
            listing = self._listing
            relisted = sweep or listing is None or not listing.still_holds()
            if relisted or listing is None:  # (None: relisted; said again for the type checker)
                listing = self._listing = list_event_files(self.tb.root, self.max_files)
            if sweep:
                self._swept = now
            rebuild, new = self._apply(listing) if relisted else (False, [])
            fresh, rebuild = self._check(sweep, new, rebuild)
            changed = rebuild or bool(fresh) or any(s.tags for s in new)
            message = self._limit_message(listing)
            if changed or new or message != self._snapshot.message:
                self._publish(rebuild, new, fresh, message)
            for state in fresh + new:
                state.fresh = []  # merged: not kept twice
            if relisted:  # (only a sweep or a listing can find a file changed that is not hot)
                self._hot = self._hottest()
            return changed

    def _apply(self, listing: EventListing) -> tuple[bool, list[EventFile]]:
        """Take the listing's files: (whether one left or now links elsewhere, the new ones)."""
        found = dict(listing.files)
        gone = [name for name in self.files if name not in found]
        for name in gone:  # deleted (or no longer among the newest): its scalars leave
            del self.files[name]
        rebuild, new = bool(gone), []
        for name, path in listing.files:
            known = self.files.get(name)
            if known is not None and str(known.path) == path:
                continue
            rebuild |= known is not None  # a link that now points elsewhere
            state = self.files[name] = EventFile(name, Path(path))
            self._restore(state)
            new.append(state)
        return rebuild, new

    def _check(
        self, sweep: bool, new: list[EventFile], rebuild: bool
    ) -> tuple[list[EventFile], bool]:
        """Refresh the files a poll looks at: the new and hot ones, or all on a sweep."""
        is_new = {id(s) for s in new}
        hot = {id(s) for s in self._hot if self.files.get(s.name) is s} - is_new
        if sweep:  # a `stat` for the files nobody seems to write (`quick`), an open for the rest
            checks = [(s, id(s) not in hot and id(s) not in is_new) for s in self.files.values()]
        else:
            checks = [(s, False) for s in new] + [(s, False) for s in self._hot if id(s) in hot]
        fresh = []
        self.checked = len(checks)
        for state, quick in checks:
            changed, restarted = state.refresh(quick)
            if changed:  # (a file just restored from the disk cache is not written back)
                self._save(state, first=id(state) in is_new)
            if id(state) in is_new:
                continue  # merged whole below
            rebuild |= restarted
            if changed:
                fresh.append(state)
        return fresh, rebuild

    def _publish(
        self, rebuild: bool, new: list[EventFile], fresh: list[EventFile], message: str | None
    ) -> None:
        if rebuild:
            merged: dict[str, Series] = {}
            copied: set[str] = set()
            self._merge_files(merged, copied, self.files.values())
        else:
            merged, copied = dict(self._merged), set()
            self._merge_files(merged, copied, new)
            for state in fresh:
                self._merge(merged, copied, state.fresh)
        files = tuple(
            {
                "name": state.name,
                "records": state.records,
                "bytes": state.offset,
                "scalars": state.scalar_count(),
                "error": state.error,
            }
            for state in self.files.values()
        )
        self._merged = merged
        self._snapshot = ScalarSnapshot(self._snapshot.version + 1, merged, files, message)

    def _merge_files(
        self, merged: dict[str, Series], copied: set[str], files: Iterable[EventFile]
    ) -> None:
        for state in files:
            for tag, values in state.tags.items():
                steps, numbers, walls = values.steps, values.values, values.walls
                if tag not in merged:  # the first file with it: built at C speed
                    # (within one file, a step logged twice keeps its later write)
                    merged[tag] = dict(zip(steps, zip(numbers, walls, strict=True), strict=True))
                    copied.add(tag)
                    continue
                scalars = zip([tag] * len(steps), steps, numbers, walls, strict=True)
                self._merge(merged, copied, scalars)

    @staticmethod
    def _merge(merged: dict[str, Series], copied: set[str], scalars: Iterable[Scalar]) -> None:
        for tag, step, value, wall in scalars:
            series = merged.get(tag)
            if series is None or tag not in copied:  # the published one is never changed
                series = merged[tag] = dict(series or {})
                copied.add(tag)
            known = series.get(step)
            if known is None or wall >= known[1]:
                series[step] = (value, wall)

    def _hottest(self) -> list[EventFile]:
        """The files a poll checks: the most recently modified, and any read refused."""
        states = self.files.values()
        hot = heapq.nlargest(
            HOT_FILES, states, key=lambda s: s.identity.mtime_ns if s.identity else -1
        )
        return hot + [s for s in states if s.pending and s not in hot]

    def _limit_message(self, listing: EventListing) -> str | None:
        if listing.found <= len(listing.files):
            return None
        return (
            f"Read the newest {len(listing.files):,} of {listing.found:,} event files"
            f" (at most {self.max_files:,} are read: those whose writer started last)"
        )

    def _restore(self, state: EventFile) -> None:
        if self.disk is None or not self._worth_caching(state):
            return
        blob = self.disk.load_blob(state.path, KIND)
        if blob is None:
            return
        why = restore_event_file(state, blob)
        if why is not None:
            # `state` is untouched: the file is read from the start.
            logger.info("reading %s again: its disk cache entry is unusable (%s)", state.name, why)

    @staticmethod
    def _worth_caching(state: EventFile) -> bool:
        """Whether the file is big enough for its disk entry to be cheaper than reading it."""
        try:
            return os.stat(state.path).st_size >= CACHE_MIN_BYTES
        except OSError:
            return False

    def _save(self, state: EventFile, first: bool) -> None:
        if self.disk is None or state.offset < CACHE_MIN_BYTES:
            return
        now = time.monotonic()
        if not first and now - self._saved.get(state.name, 0.0) < SAVE_EVERY_S:
            return
        blob = encode_event_file(state)
        if blob is not None:
            self._saved[state.name] = now
            self.disk.save_blob(state.path, KIND, blob)

    # -- answers -------------------------------------------------------------------------
    def snapshot(self) -> ScalarSnapshot:
        """The scalars as last published: read an answer from one snapshot, never two."""
        return self._snapshot

    def tag_names(self) -> list[str]:
        return self._snapshot.tag_names()

    def points(self, tag: str) -> list[Point]:
        """The tag's points in step order (one per step)."""
        return self._snapshot.points(tag)

    def tags(self) -> list[dict[str, Any]]:
        return self._snapshot.tags()

    def values_at(self, tag: str) -> dict[int, float]:
        """The tag's value by step (a copy: the reader may add to it meanwhile)."""
        return self._snapshot.values_at(tag)

    def source(self, snapshot: ScalarSnapshot | None = None) -> dict[str, Any]:
        """What was found and read, as pages and the API say it (no absolute path). `files`
        lists at most FILES_LISTED (those with an error first, then the newest): every poll of
        a directory of 10,000 files would otherwise carry a megabyte of them."""
        snap = self._snapshot if snapshot is None else snapshot
        said = [INSTALL_HINT if self.missing_package else None, snap.message]
        broken = [f for f in snap.files if f.get("error")]
        rest = [f for f in snap.files if not f.get("error")]
        listed = (broken + rest[max(0, len(rest) - FILES_LISTED + len(broken)) :])[:FILES_LISTED]
        return {
            "found": True,
            "directory": self.tb.shown,
            "found_by": self.tb.origin,
            "files": listed,
            "files_total": len(snap.files),
            "version": snap.version,
            "message": "; ".join(m for m in said if m) or None,
        }

    def records_read(self) -> int:
        """Records this process read from the files (not from the disk cache), in all."""
        with self._lock:
            return sum(state.records_read for state in self.files.values())
