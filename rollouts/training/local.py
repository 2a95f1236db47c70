"""The local backend: the training command as a child process in its own process group on this
machine; a stop without the control file is SIGTERM, the force after the grace is SIGKILL to
the whole group, and nothing it started is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from . import process
from .job import CONTROL, FINAL, Job, JobError
from .recovery import scrub


class LocalJob(Job):
    backend = "local"
    forced_means = "the process group was killed"

    def _launch(self) -> None:
        control = self.run_dir / CONTROL
        env = {
            **os.environ,
            "RELAX_CONTROL_FILE": os.path.relpath(control, self.spec.base),
            "PYTHONUNBUFFERED": "1",
        }
        with (
            open(self.run_dir / "stdout.log", "ab") as out,
            open(self.run_dir / "stderr.log", "ab") as err,
        ):
            try:
                proc = subprocess.Popen(
                    self.record["command"],
                    cwd=self.spec.base,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    env=env,
                    start_new_session=True,  # its own process group: stopped as a whole
                )
            except OSError as exc:
                program = scrub(str(self.record["command"][0]))
                raise JobError(
                    f"cannot start the training command {program}: {exc.strerror}"
                ) from None
        self._proc = proc
        self.record.update(pid=proc.pid, pid_start=process.start_time(proc.pid))

    def _alive(self) -> bool:
        return process.is_ours(int(self.record.get("pid") or 0), self.record.get("pid_start"))

    def _await_end(self) -> int | None:
        proc: subprocess.Popen[bytes] | None = getattr(self, "_proc", None)
        code: int | None = None
        if proc is not None:
            code = proc.wait()
        else:
            pid, started = int(self.record.get("pid") or 0), self.record.get("pid_start")
            while not self._done.is_set() and process.is_ours(pid, started):
                time.sleep(0.2)
        pgid = self.record.get("pid")
        if pgid and process.group_alive(pgid) and self.record.get("status") not in FINAL:
            process.kill_group(pgid)  # what the child left in its group would be orphans
        return code

    def _stop_without_control(self) -> None:
        process.kill_group(self.record["pid"], signal.SIGTERM)

    def _force(self) -> str:
        process.kill_group(self.record["pid"])
        return "SIGKILL"
