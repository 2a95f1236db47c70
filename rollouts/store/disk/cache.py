"""Per-step scalar columns and statistics on disk, so a restarted viewer has its trends at once.

One small file per step file, named by a hash of the step's resolved path and holding the
file identity it was computed from (device, inode, size, mtime). An entry whose identity no
longer matches the file is a miss, so a grown or rewritten step is recomputed, and a step file
never has more than one entry (`diskentry.py` has the format and its checks).

What the disk says is believed only when nobody else could have written it: the directory must
be ours and writable by nobody else, and so must every directory above it that could rename it
away (unless sticky, like /tmp); an entry file must be ours and private too. Otherwise the cache
is not used (one warning says why). A data directory is never written: before every read and
write, the directory is resolved afresh and opened without following links, and where that
descriptor really points is checked against every data directory this process serves, so a
cache directory swapped for a link into one after start-up is refused, not written through.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..columns import Columns
from ..files import FileIdentity
from ..index import StepIndex
from .entry import CachedStep, decode_entry, decode_stats, encode_entry
from .lock import UNLOCKED, EntryLock, try_lock
from .prompts import PromptColumns, decode_prompt_columns

logger = logging.getLogger("rollouts.store")

APP_DIR_NAME = "relax-rollout-viewer"
# What the documentation (--help and docs/reference/cli.md) calls the default directory.
DEFAULT_DIRECTORY_TEXT = "~/.cache/relax-rollout-viewer/steps (under $XDG_CACHE_HOME if set)"
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# Every data directory a Catalog serves in this process (resolved): never written, ever.
_served: set[Path] = set()
_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def default_directory() -> Path | None:
    """`$XDG_CACHE_HOME/relax-rollout-viewer/steps`, or under `~/.cache`; None without a home."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME and no passwd entry (some containers)
            return None
    return Path(base) / APP_DIR_NAME / "steps"


def protect(data_root: Path) -> None:
    """Never read or write the disk cache inside `data_root` (a served data directory)."""
    _served.add(Path(data_root).resolve())


def served_roots() -> tuple[str, ...]:
    """The protected data directories, for a process that must protect them too."""
    return tuple(str(root) for root in _served)


_resolved_roots: dict[str, Path] = {}


def _resolved(root: Path | str) -> Path:
    """A protected directory resolved once a process, as `protect` does: a pool process is
    handed every served run's with each step it decodes."""
    key = str(root)
    if not os.path.isabs(key):  # relative to the working directory, which may change
        return Path(key).resolve()
    found = _resolved_roots.get(key)
    if found is None:
        found = _resolved_roots[key] = Path(key).resolve()
    return found


def _warn_once(directory: Path, why: str) -> None:
    with _warned_lock:
        if (str(directory), why) in _warned:
            return
        _warned.add((str(directory), why))
    logger.warning("not using the disk cache %s: %s", directory, why)


def _not_private(st: os.stat_result, what: str) -> str | None:
    """Why a directory or file with this status could hold someone else's writing."""
    if st.st_uid != os.geteuid():
        return f"{what} is owned by uid {st.st_uid}, not by this user ({os.geteuid()})"
    if st.st_mode & _OTHERS_WRITE:
        return f"{what} is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _untrusted(resolved: Path) -> str | None:
    why = _ancestor_problem(resolved)
    if why is not None:
        return why
    try:
        st = os.stat(resolved)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    return _not_private(st, "it")


def _ancestor_problem(directory: Path) -> str | None:
    """Why someone else could swap `directory` (or a parent of it) for their own."""
    me = os.geteuid()
    for parent in directory.parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue  # not there yet: we create it, private
        if st.st_uid not in (me, 0):
            return f"{parent} is owned by uid {st.st_uid}, who could replace what is inside"
        if st.st_mode & _OTHERS_WRITE and not st.st_mode & stat.S_ISVTX:
            return f"{parent} is writable by group or others and not sticky"
    return None


class DiskCache:
    """Entries in `directory` (created on first write, private to this user)."""

    def __init__(self, directory: Path | str, protected: Iterable[Path | str] = ()) -> None:
        self.directory = Path(directory).expanduser()
        # Besides every data directory this process serves (`protect`).
        self.protected = {_resolved(p) for p in protected}

    def refuses(self, data_root: Path) -> str | None:
        """Why this cache may not serve `data_root` (it lies inside it), or None."""
        mine = self.directory.resolve()
        if mine.is_relative_to(data_root.resolve()):
            return "the disk cache directory is inside the data directory, which is never written"
        return None

    def problem(self) -> str | None:
        """Why the cache cannot be used right now (inside a data dir, not private), or None.

        A directory that does not exist yet is fine: it is created private on first write.
        """
        try:
            resolved = self.directory.resolve()
        except (OSError, RuntimeError):
            return "its path cannot be resolved"
        return self._inside_data(resolved) or _untrusted(resolved)

    def untrusted(self) -> str | None:
        """Why someone else could write in the directory (its owner, its mode), or None."""
        try:
            return _untrusted(self.directory.resolve())
        except (OSError, RuntimeError):
            return "its path cannot be resolved"

    def usable(self) -> bool:
        """Whether the cache can be used now; when not, a warning (once a process) says why."""
        why = self.problem()
        if why is not None:
            _warn_once(self.directory, why)
        return why is None

    def _inside_data(self, path: Path) -> str | None:
        # Whether `path` or a parent of it is a data directory: a lookup per parent, not a
        # comparison with each of the (with a folder of runs, a thousand) data directories.
        ancestors = {path, *path.parents}
        if not ancestors.isdisjoint(_served) or not ancestors.isdisjoint(self.protected):
            return "it is inside a data directory, which the viewer never writes"
        return None

    def _open_directory(self, create: bool) -> int | None:
        """A descriptor of the checked directory, or None (a miss; a warning when refused)."""
        if not self.usable():
            return None
        resolved = self.directory.resolve()
        if create:
            try:
                _make_private(resolved)
            except OSError as exc:
                _warn_once(self.directory, f"it cannot be created ({exc.strerror})")
                return None
        try:
            fd = os.open(resolved, _DIR_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            _warn_once(self.directory, f"it cannot be opened ({exc.strerror})")
            return None
        # Checked again through the descriptor: a path component may have been swapped since.
        try:
            real = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # no /proc: the resolved path is the best we know
            real = resolved
        why = self._inside_data(real) or _not_private(os.fstat(fd), "it")
        if why is not None:
            os.close(fd)
            _warn_once(self.directory, why)
            return None
        return fd

    @staticmethod
    def _name(path: Path, kind: str = "") -> str:
        digest = hashlib.sha1(os.fsencode(path), usedforsecurity=False).hexdigest()
        return f"{kind}-{digest}.msgpack" if kind else f"{digest}.msgpack"

    def _read(self, path: Path, kind: str = "") -> bytes | None:
        directory = self._open_directory(create=False)
        if directory is None:
            return None
        try:
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(self._name(path, kind), flags, dir_fd=directory)
        except OSError:
            return None
        finally:
            os.close(directory)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or _not_private(st, "the entry"):
                return None
            try:
                return f.read()
            except OSError:
                return None

    def load_stats(self, path: Path, identity: FileIdentity) -> dict[str, Any] | None:
        """Just the statistics of the step (what the trends need), or None."""
        blob = self._read(path)
        if blob is None:
            return None
        stats = decode_stats(blob, identity)
        return self._usable(stats, path)

    def load_prompt_columns(self, path: Path, identity: FileIdentity) -> PromptColumns | None:
        """Just the prompt columns of the step (what following a prompt needs), or None."""
        blob = self._read(path)
        if blob is None:
            return None
        return self._usable(decode_prompt_columns(blob, identity), path)

    def load(self, path: Path, identity: FileIdentity) -> CachedStep | None:
        blob = self._read(path)
        if blob is None:
            return None
        return self._usable(decode_entry(blob, identity), path)

    @staticmethod
    def _usable(decoded: Any, path: Path) -> Any:
        if isinstance(decoded, str):  # why the entry cannot be used: recomputed and replaced
            logger.warning("ignoring the disk cache entry for %s: %s", path.name, decoded)
            return None
        return decoded

    def save(self, index: StepIndex, columns: Columns, stats: dict[str, Any]) -> None:
        """Write the entry atomically; a failure (disk full, read-only) is logged, not raised.

        The caller holds `index.lock`: the line table, the columns and `stats` are of one version.
        """
        path = index.path
        try:
            blob = encode_entry(index, columns, stats)
        except (ValueError, TypeError, OverflowError) as exc:  # e.g. a lone surrogate in a label
            logger.info("not keeping %s on disk: %s", path.name, exc)
            return
        self._write(self._name(path), blob)

    def try_lock(self, path: Path) -> EntryLock | None:
        """The lock on the entry of `path` while this process indexes it (`lock.py`), or None
        when another process (here or on another machine sharing the directory) holds it."""
        directory = self._open_directory(create=True)
        if directory is None:
            return UNLOCKED
        return try_lock(directory, self._name(path) + ".lock")

    def load_blob(self, path: Path, kind: str) -> bytes | None:
        """Another kind of entry kept for the file `path` (e.g. an event file's scalars), or
        None; the caller checks what it holds against the file."""
        return self._read(path, kind)

    def save_blob(self, path: Path, kind: str, blob: bytes) -> None:
        """Keep `blob` as the `kind` entry of `path`, under the same rules as a step's."""
        self._write(self._name(path, kind), blob)

    def _write(self, name: str, blob: bytes) -> None:
        directory = self._open_directory(create=True)
        if directory is None:
            return
        tmp = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, 0o600, dir_fd=directory)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.replace(tmp, name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                os.unlink(tmp, dir_fd=directory)
                raise
        except OSError as exc:
            _warn_once(self.directory, f"it cannot be written ({exc.strerror or exc})")
        finally:
            os.close(directory)


def _make_private(directory: Path) -> None:
    """Create `directory` and any missing parents, each 0700 whatever the umask."""
    missing = []
    for path in (directory, *directory.parents):
        if path.exists():
            break
        missing.append(path)
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)  # mkdir's mode is cut by the umask
