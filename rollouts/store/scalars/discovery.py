"""Where a run's event files are: which directory is read, and which files in it.

Relax writes its scalars to `<save>/tensorboard_log/` while its samples go to
`<save>/rollout_result/`. So, with no directory named by the user, the viewer looks at:

- `<data dir>/tensorboard_log/` when the data dir is `<save>` itself;
- `<data dir>/../tensorboard_log/` when the data dir is (resolved) a directory named
  `rollout_result`: one level up, to that one sibling and nothing else.

The second case reads outside the data directory, so it is held to the same containment rule as
everything inside it: `tensorboard_log` is resolved (symlinks followed) and must still lie inside
`<save>`; a link out of it is not followed. Inside the directory, event files
(`events.out.tfevents.*`, in any subdirectory) are found without following linked directories,
and a linked file counts only when it resolves inside the directory; only regular files count
(a FIFO or a device named like an event file is not one). A directory the user named
(`--tensorboard`, ROLLOUTS_TENSORBOARD) is theirs to choose, under the same rule inside it.

At most `MAX_EVENT_FILES` files are read: the newest, by the time their writer started (in their
names), since a run that restarted many times matters most where it is now. The listing says
how many there were in all, so the pages can say what was left out.
"""

from __future__ import annotations

import heapq
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

TENSORBOARD_DIR_NAME = "tensorboard_log"
ROLLOUT_RESULT = "rollout_result"
EVENT_FILE_PREFIX = "events.out.tfevents."
MAX_EVENT_FILES = 10_000  # read at most this many event files: the newest (see below)
RACY_NS = 2_000_000_000  # a directory modified this recently may change again unseen (mtime ticks)


@dataclass(frozen=True, slots=True)
class EventListing:
    """The event files of a directory as listed, and what tells whether the listing still holds:
    each directory walked, as it was `stat`ed just before it was listed."""

    files: list[tuple[str, str]]  # (name relative to the root, path to read): the ones kept
    found: int  # event files found in all (more than `files` holds when over the limit)
    directories: tuple[tuple[str, tuple[int, int, int]], ...]  # path, (dev, inode, mtime)
    racy: bool  # a directory changed too recently for its mtime to show the next change

    def still_holds(self) -> bool:
        """Whether no directory was added to, removed from or replaced since (a `stat` each)."""
        if self.racy:
            return False
        for path, identity in self.directories:
            try:
                if _dir_identity(os.stat(path)) != identity:
                    return False
            except OSError:
                return False
        return True


@dataclass(frozen=True, slots=True)
class TensorBoardDir:
    root: Path  # resolved
    shown: str  # as pages say it: never an absolute path
    origin: str  # how it was found, in words


def _inside(path: Path, container: Path) -> Path | None:
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not resolved.is_dir() or not resolved.is_relative_to(container):
        return None
    return resolved


def find_tensorboard(data_root: Path, configured: Path | None = None) -> TensorBoardDir | None:
    """The TensorBoard directory of the data directory `data_root` (resolved), or None.

    `configured`: the directory the user named; it replaces the search (None when missing).
    """
    if configured is not None:
        try:
            root = configured.expanduser().resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if not root.is_dir():
            return None
        return TensorBoardDir(root, root.name, "named by --tensorboard / ROLLOUTS_TENSORBOARD")
    inside = _inside(data_root / TENSORBOARD_DIR_NAME, data_root)
    if inside is not None:
        return TensorBoardDir(inside, TENSORBOARD_DIR_NAME, "inside the data directory")
    if data_root.name == ROLLOUT_RESULT:
        save = data_root.parent
        beside = _inside(save / TENSORBOARD_DIR_NAME, save)
        if beside is not None:
            shown = f"{save.name}/{TENSORBOARD_DIR_NAME}"
            return TensorBoardDir(beside, shown, "beside rollout_result")
    return None


def event_files(root: Path, limit: int = MAX_EVENT_FILES) -> list[tuple[str, Path]]:
    """(name relative to `root`, resolved path) of the event files read, in name order."""
    return [(name, Path(path)) for name, path in list_event_files(root, limit).files]


def list_event_files(root: Path, limit: int = MAX_EVENT_FILES) -> EventListing:
    """Every event file under `root`; the newest `limit` of them kept, in name order."""
    found: list[tuple[tuple[int, str], str, str]] = []
    directories: list[tuple[str, tuple[int, int, int]]] = []
    racy = False
    now = time.time_ns()
    stack = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            st = os.stat(directory)  # before the listing: a change during it shows next time
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:
            continue
        directories.append((directory, _dir_identity(st)))
        racy |= now - st.st_mtime_ns < RACY_NS
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{prefix}{entry.name}/"))
            elif entry.name.startswith(EVENT_FILE_PREFIX):
                path = _event_file(entry, root)
                if path is not None:
                    name = prefix + entry.name
                    found.append(((_started(entry), name), name, path))
    kept = found if len(found) <= limit else heapq.nlargest(limit, found)
    return EventListing(
        files=sorted((name, path) for _, name, path in kept),
        found=len(found),
        directories=tuple(directories),
        racy=racy,
    )


def _dir_identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


def _event_file(entry: os.DirEntry[str], root: Path) -> str | None:
    """The file to read for this entry: a regular file, or a link to one inside `root`."""
    try:
        if not entry.is_symlink():
            return entry.path if entry.is_file(follow_symlinks=False) else None
        resolved = Path(entry.path).resolve(strict=True)
        if resolved.is_relative_to(root) and stat.S_ISREG(resolved.stat().st_mode):
            return str(resolved)
    except (OSError, RuntimeError):
        pass
    return None


def _started(entry: os.DirEntry[str]) -> int:
    """When the file's writer started, in seconds: the time every writer puts in the name
    (`events.out.tfevents.<seconds>.<host>...`), or else the file's modification time."""
    stamp = entry.name[len(EVENT_FILE_PREFIX) :].partition(".")[0]
    if stamp.isascii() and stamp.isdigit():
        return int(stamp)
    try:
        return int(entry.stat().st_mtime)
    except OSError:
        return 0
