"""The child process group: who is alive, and killing only what we started (POSIX)."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux /proc), to tell a pid that was
    reused from the process we started; None when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    try:
        return int(fields[19])  # field 22 of the whole line; the 3rd after the command
    except (IndexError, ValueError):
        return None


def is_ours(pid: int, started: int | None) -> bool:
    """Whether `pid` is alive (not a zombie) and still the process that started at `started`."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rpartition(")")[2].split()[:1] == ["Z"]:
        return False
    return started is not None and start_time(pid) == started


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left (zombies waiting for their parent count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send `sig` to the whole group; False when none of it was left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True
