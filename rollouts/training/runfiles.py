"""The files the viewer opens in a run directory, which a job (or another user who may write
there) can replace with anything: a symbolic link to a file elsewhere, a hard link, a FIFO.

What the viewer appends to (`stdout.log`, `stderr.log`) is opened without following a
symbolic link and only if it is a regular file it just made, or one of its own user's with a
single link; what it reads is opened without blocking and only if it is a regular file (a FIFO
would hold the reading thread forever). The records it replaces (`job.json`, `control.json`,
`forced_stop.json`) are written to a new temporary file and renamed over the name
(`rollouts.control.atomic_write`), which replaces a link rather than writing through it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_NEW = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_EXISTING = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Refused(Exception):
    """A file the viewer will not write or read; the message names it by its name only."""


def open_append(path: Path) -> int:
    """A descriptor appending to `path`: made now (O_EXCL), or an existing regular file of this
    user's with one link, never followed through a symbolic link. Refused otherwise."""
    try:
        return os.open(path, _NEW, 0o644)
    except FileExistsError:
        pass
    except OSError as exc:
        raise _refused(path, exc) from None
    try:
        fd = os.open(path, _EXISTING)
    except OSError as exc:
        raise _refused(path, exc) from None
    info = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_uid != os.geteuid():
        problem = "belongs to another user"
    elif info.st_nlink != 1:
        problem = "has another hard link"
    if problem:
        os.close(fd)
        raise Refused(f"{path.name} in the run directory {problem}: the viewer does not write it")
    os.set_blocking(fd, True)
    return fd


def open_read(path: Path, follow: bool = False) -> BinaryIO:
    """`path` opened for reading if it is a regular file (not followed through a symbolic link
    unless `follow`); FileNotFoundError when it is missing, Refused for anything else."""
    flags = _READ if not follow else _READ & ~os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _refused(path, exc, "read") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused(f"{path.name} in the run directory is not a regular file: not read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_small(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (symbolic links followed: a pointer a script made may be one),
    or None: missing, not a regular file, unreadable, or larger than `limit`."""
    try:
        with open_read(path, follow=True) as file:
            data = file.read(limit + 1)
    except (OSError, Refused):
        return None
    return data if len(data) <= limit else None


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _refused(path: Path, exc: OSError, what: str = "write") -> Refused:
    if exc.errno == errno.ELOOP:
        why = "is a symbolic link"
    elif exc.errno == errno.ENXIO:
        why = "is not a regular file"  # a FIFO without a reader
    else:
        why = f"cannot be opened ({exc.strerror})"
    return Refused(f"{path.name} in the run directory {why}: the viewer does not {what} it")
