"""Step files by name and by identity: which names are steps, how to tell a file changed, and
which directories hold runs (`is_run`, `find_runs`).

A step is a file named `<digits>.jsonl` (ASCII digits 0-9 only); its step number is the digits,
its name (as URLs and pages say it) the digits as written, so `007.jsonl` stays reachable as
step `007`. A file's identity (device, inode, size, mtime) is how every cache here knows it
still holds the same bytes: a grown, rewritten or replaced file has another identity.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .jsonio import without_surrogates

KNOWN_BUCKETS = ("train", "eval")
STEP_SUFFIX = ".jsonl"
# ASCII digits only (`\d` takes Arabic-Indic and math digits), `\Z` (`$` takes "1.jsonl\n").
STEP_FILE = re.compile(r"^([0-9]+)" + re.escape(STEP_SUFFIX) + r"\Z")


def step_filename(name: str | int) -> str:
    """The file of step `name`: "3" -> "3.jsonl"."""
    return f"{name}{STEP_SUFFIX}"


def step_name(filename: str) -> str:
    """The name of the step in `filename`: "3.jsonl" -> "3"."""
    return filename.removesuffix(STEP_SUFFIX)


@dataclass(frozen=True, slots=True)
class FileIdentity:
    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.dev, self.ino, self.size, self.mtime_ns)


@dataclass(frozen=True, slots=True)
class StepFile:
    """One step file of a bucket, as listed (the index checks the file again when opened)."""

    step: int
    filename: str
    size_bytes: int
    mtime_ns: int = 0

    @property
    def name(self) -> str:
        return step_name(self.filename)


KNOWN_BUCKETS = ("train", "eval")


def is_run(directory: Path) -> bool:
    """Whether `directory` holds rollouts: a rollout_result/, train/ or eval/, or step files."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    names = {e.name for e in entries if e.is_dir()}
    if names & {"rollout_result", *KNOWN_BUCKETS}:
        return True
    return any(STEP_FILE.match(e.name) for e in entries)


def find_runs(directory: Path) -> dict[str, Path]:
    """The runs inside `directory` by name, when it is a folder of runs rather than a run.

    A run is a sub-directory that `is_run` (symlinks leading out of `directory` are left out).
    Empty when `directory` is itself a run or holds none.
    """
    root = Path(directory).resolve()
    if is_run(root):
        return {}
    runs = {}
    for child in sorted(root.iterdir()):
        resolved = child.resolve()
        if resolved.is_relative_to(root) and resolved.is_dir() and is_run(resolved):
            runs[without_surrogates(child.name)] = resolved  # a name pages can show
    return runs


def runs_of(dirs: list[Path]) -> dict[str, Path]:
    """The runs a command line names: several DATA_DIRs are runs named by their folders (a save
    dir's, not its rollout_result/'s), and one folder may hold several runs."""
    if len(dirs) == 1:
        return {name: rollouts_of(path) for name, path in find_runs(dirs[0]).items()}
    runs: dict[str, Path] = {}
    for path in dirs:
        name = path.parent.name if path.name == "rollout_result" else path.name
        unique, n = name, 2
        while unique in runs:
            unique, n = f"{name}-{n}", n + 1
        runs[unique] = path
    return runs


def rollouts_of(run: Path) -> Path:
    """A run's data dir: its rollout_result/ when it has one (so buckets sit at the top)."""
    inner = run / "rollout_result"
    return inner if inner.is_dir() else run


def directory_version(path: Path) -> tuple[int, int, int] | None:
    """What changes when a directory's entries or permissions do: an entry added, removed or
    renamed changes its mtime, a chmod its ctime. None when it is not there."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns
