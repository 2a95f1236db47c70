"""The local backend: the training command on this machine under its supervisor (`reaper.py`,
in a new session: its own process group), which keeps every process the command starts as a
descendant; a stop without the control file is SIGTERM to the group, the force after the grace
is SIGKILL to every descendant and the group, and nothing it started is left behind. A pid is
signalled only when it is verifiably the supervisor this viewer started (`process.identify`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import process, reaper
from ..job import CONTROL, FINAL, Job, JobError
from ..recovery import scrub
from ..runfiles import Refused, open_append

SUPERVISOR = str(Path(reaper.__file__).resolve())
REPORT_SECONDS = 30.0  # for the supervisor to say whether the command started
_REAPING = threading.Lock()  # held while a child is reaped, and while its pid is signalled


class LocalJob(Job):
    backend = "local"
    forced_means = "every process it started was killed"

    def launch(self) -> None:
        control = self.run_dir / CONTROL
        env = {
            **os.environ,
            "RELAX_CONTROL_FILE": os.path.relpath(control, self.spec.base),
            "PYTHONUNBUFFERED": "1",
        }
        token = secrets.token_hex(16)
        logs: list[int] = []
        try:
            for name in ("stdout.log", "stderr.log"):
                logs.append(open_append(self.run_dir / name))
            proc, problem = _supervised(self.record["command"], token, self.spec.base, env, logs)
        except Refused as exc:
            raise JobError(str(exc)) from None
        finally:
            for fd in logs:
                os.close(fd)
        if problem is not None:
            program = scrub(str(self.record["command"][0]))
            raise JobError(f"cannot start the training command {program}: {problem}")
        self._proc = proc
        self.record.update(
            pid=proc.pid, pgid=proc.pid, pid_start=process.start_time(proc.pid), pid_token=token
        )

    def alive(self) -> bool:
        verdict = process.identify(self.record)
        if verdict not in (process.OURS, process.GONE):
            self.record["message"] = process.refusal(self.record, verdict)
        return verdict == process.OURS

    def await_end(self) -> int | None:
        proc: subprocess.Popen[bytes] | None = getattr(self, "_proc", None)
        if proc is None:  # re-attached: not our child; its supervisor cleans up after it
            while not self._done.is_set() and process.identify(self.record) == process.OURS:
                time.sleep(0.2)
            return None
        if not hasattr(os, "waitid"):  # (macOS) reaped first, then its group
            code = proc.wait()
            self._kill_leftovers(proc.pid)
            return code
        _exited_unreaped(proc.pid)  # the group's id stays ours while the supervisor is a zombie
        with _REAPING:
            self._kill_leftovers(proc.pid)
            return proc.wait()

    def _kill_leftovers(self, pgid: int) -> None:
        if process.group_alive(pgid) and self.record.get("status") not in FINAL:
            process.kill_group(pgid)  # what the child left in its group would be orphans

    def _own_child(self) -> bool:
        """Whether the record's pid is this viewer's own child, not yet reaped (so its pid
        cannot have been reused; hold _REAPING): trusted where /proc cannot tell (macOS)."""
        proc: subprocess.Popen[bytes] | None = getattr(self, "_proc", None)
        return proc is not None and proc.returncode is None and proc.pid == self.record["pid"]

    def stop_without_control(self) -> None:
        with _REAPING:
            self._said(process.signal_job(self.record, signal.SIGTERM, self._own_child()))

    def force(self) -> str:
        with _REAPING:
            self._said(process.kill_job(self.record, self._own_child()))
        return "SIGKILL"

    def _said(self, verdict: str) -> None:
        if verdict not in (process.OURS, process.GONE):
            self.record["message"] = said = process.refusal(self.record, verdict)
            self.log.add(f"[viewer] {said}", "error")


def _supervised(
    command: list[str], token: str, cwd: Path, env: dict[str, str], logs: list[int]
) -> tuple[subprocess.Popen[bytes], str | None]:
    """The command started under its supervisor: (the supervisor, None), or (the supervisor,
    why the command could not start) once the supervisor has ended; JobError when even the
    supervisor cannot start."""
    read, write = os.pipe()
    try:
        supervisor = [sys.executable, "-I", SUPERVISOR, "--report", str(write), reaper.MARK]
        try:
            proc = subprocess.Popen(
                [*supervisor, token, "--", *command],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=logs[0],
                stderr=logs[1],
                env=env,
                pass_fds=(write,),
                start_new_session=True,  # its own session and process group: stopped as a whole
            )
        except (OSError, ValueError) as exc:  # ValueError: an argument no OS can take (NUL)
            why = getattr(exc, "strerror", None) or str(exc)
            raise JobError(f"cannot start the training supervisor: {why}") from None
        os.close(write)
        write = -1
        answer = b""
        while select.select([read], [], [], REPORT_SECONDS)[0]:
            piece = os.read(read, 64)
            if not piece:
                break
            answer += piece
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    if answer == b"ok":
        return proc, None
    if not answer:  # silent past the deadline, or died before it could say
        with contextlib.suppress(OSError):
            proc.kill()
    proc.wait()
    number = int(answer.split()[-1]) if answer.startswith(b"errno ") else 0
    return proc, os.strerror(number) if number else "its supervisor did not start"


def _exited_unreaped(pid: int) -> None:
    """Block until the child `pid` exits, leaving it a zombie (reaped by `Popen.wait`)."""
    while True:
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            return
        except ChildProcessError:
            return
        except InterruptedError:
            continue
