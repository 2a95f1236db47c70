"""The data directory as buckets of steps, and the one place paths are checked.

Every path handed out is resolved (symlinks followed) and lies inside the resolved data
directory; a step that is a symlink to somewhere else, a `..`, or any name that is not a bare
step number does not exist as far as callers can tell.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .columns import Columns
from .disk import DiskCache, protect, restore_index
from .errors import NotFound, StoreError, Unavailable
from .files import KNOWN_BUCKETS, STEP_FILE, FileIdentity, StepFile, directory_version
from .flags import DEFAULT_RULES, FLAG_BIT, FLAGS, FlagRules, flag_marks, row_flags
from .index import StepIndex
from .jsonio import without_surrogates
from .memory import release_freed_memory
from .ordering import EVERYTHING, Selection, advantages, order_positions, remember
from .shared import SharedRun
from .stats import step_stats

logger = logging.getLogger("rollouts.store")

DEFAULT_BUCKET = "default"


class IndexCache(Protocol):
    """The two calls the store needs from a cache (Django's cache API has both)."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def set(self, key: str, value: Any, timeout: Any = ...) -> None: ...


class DictCache:
    """An unbounded cache for callers without Django (scripts, the terminal UI's tests)."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def set(self, key: str, value: Any, timeout: Any = None) -> None:
        self._data[key] = value


class Catalog:
    """Buckets and steps of one data directory, and their indexes (kept in `cache`)."""

    def __init__(
        self,
        data_dir: Path | str,
        cache: IndexCache | None = None,
        disk: DiskCache | None = None,
    ) -> None:
        self.root = Path(data_dir).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"{data_dir} is not a directory")
        # As pages and JSON show it: a name that is not UTF-8 (read with surrogateescape)
        # would break every page, so its bad bytes show as U+FFFD.
        self.name = without_surrogates(self.root.name)
        self.cache: IndexCache = cache if cache is not None else DictCache()
        protect(self.root)  # for every disk cache of this process, this one's or another's
        if disk is not None and not disk.usable():
            disk = None  # it has said why
        self.disk = disk
        self._build_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._buckets_memo: tuple[tuple, dict[str, Path]] | None = None
        self._listings: dict[str, SharedRun[list[StepFile]]] = {}
        self.flag_rules: FlagRules = DEFAULT_RULES  # the flags' thresholds (`flags.py`)

    # -- catalog -------------------------------------------------------------------------
    def _contained(self, path: Path) -> Path | None:
        """`path` resolved, or None when it leaves the data directory or does not exist."""
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, or a symlink loop
            return None
        return resolved if resolved.is_relative_to(self.root) else None

    def _bucket_dirs(self) -> dict[str, Path]:
        """The buckets' resolved folders, found again only when the data directory, its
        rollout_result/ or a bucket's folder changed (`directory_version`: a folder swapped for
        a link out of the directory is another inode). A data directory removed or made
        unreadable is never an empty `default` bucket: every caller gets the reason (a 503)."""
        try:
            memo = self._buckets_memo
            key = (directory_version(self.root), directory_version(self.root / "rollout_result"))
            if memo is not None and memo[0] == (*key, *map(directory_version, memo[1].values())):
                return memo[1]
            with os.scandir(self.root):
                pass
        except OSError:
            raise Unavailable(
                f"the data directory {self.name!r} is missing or cannot be read"
            ) from None
        found: dict[str, Path] = {}
        for base in (self.root, self.root / "rollout_result"):
            for name in KNOWN_BUCKETS:
                path = self._contained(base / name)
                if path is not None and path.is_dir():
                    found[name] = path
            if found:
                break
        found = found or {DEFAULT_BUCKET: self.root}
        self._buckets_memo = ((*key, *map(directory_version, found.values())), found)
        return found

    def buckets(self) -> list[str]:
        return list(self._bucket_dirs())

    def bucket_dir(self, bucket: str) -> Path:
        path = self._bucket_dirs().get(bucket)
        if path is None:
            raise NotFound(f"no bucket {bucket!r}; this data dir has: {', '.join(self.buckets())}")
        return path

    def steps(self, bucket: str) -> list[StepFile]:
        """Step files of a bucket in numeric order, listed after the call began (`SharedRun`)."""
        shared = self._listings.get(bucket) or self._listings.setdefault(bucket, SharedRun())
        return list(shared.get(lambda: self._list_steps(bucket)))  # a list of the caller's own

    def _list_steps(self, bucket: str) -> list[StepFile]:
        directory = self.bucket_dir(bucket)
        found: list[StepFile] = []
        try:
            entries = os.scandir(directory)
        except OSError:
            raise NotFound(f"bucket {bucket!r} cannot be listed (removed?)") from None
        with entries:
            for entry in entries:
                match = STEP_FILE.match(entry.name)
                if match is None:
                    continue
                if entry.is_symlink():  # only links can leave the (contained) bucket dir
                    path = self._contained(Path(entry.path))
                    if path is None or not path.is_file():
                        continue
                    st = path.stat()
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                else:
                    continue
                found.append(StepFile(int(match.group(1)), entry.name, st.st_size, st.st_mtime_ns))
        return sorted(found, key=lambda s: (s.step, s.filename))

    def step_path(self, bucket: str, filename: str) -> Path:
        directory = self.bucket_dir(bucket)
        if STEP_FILE.match(filename) is None:
            raise NotFound(f"{filename!r} is not a step file (names are <step>.jsonl)")
        path = self._contained(directory / filename)
        if path is None or not path.is_file():
            raise NotFound(f"no step {filename!r} in bucket {bucket!r}")
        return path

    # -- indexes -------------------------------------------------------------------------
    def open_step(self, bucket: str, filename: str, records: int | None = None) -> StepIndex:
        """The step's index, current with the file (built, extended or rebuilt as needed).

        With `records`, a big step's index may come back partly scanned, as soon as it knows
        more than `records` records (`StepIndex.complete` is False meanwhile); the rest is
        scanned on a background thread. Without, the index is always complete.
        """
        path = self.step_path(bucket, filename)
        key = "rollouts.step." + hashlib.sha1(os.fsencode(path), usedforsecurity=False).hexdigest()
        index: StepIndex | None = self.cache.get(key)
        if index is None:
            with self._build_lock(key):  # one build per step, however many requests wait
                index = self.cache.get(key)
                if index is None:
                    name = f"{bucket}/{filename}"
                    index = self._index_from_disk(path, name)
                    if index is None:
                        index = StepIndex.build(path, name, records)
                        if index.complete:
                            release_freed_memory(index.identity.size)  # the scan's reads
                    # Cached before the lock is released: a thread that waited on it must find
                    # this index, not build its own.
                    index.cache_key = key
                    self._account(index, insert=True)
                    if not index.complete:
                        self._finish_in_background(index)
        index = index.refresh()
        if not index.complete and (records is None or records >= len(index)):
            index.finish_scan()
        index.cache_key = key
        self._account(index, insert=True)
        return index

    def _finish_in_background(self, index: StepIndex) -> None:
        def finish() -> None:
            try:
                index.finish_scan()
            except (OSError, StoreError):  # changed or gone: the next request says so
                logger.warning("indexing %s failed", index.name, exc_info=True)
            else:
                release_freed_memory(index.identity.size)  # what the scan's reads left
                self._account(index)

        threading.Thread(target=finish, name=f"scan {index.name}", daemon=True).start()

    def _index_from_disk(self, path: Path, name: str) -> StepIndex | None:
        """The index, columns and statistics the disk cache kept for this very file: a
        restarted viewer then opens and sorts a 1 GB step without reading it."""
        if self.disk is None:
            return None
        try:
            identity = FileIdentity.of(os.stat(path))
        except OSError:
            return None
        cached = self.disk.load(path, identity)
        return restore_index(path, name, identity, cached) if cached is not None else None

    def columns(self, index: StepIndex) -> Columns:
        """The step's columns: from the disk cache, or decoded now (blocks), then kept there."""
        disk = self.disk
        if disk is not None and index.columns is None:
            cached = disk.load(index.path, index.identity)
            if cached is not None and index.adopt_columns(cached.columns, cached.invalid):
                index.stats_memo = ((index.generation, index.columns_rows), cached.stats)
        decoded = not index.columns_ready
        columns = index.ensure_columns()
        self._account(index)
        if decoded and disk is not None:
            self.stats(index)  # computes and saves
        return columns

    def stats(self, index: StepIndex) -> dict[str, Any]:
        """The step's statistics (`stats.step_stats`), computed once per version of the file."""
        columns = self.columns(index)
        with index.lock:
            version = (index.generation, index.columns_rows)
            memo = index.stats_memo
            if memo is not None and memo[0] == version and self.judged_by_rules(memo[1]):
                return memo[1]
            stats = step_stats(columns, index.invalid, self.flag_rules)
            index.stats_memo = (version, stats)
            if self.disk is not None and index.columns_ready:
                self.disk.save(index, columns, stats)
        return stats

    def judged_by_rules(self, stats: dict[str, Any]) -> bool:
        """Whether `stats` (perhaps from the disk cache) flagged with this catalog's rules."""
        return stats.get("flags", {}).get("rules") == self.flag_rules.as_dict()

    def flags_of(self, index: StepIndex, position: int) -> list[dict[str, str]] | None:
        """One sample's flags ({"name", "reason"}), or None while its step's columns are being
        decoded: a sample page never waits for the column pass (`prepare_columns` starts it)."""
        if not index.columns_ready or index.columns is None:
            return None
        stats = self.stats(index)
        return row_flags(index.columns, position, stats["flags"], self.flag_rules)

    def flag_marks(self, index: StepIndex) -> Sequence[int]:
        """Each row's flags as bits (`flags.FLAG_BIT`), built once a version of the step."""
        stats = self.stats(index)
        key = (index.generation, index.columns_rows, "flags", self.flag_rules)
        marks = index.orderings.get(key)
        if marks is None:
            assert index.columns is not None
            marks = flag_marks(index.columns, index.invalid, stats["flags"], self.flag_rules)
            remember(index, key, marks)
            self._account(index)
        return marks

    def flagged_in_order(
        self, index: StepIndex, selection: Selection, ordering: Sequence[int]
    ) -> bytes:
        """Per rank of `ordering` (the selection's), 1 where that sample has the selection's
        flag (any flag, without one), else 0: the next flagged sample is one `find` away (a
        Python loop over a 300,000-sample order costs 0.15 s a page; this, once a version)."""
        marks = self.flag_marks(index)
        key = (index.generation, index.columns_rows, "flagged", selection)
        kept = index.orderings.get(key)
        if kept is not None and len(kept) == len(ordering):
            return kept.tobytes()
        wanted = FLAG_BIT[selection.flag] if selection.flag else (1 << len(FLAGS)) - 1
        table = bytes(1 if value & wanted else 0 for value in range(256))
        by_position = _low_bytes(marks).translate(table)
        if ordering and max(ordering) >= len(by_position):  # a grown file's newest lines
            by_position += bytes(max(ordering) + 1 - len(by_position))
        found = bytes(map(by_position.__getitem__, ordering))
        remember(index, key, array("B", found))
        self._account(index)
        return found

    def ordering(
        self, index: StepIndex, selection: Selection = EVERYTHING, *, wait: bool = True
    ) -> Sequence[int]:
        """Positions of the samples `selection` picks, in its order (`ordering.order_positions`).

        Without `wait`, a step whose columns are not decoded yet answers in file order at once
        (every record, unreadable ones included, as they are not known yet).
        """
        if not index.columns_ready:
            if not wait:
                return range(len(index))
            self.columns(index)  # the disk cache's, or decoded now
        marks = self.flag_marks(index) if selection.flag else None
        result = order_positions(index, selection, marks)
        self._account(index)
        return result

    def advantages(self, index: StepIndex) -> Sequence[float]:
        """Each row's advantage within its group (`stats.group_advantages`; NaN: none)."""
        if not index.columns_ready:
            self.columns(index)
        kept = len(index.orderings)
        result = advantages(index)
        if len(index.orderings) != kept:  # built now: the cache's byte count changed
            self._account(index)
        return result

    def prepare_columns(self, index: StepIndex) -> None:
        """Decode the columns on a background thread, so sorting is ready soon after opening."""
        if index.columns_ready or index.columns_building:
            return
        index.columns_building = True  # a rare double start is harmless: the lock serialises
        threading.Thread(
            target=self._build_columns, args=(index,), name=f"columns {index.name}", daemon=True
        ).start()

    def _build_columns(self, index: StepIndex) -> None:
        try:
            self.columns(index)
        except (OSError, StoreError):
            # The file vanished or changed under us; the next request rebuilds and reports it.
            logger.warning("background indexing of %s failed", index.name, exc_info=True)
        finally:
            index.columns_building = False

    def _account(self, index: StepIndex, *, insert: bool = False) -> None:
        """(Re-)store the index when its size changed, so the cache's byte budget stays true.

        Only `open_step` puts an index in (`insert`): work that finishes in the background
        after the index was evicted or the cache cleared must not bring it back.
        """
        size = index.cache_nbytes()
        if index.accounted_nbytes != size:
            if not insert and self.cache.get(index.cache_key) is not index:
                return
            index.accounted_nbytes = size
            self.cache.set(index.cache_key, index, None)

    def _build_lock(self, key: str) -> threading.Lock:
        with self._locks_guard:
            return self._build_locks.setdefault(key, threading.Lock())


def _low_bytes(marks: Sequence[int]) -> bytes:
    """Each mark as one byte (the FLAGS fit in one): an array of 16-bit marks' low bytes, taken
    by a slice of its memory (`array("B", marks)` converts one by one, 0.1 s for 300,000)."""
    if isinstance(marks, array) and marks.itemsize == 2:
        raw = marks.tobytes()
        return raw[0::2] if sys.byteorder == "little" else raw[1::2]
    return bytes(list(marks))
