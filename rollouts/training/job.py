"""One training job, whichever backend runs it: its record in the run directory, its output read
from `stdout.log` / `stderr.log` there, status, pause and resume through the control file, a
stop (control file, then after the grace period the backend's force), and how it ended.

Its output is read by `output.JobOutput`. A backend (`local.LocalJob`: a process group on this
machine; `rayjob.RayJob`: a Ray job) supplies the hooks at the end of the class. A viewer
restarted while the job runs re-attaches (`attach`) and reads the same files from the start, so
the log and the curves come back whole.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from ..control import atomic_write_json, read_ack, write_control
from .output import STREAMS, JobOutput
from .recovery import forced_stop_record, read_json
from .snapshot import backend_part

RECORD = "job.json"
CONTROL = "control.json"
FINAL = ("exited", "failed", "killed")
QUIET_PAUSE = 2.0  # a pause is taken as effective after this long without output (no ack)


class JobError(RuntimeError):
    """A request the job cannot take in its state (a 409)."""


class BackendUnavailable(JobError):
    """The place the job runs cannot be reached (a 503): nothing was started."""


class Job:
    backend = "local"
    merged_output = False  # stdout and stderr come as one stream (errors found in stdout too)

    def __init__(self, spec: Any, run_dir: Path, record: dict[str, Any]) -> None:
        self.spec = spec
        self.run_dir = run_dir
        self.record = record
        self.output = JobOutput(spec.base, merged=self.merged_output)
        self.log, self.progress, self.phases = (
            self.output.log,
            self.output.progress,
            self.output.phases,
        )
        self._lock = threading.Lock()
        self._done = threading.Event()  # the job's process is gone
        self._finished = threading.Event()  # ... and its output read
        self._pause_since: float | None = None
        self._kill_timer: threading.Thread | None = None

    # -- starting and attaching

    @classmethod
    def start(cls, spec: Any, run_dir: Path, record: dict[str, Any]) -> Job:
        """The job launched, or JobError with nothing of it left behind (a new run directory it
        made is removed again, a resumed one keeps what it had)."""
        made = [p for p in (run_dir, *run_dir.parents) if not p.exists()]  # innermost first
        run_dir.mkdir(parents=True, exist_ok=True)
        write_control(run_dir / CONTROL, pause=False, stop=False)
        job = cls(spec, run_dir, record)
        job.output.sizes(run_dir)  # a resume appends: what is there is the previous run's
        record.update(
            backend=cls.backend,
            started_at=time.time(),
            status="running",
            exit_code=None,
            force_killed=False,
            paused_seconds=0.0,
            ended_at=None,
            message=None,
        )
        try:
            job._launch()
        except JobError:
            if made:
                _remove_new_run_dir(run_dir, made)
            raise
        job.save()
        job._follow()
        return job

    @classmethod
    def attach(cls, spec: Any, run_dir: Path, record: dict[str, Any]) -> Job:
        """A job from its record: followed while its work is alive, else ended."""
        job = cls(spec, run_dir, record)
        job.output.sizes(run_dir)  # written before this viewer watched: no phase timed by it
        alive = record.get("status") not in FINAL and job._alive()
        if not alive and record.get("status") not in FINAL:
            record.update(status="exited", ended_at=record.get("ended_at") or time.time())
            job._ended_unseen()
        if not alive:
            job._done.set()
        elif record.get("paused_at"):
            job._pause_since = float(record["paused_at"])
        job._follow()
        if alive and record.get("status") == "stopping":
            job._kill_timer = threading.Thread(target=job._kill_after_grace, daemon=True)
            job._kill_timer.start()
        return job

    def _follow(self) -> None:
        readers = self.output.follow(self.run_dir, self._done)
        threading.Thread(target=self._wait, args=(readers,), daemon=True).start()

    def _wait(self, readers: list[threading.Thread]) -> None:
        code = self._await_end()
        self._done.set()
        for reader in readers:
            reader.join()
        self.progress.finish()
        with self._lock:
            if self.record.get("status") not in FINAL:
                self._resume_clock()
                status = self._final_status(code)
                self.record.update(status=status, exit_code=code, ended_at=time.time())
                self.save()
        if self.record.get("status") == "killed" or (code is not None and code < 0):
            code_said = f" (exit code {code})" if code is not None else ""
            said = self.record.get("message") or f"the job was killed{code_said}"
            self.log.add(f"[viewer] {said}", "error")
        self._finished.set()

    def _final_status(self, code: int | None) -> str:
        if self.record.get("force_killed") or (code is not None and code < 0):
            return "killed"
        if code or (code is None and self._failed_since_start()):
            return "failed"  # (re-attached: no exit code, but its failure record)
        return "exited"

    # -- requests

    control_path = property(lambda self: self.run_dir / CONTROL)

    def status(self) -> str:
        with self._lock:
            stored = self.record.get("status", "idle")
            if stored in FINAL or stored == "stopping":
                return stored
            if self._pause_since is not None:
                ack = read_ack(self.control_path)
                quiet = time.time() - max(self._pause_since, self.output.last_output)
                return (
                    "paused"
                    if (ack or 0) >= self._pause_since or quiet > QUIET_PAUSE
                    else "pausing"
                )
            if self._starting():
                return "starting"
            return "running"

    def _starting(self) -> bool:
        return self.output.last_output == 0.0 and time.time() - self.record["started_at"] < 5

    @property
    def running(self) -> bool:
        return not self._finished.is_set()

    def pause(self) -> None:
        with self._lock:
            self._require_control("pause")
            if self._pause_since is not None:
                raise JobError("the job is already paused")
            write_control(self.control_path, pause=True)
            self._pause_since = time.time()
            self.record["paused_at"] = self._pause_since
            self.save()

    def resume(self) -> None:
        with self._lock:
            self._require_control("resume")
            if self._pause_since is None:
                raise JobError("the job is not paused")
            write_control(self.control_path, pause=False)
            self._resume_clock()
            self.save()

    def _resume_clock(self) -> None:
        if self._pause_since is not None:
            self.record["paused_seconds"] += time.time() - self._pause_since
            self._pause_since = None
            self.record.pop("paused_at", None)

    def _require_control(self, what: str) -> None:
        if self.record.get("status") != "running" or self._done.is_set():
            raise JobError(f"no running job to {what}")
        if not self.spec.honours_control:
            raise JobError(f"this training command does not read the control file: cannot {what}")

    def stop(self) -> None:
        with self._lock:
            if self.record.get("status") != "running" or self._done.is_set():
                raise JobError("no running job to stop")
            self.record.update(status="stopping", stop_requested_at=time.time())
            self._resume_clock()
            self.save()
            if self.spec.honours_control:
                write_control(self.control_path, pause=False, stop=True)
            else:  # the fallback for a script that never reads the file
                self._stop_without_control()
            self.log.add("[viewer] stop requested", "stdout")
        self._kill_timer = threading.Thread(target=self._kill_after_grace, daemon=True)
        self._kill_timer.start()

    def _kill_after_grace(self) -> None:
        """The force, a grace period after the stop was asked for (a re-attached stop counts
        from when it was asked, not from the re-attach)."""
        asked = float(self.record.get("stop_requested_at") or time.time())
        if self._done.wait(max(0.0, asked + self.spec.grace_seconds - time.time())):
            return
        with self._lock:
            if self._done.is_set():
                return  # it ended on its own at the deadline
            self.record["force_killed"] = True
            how = self._force()
            atomic_write_json(
                self.run_dir / "forced_stop.json",
                {**forced_stop_record(self.spec, self.run_dir, self.record), "signal": how},
            )
            self.save()
        self.log.add(
            f"[viewer] no exit within {self.spec.grace_seconds:g} s of the stop request:"
            f" {self.forced_means} (see forced_stop.json)",
            "error",
        )

    def _failed_since_start(self) -> bool:
        path = self.run_dir / "training_failure.json"
        try:
            return path.stat().st_mtime >= float(self.record.get("started_at") or 0)
        except OSError:
            return False

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def save(self) -> None:
        atomic_write_json(self.run_dir / RECORD, self.record)

    def wall_seconds(self) -> float | None:
        started = self.record.get("started_at")
        if started is None:
            return None
        end = self.record.get("ended_at") or time.time()
        paused = self.record.get("paused_seconds", 0.0)
        if self._pause_since is not None:
            paused += time.time() - self._pause_since
        return max(0.0, end - started - paused)

    def backend_part(self) -> dict[str, Any]:
        """Where the job runs, for the snapshot (the local machine: nothing to reach)."""
        return backend_part(self.backend)

    @staticmethod
    def read_record(run_dir: Path) -> dict[str, Any] | None:
        record = read_json(run_dir / RECORD)
        return record if isinstance(record, dict) and "command" in record else None

    # -- what a backend supplies: start the work (JobError when it cannot); whether a
    # re-attached record's work still runs; what to record when it ended unwatched; block until
    # it ended and its output is in the log files (its exit code); a signal for a command that
    # does not read the control file; end it by force after the grace (how, for forced_stop.json)

    forced_means = "the job was stopped by force"

    def _launch(self) -> None:
        raise NotImplementedError

    def _alive(self) -> bool:
        raise NotImplementedError

    def _ended_unseen(self) -> None:
        pass

    def _await_end(self) -> int | None:
        raise NotImplementedError

    def _stop_without_control(self) -> None:
        raise NotImplementedError

    def _force(self) -> str:
        raise NotImplementedError


def _remove_new_run_dir(run_dir: Path, made: list[Path]) -> None:
    """The directories `start` made for a job that never started (the run directory and the
    parents it needed), each only if nothing else is in it."""
    for name in (CONTROL, *(stream for stream, _ in STREAMS)):
        (run_dir / name).unlink(missing_ok=True)
    for directory in made:
        try:
            directory.rmdir()
        except OSError:
            return
