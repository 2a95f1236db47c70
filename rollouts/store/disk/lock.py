"""One indexer of a step at a time, across processes and machines that share a disk cache.

Before a process decodes a step for its entry it creates `<entry>.lock` beside it (`O_EXCL`,
which NFS honours too) holding its host, pid and the time; the others skip that step or wait
and then read the entry it wrote. A lock whose owner is gone is taken over: on this host when
its pid no longer exists, from anywhere once it is older than `STALE_S` (the process or the
machine died without removing it).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time

STALE_S = 600.0  # a lock older than this is abandoned whoever holds it (one step: seconds)
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _owner() -> str:
    return f"{socket.gethostname()} {os.getpid()}"


class EntryLock:
    """A held lock: `release()` removes it (only while it is still this process's)."""

    def __init__(self, dir_fd: int | None, name: str, owner: str) -> None:
        self._dir_fd = dir_fd
        self._name = name
        self._owner = owner

    def release(self) -> None:
        if self._dir_fd is None:
            return
        try:
            if _read_owner(self._name, self._dir_fd) == self._owner:
                os.unlink(self._name, dir_fd=self._dir_fd)
        except OSError:
            pass
        finally:
            os.close(self._dir_fd)
            self._dir_fd = None

    def __enter__(self) -> EntryLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


UNLOCKED = EntryLock(None, "", "")  # no shared directory to lock in: nothing to share either


def try_lock(dir_fd: int, name: str) -> EntryLock | None:
    """Take the lock `name` in the directory `dir_fd` (kept open by the lock and closed on
    release), or None when another live process holds it. `dir_fd` is closed on None."""
    owner = f"{_owner()} {time.time():.3f}"
    # Two processes taking over the same abandoned lock at once may both index the step: the
    # entry is written atomically, so that costs time, never a wrong entry.
    for _ in range(2):  # once more after taking over an abandoned lock
        try:
            fd = os.open(name, _FLAGS, 0o600, dir_fd=dir_fd)
        except FileExistsError:
            if not _abandoned(name, dir_fd):
                break
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            continue
        except OSError:  # read-only, full: index without a lock, as if alone
            os.close(dir_fd)
            return UNLOCKED
        try:
            with os.fdopen(fd, "w") as f:
                f.write(owner)
        except OSError:  # full: no empty lock left for the others to wait on
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            os.close(dir_fd)
            return UNLOCKED
        return EntryLock(dir_fd, name, owner)
    os.close(dir_fd)
    return None


def _read_owner(name: str, dir_fd: int) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    with os.fdopen(fd) as f:
        return f.read(200)


def _abandoned(name: str, dir_fd: int) -> bool:
    """Whether the lock's owner is gone: its pid on this host, or it is older than STALE_S."""
    try:
        age = time.time() - os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mtime
    except OSError:
        return False  # removed meanwhile: try again
    if age > STALE_S:  # whatever it says: its owner may have died before writing it
        return True
    try:
        host, pid, _ = _read_owner(name, dir_fd).split(" ")
    except (OSError, ValueError):
        return False  # removed meanwhile, or being written: try again later
    if host != socket.gethostname() or not pid.isdigit() or not os.path.isdir("/proc/self"):
        return False
    return not os.path.exists(f"/proc/{pid}")  # its process is gone
