"""Per-step scalar columns and statistics on disk, so a restarted viewer has its trends at once.

One small file per step file, named by a hash of the step's resolved path and holding the
file identity it was computed from (device, inode, size, mtime). An entry whose identity no
longer matches the file is a miss, so a grown or rewritten step is recomputed, and a step file
never has more than one entry. The directory is ours: it is never inside a data directory,
and a file that cannot be read or decoded is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from .columns import Columns
from .files import FileIdentity

logger = logging.getLogger("rollouts.store")

FORMAT_VERSION = 1
APP_DIR_NAME = "relax-rollout-viewer"


_unwritable: set[str] = set()


def default_directory() -> Path | None:
    """`$XDG_CACHE_HOME/relax-rollout-viewer/steps`, or under `~/.cache`; None without a home."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME and no passwd entry (some containers)
            return None
    return Path(base) / APP_DIR_NAME / "steps"


class _Entry(msgspec.Struct, frozen=True):
    version: int
    identity: tuple[int, int, int, int]
    rows: int
    numeric: dict[str, bytes]
    categorical: dict[str, bytes]
    categories: dict[str, list[str]]
    labels: list[str | None]
    keys: list[str]
    invalid: dict[int, str]
    stats: dict[str, Any]


class _Head(msgspec.Struct, frozen=True):
    """An entry without its columns: msgspec skips them undecoded, so reading stays cheap."""

    version: int
    identity: tuple[int, int, int, int]
    stats: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CachedStep:
    """What the disk held for one step: its columns, unreadable lines and statistics."""

    columns: Columns
    invalid: dict[int, str]
    stats: dict[str, Any]


class DiskCache:
    """Entries in `directory` (created on first write, private to this user)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory).expanduser()
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = msgspec.msgpack.Decoder(_Entry)
        self._head_decoder = msgspec.msgpack.Decoder(_Head)

    def refuses(self, data_root: Path) -> str | None:
        """Why this cache may not serve `data_root` (it lies inside it), or None."""
        mine = self.directory.resolve()
        if mine.is_relative_to(data_root.resolve()):
            return "the disk cache directory is inside the data directory, which is never written"
        return None

    def _file(self, path: Path) -> Path:
        name = hashlib.sha1(os.fsencode(path), usedforsecurity=False).hexdigest()
        return self.directory / f"{name}.msgpack"

    def load_stats(self, path: Path, identity: FileIdentity) -> dict[str, Any] | None:
        """Just the statistics of the step (what the trends need), or None."""
        entry = self._read(path, identity, self._head_decoder)
        return entry.stats if entry is not None else None

    def _read(self, path: Path, identity: FileIdentity, decoder: msgspec.msgpack.Decoder) -> Any:
        try:
            blob = self._file(path).read_bytes()
        except OSError:
            return None
        try:
            entry = decoder.decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError):
            logger.warning("ignoring an unreadable disk cache entry for %s", path.name)
            return None
        if entry.version != FORMAT_VERSION or entry.identity != identity.as_tuple():
            return None
        return entry

    def load(self, path: Path, identity: FileIdentity) -> CachedStep | None:
        entry = self._read(path, identity, self._decoder)
        if entry is None:
            return None
        columns = Columns()
        columns.rows = entry.rows
        for name, raw in entry.numeric.items():
            columns.numeric[name] = array("d", raw)
        for name, raw in entry.categorical.items():
            columns.categorical[name] = array("i", raw)
        columns.categories = {name: list(values) for name, values in entry.categories.items()}
        columns.restore_codes()
        columns.labels = list(entry.labels)
        columns.keys = dict.fromkeys(entry.keys)
        if any(len(col) != entry.rows for col in (*columns.numeric.values(), columns.labels)):
            return None  # written by a buggy or foreign version: recompute
        return CachedStep(columns, dict(entry.invalid), entry.stats)

    def save(
        self,
        path: Path,
        identity: FileIdentity,
        columns: Columns,
        invalid: dict[int, str],
        stats: dict[str, Any],
    ) -> None:
        """Write the entry atomically; a failure (disk full, read-only) is logged, not raised."""
        entry = _Entry(
            version=FORMAT_VERSION,
            identity=identity.as_tuple(),
            rows=columns.rows,
            numeric={name: col.tobytes() for name, col in columns.numeric.items()},
            categorical={name: col.tobytes() for name, col in columns.categorical.items()},
            categories=columns.categories,
            labels=columns.labels,
            keys=list(columns.keys),
            invalid=invalid,
            stats=stats,
        )
        target = self._file(path)
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(self._encoder.encode(entry))
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            if str(self.directory) not in _unwritable:  # once per directory and process
                _unwritable.add(str(self.directory))
                logger.warning(
                    "the disk cache %s cannot be written (%s); statistics are kept in memory only",
                    self.directory,
                    exc,
                )
