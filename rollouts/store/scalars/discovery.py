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
and a linked file counts only when it resolves inside the directory. A directory the user named
(`--tensorboard`, ROLLOUTS_TENSORBOARD) is theirs to choose, under the same rule inside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TENSORBOARD_DIR_NAME = "tensorboard_log"
ROLLOUT_RESULT = "rollout_result"
EVENT_FILE_PREFIX = "events.out.tfevents."
MAX_EVENT_FILES = 1000  # a directory with more is not one run's log; the first ones are read


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


def event_files(root: Path) -> list[tuple[str, Path]]:
    """(name relative to `root`, resolved path) of every event file, in name order."""
    found: list[tuple[str, Path]] = []
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            if not name.startswith(EVENT_FILE_PREFIX):
                continue
            path = Path(directory, name)
            try:
                resolved = path.resolve(strict=True) if path.is_symlink() else path
            except (OSError, RuntimeError):
                continue
            if not resolved.is_relative_to(root) or not resolved.is_file():
                continue
            found.append((path.relative_to(root).as_posix(), resolved))
            if len(found) >= MAX_EVENT_FILES:
                return found
    return found
