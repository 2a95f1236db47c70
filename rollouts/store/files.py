"""Step files by name and by identity: which names are steps, and how to tell a file changed.

A step is a file named `<digits>.jsonl` (ASCII digits 0-9 only); its step number is the digits,
its name (as URLs and pages say it) the digits as written, so `007.jsonl` stays reachable as
step `007`. A file's identity (device, inode, size, mtime) is how every cache here knows it
still holds the same bytes: a grown, rewritten or replaced file has another identity.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

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
