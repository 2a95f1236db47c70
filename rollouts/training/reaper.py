"""The supervisor between the viewer and a local training command, and how every process a job
started is found and killed.

The viewer does not start the command itself: it starts this file as a script
(`python -I reaper.py --report FD --token TOKEN -- COMMAND...`) in a new session, and the
supervisor starts the command. The supervisor is a child subreaper (`PR_SET_CHILD_SUBREAPER`):
a process the command started whose parent exits (a double fork, a daemon) is re-parented to
the supervisor instead of to init, so everything the job started, `setsid` or not, stays a
descendant of the supervisor for as long as it lives. The supervisor reaps what it adopts,
kills what the command left behind when the command exits, and exits with the command's status
(dying by the same signal when the command did).

Why the supervisor and not the viewer: the viewer is a gunicorn worker, which is restarted and
may die while the job runs on, and which starts other children of its own (a subreaper must
reap every orphan, which would steal their exit codes from `subprocess`). The supervisor lives
exactly as long as the job, so a viewer restarted while the job runs re-attaches to it and
finds the same tree. Its command line carries a random token the job's record keeps, so a
record (which a job can forge) names the supervisor only if that process's command line says
so. Standard library only: it runs with `-I`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_ROUNDS = 100  # of freezing newly found processes before all are killed
MARK = "--token"  # the token follows it on the supervisor's command line


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):  # not Linux
        return False


def proc_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, parent pid, process group, start time in clock ticks) from /proc; None when the
    process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            raw = file.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw.rpartition(")")[2].split()  # the command name may hold spaces and ")"
    try:
        return fields[0], int(fields[1]), int(fields[2]), int(fields[19])
    except (IndexError, ValueError):
        return None


def process_table() -> dict[int, tuple[int, int]]:
    """Every live process (zombies left out): pid -> (parent pid, process group)."""
    table = {}
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if entry.name.isdigit():
                stat = proc_stat(int(entry.name))
                if stat is not None and stat[0] != "Z":
                    table[int(entry.name)] = (stat[1], stat[2])
    return table


def tree(root: int, table: dict[int, tuple[int, int]]) -> set[int]:
    """`root`'s descendants and the members of its process group, `root` left out."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and child != root:
                found.add(child)
                todo.append(child)
    return found | {pid for pid, (_, group) in table.items() if group == root and pid != root}


class _Held:
    """Processes pinned by a pidfd (where the system has them), so a signal reaches the process
    that was found even if its pid is reused meanwhile."""

    def __init__(self) -> None:
        self.fds: dict[int, int | None] = {}

    def pin(self, pid: int, root: int, found: set[int]) -> bool:
        """Whether `pid` (one of `found`, the tree as last read) is held; read again after
        its pidfd is open, its parent must still be in the tree (or it in the group)."""
        fd = None
        with contextlib.suppress(AttributeError, OSError):
            fd = os.pidfd_open(pid)
        stat = proc_stat(pid)
        parents = found.union(self.fds, (root,))
        inside = stat is not None and (stat[1] in parents or stat[2] == root)
        if not inside or stat is None or stat[0] == "Z":
            if fd is not None:
                os.close(fd)
            return False
        self.fds[pid] = fd
        return True

    def signal(self, pid: int, sig: int) -> None:
        fd = self.fds.get(pid)
        with contextlib.suppress(OSError):
            if fd is not None:
                signal.pidfd_send_signal(fd, sig)
            else:
                os.kill(pid, sig)

    def close(self) -> None:
        for fd in self.fds.values():
            if fd is not None:
                os.close(fd)


def kill_tree(root: int) -> int:
    """SIGKILL to every descendant of `root` and every member of its group (not `root` itself):
    first frozen with SIGSTOP, round after round until a round finds no new one (a stopped
    process cannot fork), so none escapes by forking while the others die. The number killed."""
    held = _Held()
    try:
        for _ in range(MAX_ROUNDS):
            found = tree(root, process_table())
            pinned = [pid for pid in sorted(found - held.fds.keys()) if held.pin(pid, root, found)]
            if not pinned:
                break
            for pid in pinned:
                held.signal(pid, signal.SIGSTOP)
        for pid in held.fds:
            held.signal(pid, signal.SIGKILL)
        return len(held.fds)
    finally:
        held.close()


def command_token(pid: int) -> str | None:
    """The token on a supervisor's command line; None for any other process."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = file.read().split(b"\0")
    except OSError:
        return None
    if MARK.encode() not in argv or not any(arg.endswith(b"reaper.py") for arg in argv[:3]):
        return None
    at = argv.index(MARK.encode()) + 1
    return argv[at].decode("ascii", "replace") if at < len(argv) else None


# -- the supervisor itself


def _die_with_supervisor() -> None:  # (in the command's process, before its exec)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _ignore(sig: int, frame: object) -> None:
    return None  # the group's SIGTERM reaches the command itself; the supervisor stays to reap


def _report(fd: int, text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, text.encode())
    with contextlib.suppress(OSError):
        os.close(fd)


def _children_reaped() -> Iterator[tuple[int, int]]:
    """(pid, wait status) of each child that ends, the adopted ones too; stops with none left."""
    while True:
        try:
            yield os.wait()
        except ChildProcessError:
            return


def supervise(report: int, command: list[str]) -> int:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _ignore)
    try:
        child = subprocess.Popen(command, preexec_fn=_die_with_supervisor)
    except OSError as exc:
        _report(report, f"errno {exc.errno or 0}")
        return 127
    _report(report, "ok")
    code = 0
    for pid, status in _children_reaped():
        if pid == child.pid:
            code = os.waitstatus_to_exitcode(status)
            break
    kill_tree(os.getpid())  # what the command left behind: daemons, setsid grandchildren
    for _ in _children_reaped():
        pass
    child.returncode = code  # (already reaped: Popen must not wait for it again)
    return code


def main(argv: list[str]) -> int:
    if len(argv) < 6 or argv[0] != "--report" or argv[2] != MARK or argv[4] != "--":
        sys.stderr.write("usage: reaper.py --report FD --token TOKEN -- COMMAND...\n")
        return 2
    code = supervise(int(argv[1]), argv[5:])
    if code < 0:  # the command died by a signal: so does the supervisor, without a core file
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
