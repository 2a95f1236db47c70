"""A TensorBoard directory's scalars, merged across its event files and kept current.

`refresh()` lists the event files (a `stat` each when nothing changed), reads only what is new
in each (`eventfile.py`), and merges it: one series per tag, one value per step. Several files
are one run's (a restarted run starts a new file beside the old one): when two hold the same
tag at the same step, the later write (by wall time) wins, as a resumed run's value replaces
the one it redid. What each file held is kept in the disk cache, so a restarted viewer reads
only what was written since.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from ..diskcache import DiskCache, protect
from .discovery import TensorBoardDir, event_files
from .entry import KIND, encode_event_file, restore_event_file
from .eventfile import EventFile
from .support import INSTALL_HINT, say_missing_once, tensorboard_available

logger = logging.getLogger("rollouts.store")

SAVE_EVERY_S = 10.0  # a growing file's disk entry is rewritten at most this often

Point = tuple[int, float, float]  # step, value, wall time


class ScalarStore:
    def __init__(self, tb: TensorBoardDir, disk: DiskCache | None = None) -> None:
        self.tb = tb
        protect(tb.root)  # the disk cache never writes inside it
        self.disk = disk if disk is not None and disk.usable() else None
        self.files: dict[str, EventFile] = {}
        self.version = 0  # grows whenever a scalar came or went
        self.missing_package = False
        self._merged: dict[str, dict[int, tuple[float, float]]] = {}
        self._sorted: dict[str, list[Point]] = {}
        self._saved: dict[str, float] = {}
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------------
    def refresh(self) -> bool:
        """Read what was written since the last call; whether any scalar came or went."""
        if not tensorboard_available():
            self.missing_package = True
            say_missing_once()
            return False
        with self._lock:
            found = event_files(self.tb.root)
            names = {name for name, _ in found}
            rebuild = bool(set(self.files) - names)
            for name in set(self.files) - names:  # deleted: its scalars leave the curves
                del self.files[name]
            fresh: list[EventFile] = []
            new: list[EventFile] = []
            for name, path in found:
                known = self.files.get(name)
                is_new = known is None or known.path != path
                rebuild |= known is not None and is_new  # a link that now points elsewhere
                state = known if known is not None and not is_new else EventFile(name, path)
                if is_new:
                    self.files[name] = state
                    self._restore(state)
                    new.append(state)
                changed, restarted = state.refresh()
                rebuild |= restarted and not is_new
                if changed and not is_new:
                    fresh.append(state)
                if changed:  # (a file just restored from the disk cache is not written back)
                    self._save(state, first=is_new)
            if rebuild:
                self._merged = {}
                self._merge_files(self.files.values())
            else:
                self._merge_files(new)
                for state in fresh:
                    self._merge(state.fresh)
            for state in self.files.values():
                state.fresh = []  # merged: not kept twice
            changed_any = rebuild or bool(fresh) or any(s.tags for s in new)
            if changed_any:
                self.version += 1
                self._sorted = {}
            return changed_any

    def _merge_files(self, files: Iterable[EventFile]) -> None:
        for state in files:
            for tag, values in state.tags.items():
                steps, numbers, walls = values.steps, values.values, values.walls
                if tag not in self._merged:  # the first file with it: built at C speed
                    # (within one file, a step logged twice keeps its later write)
                    self._merged[tag] = dict(
                        zip(steps, zip(numbers, walls, strict=True), strict=True)
                    )
                    continue
                self._merge(zip([tag] * len(steps), steps, numbers, walls, strict=True))

    def _merge(self, scalars: Iterable[tuple[str, int, float, float]]) -> None:
        merged = self._merged
        for tag, step, value, wall in scalars:
            series = merged.get(tag)
            if series is None:
                series = merged[tag] = {}
            known = series.get(step)
            if known is None or wall >= known[1]:
                series[step] = (value, wall)

    def _restore(self, state: EventFile) -> None:
        if self.disk is None:
            return
        blob = self.disk.load_blob(state.path, KIND)
        if blob is None:
            return
        why = restore_event_file(state, blob)
        if why is not None:
            # `state` is untouched: the file is read from the start.
            logger.info("reading %s again: its disk cache entry is unusable (%s)", state.name, why)

    def _save(self, state: EventFile, first: bool) -> None:
        if self.disk is None:
            return
        now = time.monotonic()
        if not first and now - self._saved.get(state.name, 0.0) < SAVE_EVERY_S:
            return
        blob = encode_event_file(state)
        if blob is not None:
            self._saved[state.name] = now
            self.disk.save_blob(state.path, KIND, blob)

    # -- answers -------------------------------------------------------------------------
    def tag_names(self) -> list[str]:
        with self._lock:
            return sorted(self._merged)

    def points(self, tag: str) -> list[Point]:
        """The tag's points in step order (one per step)."""
        with self._lock:
            cached = self._sorted.get(tag)
            if cached is None:
                series = self._merged.get(tag, {})
                cached = self._sorted[tag] = [(s, v, w) for s, (v, w) in sorted(series.items())]
            return cached

    def tags(self) -> list[dict[str, Any]]:
        out = []
        for tag in self.tag_names():
            points = self.points(tag)
            out.append(
                {
                    "tag": tag,
                    "points": len(points),
                    "first_step": points[0][0] if points else None,
                    "last_step": points[-1][0] if points else None,
                }
            )
        return out

    def values_at(self, tag: str) -> dict[int, float]:
        """The tag's value by step (a copy: the reader may add to it meanwhile)."""
        with self._lock:
            return {step: value for step, (value, _) in self._merged.get(tag, {}).items()}

    def source(self) -> dict[str, Any]:
        """What was found and read, as pages and the API say it (no absolute path)."""
        with self._lock:
            files = [
                {
                    "name": state.name,
                    "records": state.records,
                    "bytes": state.offset,
                    "scalars": state.scalar_count(),
                    "error": state.error,
                }
                for state in self.files.values()
            ]
        return {
            "found": True,
            "directory": self.tb.shown,
            "found_by": self.tb.origin,
            "files": files,
            "version": self.version,
            "message": INSTALL_HINT if self.missing_package else None,
        }

    def records_read(self) -> int:
        """Records this process read from the files (not from the disk cache), in all."""
        with self._lock:
            return sum(state.records_read for state in self.files.values())
