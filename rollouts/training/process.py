"""The job's processes: whether a record's pid is the supervisor this viewer started, and
signalling only what it started (POSIX; Linux's /proc tells a process apart).

A record in the run directory is data, which a job or another user may have forged: its pid is
signalled only when that process is verifiably the job's supervisor (`reaper.py`): the start
time and the process group the record keeps, and the token on the supervisor's command line.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from .reaper import command_token, kill_tree, proc_stat

OURS = "ours"
GONE = "gone"


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux /proc), to tell a pid that was
    reused from the process we started; None when unknown."""
    stat = proc_stat(pid)
    return stat[3] if stat is not None else None


def identify(record: dict[str, Any]) -> str:
    """OURS when the record's pid is the live supervisor it names, GONE when that process has
    ended, else why the process at that pid is someone else's (it is then never signalled)."""
    pid = record.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
        return GONE
    stat = proc_stat(pid)
    if stat is None or stat[0] == "Z":
        return GONE
    _, _, group, started = stat
    if record.get("pid_start") != started:
        return "it started at another time than the recorded one (the pid was reused)"
    if record.get("pgid", pid) != group or group != pid:
        return "its process group is not the one recorded"
    token = record.get("pid_token")
    if not isinstance(token, str) or not token or command_token(pid) != token:
        return "it is not the supervisor this viewer started (its token does not match)"
    return OURS


def refusal(record: dict[str, Any], why: str) -> str:
    """What the job's message says when its record names another process."""
    return f"job.json names process {record.get('pid')}, but {why}: it was not signalled"


def signal_job(record: dict[str, Any], sig: int, trusted: bool = False) -> str:
    """`sig` to the job's process group, when `identify` says it is ours (or the caller knows:
    `trusted`, its own unreaped child); what `identify` said."""
    verdict = OURS if trusted else identify(record)
    if verdict == OURS:
        kill_group(int(record["pid"]), sig)
    return verdict


def kill_job(record: dict[str, Any], trusted: bool = False) -> str:
    """SIGKILL to every process the job started, when `identify` says it is ours (or
    `trusted`): the supervisor's descendants (`setsid` ones too: the supervisor is their
    subreaper) and its group, then the supervisor. What `identify` said."""
    verdict = OURS if trusted else identify(record)
    if verdict == OURS:
        pid = int(record["pid"])
        kill_tree(pid)
        kill_group(pid)
    return verdict


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
