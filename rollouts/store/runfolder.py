"""A folder of runs as it is now: listed while serving, so a run that appears under it shows up
and one that is removed says so (`visualize PARENT`, ROLLOUTS_RUNS_DIR).

A listing costs one `scandir` of the folder and a `stat` or two per run (the run's folder and
its buckets' folders: when a step file is added, its bucket's folder changes). Whether a
sub-folder is a run (`is_run`, a `scandir` of it) is kept per sub-folder version, so a second
listing of a thousand runs reads no sub-folder again.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from .files import KNOWN_BUCKETS, is_run, rollouts_of
from .jsonio import without_surrogates

GONE_KEPT = 50  # the most names of runs gone while serving that a listing remembers


@dataclass(frozen=True, slots=True)
class ListedRun:
    """A run of the folder: its name (as pages show it), its data directory and when its
    folders last changed (nanoseconds; a cheap stand-in for its newest step's time)."""

    name: str
    data_dir: Path
    changed_ns: int


class RunFolder:
    """The runs in `root`, listed again at each `listing()`."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()
        self._root = str(self.root)
        self._lock = threading.Lock()
        # sub-folder name -> (its version, its data directory or None when it is no run)
        self._known: dict[str, tuple[tuple[int, int, int] | None, Path | None]] = {}
        self._seen: set[str] = set()
        self._gone: dict[str, None] = {}  # ordered, the most recent last

    def listing(self) -> list[ListedRun]:
        """The runs now, by name. Runs that were listed before and are not now go to `gone`."""
        runs: list[ListedRun] = []
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except OSError:
            entries = []
        known: dict[str, tuple[tuple[int, int, int] | None, Path | None]] = {}
        for entry in entries:
            data_dir, version = self._run_at(entry.name)
            known[entry.name] = (version, data_dir)
            if data_dir is not None:
                name = without_surrogates(entry.name)
                runs.append(ListedRun(name, data_dir, changed_ns(data_dir, version)))
        names = {run.name for run in runs}
        with self._lock:
            self._known = known
            for name in self._seen - names:
                self._gone.pop(name, None)
                self._gone[name] = None
            for name in names:
                self._gone.pop(name, None)
            while len(self._gone) > GONE_KEPT:
                del self._gone[next(iter(self._gone))]
            self._seen = names
        return runs

    def gone(self) -> list[str]:
        """Runs listed earlier that are no longer in the folder (the most recent first)."""
        with self._lock:
            return list(reversed(self._gone))

    def was_listed(self, name: str) -> bool:
        with self._lock:
            return name in self._gone

    def get(self, name: str) -> Path | None:
        """The data directory of run `name` if it is in the folder now (no listing)."""
        if not name or name in (".", "..") or "/" in name or "\0" in name:
            return None
        if "\ufffd" in name:  # a name that is not UTF-8 on disk: as the listing shows it
            return next((run.data_dir for run in self.listing() if run.name == name), None)
        return self._run_at(name)[0]

    def _run_at(self, name: str) -> tuple[Path | None, tuple[int, int, int] | None]:
        """The data directory of the sub-folder `name` (None: no run) and the sub-folder's
        version, from the memo while the sub-folder is as it was."""
        path = os.path.join(self._root, name)  # strings: a thousand runs, no pathlib cost
        try:
            st = os.stat(path)  # follows a link; where it leads is checked below
        except OSError:
            return None, None
        version = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        if not stat.S_ISDIR(st.st_mode):
            return None, version
        with self._lock:
            memo = self._known.get(name)
        if memo is not None and memo[0] == version:
            return memo[1], version
        resolved = os.path.realpath(path)
        if not resolved.startswith(self._root + os.sep) or not is_run(Path(resolved)):
            return None, version
        data_dir = rollouts_of(Path(resolved))
        with self._lock:
            self._known[name] = (version, data_dir)
        return data_dir, version


def changed_ns(data_dir: Path, version: tuple[int, int, int] | None = None) -> int:
    """The newest mtime of the run's folder (`version`), its data directory and its buckets'
    folders: a step file added changes its bucket's folder."""
    newest = version[1] if version is not None else 0
    base = str(data_dir)
    for path in (base, *(os.path.join(base, bucket) for bucket in KNOWN_BUCKETS)):
        try:
            newest = max(newest, os.stat(path).st_mtime_ns)
        except OSError:
            continue
    return newest
