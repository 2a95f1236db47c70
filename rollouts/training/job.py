"""One training job, whichever backend runs it: its record in the run directory, its output read
from `stdout.log` / `stderr.log` there, status, pause and resume through the control file, a
stop (control file, then after the grace period the backend's force), and how it ended.

Its output is read by `output.JobOutput`. A backend (`backends.local.LocalJob`: a process group
on this machine; `backends.rayjob.RayJob`: a Ray job) subclasses it and supplies the hooks at the
end of the class, as `backends.Backend` states them. A viewer
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
from .snapshot import FINAL, backend_part
from .spec import Spec

RECORD = "job.json"
CONTROL = "control.json"
PAUSE_NOTE_AFTER = 10.0  # seconds of "pausing" without the script's ack before the page says so


class JobError(RuntimeError):
    """A request the job cannot take in its state (a 409)."""


class BackendUnavailable(JobError):
    """The place the job runs cannot be reached (a 503): nothing was started."""


class Job:
    backend = "local"
    merged_output = False  # stdout and stderr come as one stream (errors found in stdout too)

    def __init__(
        self, spec: Spec, run_dir: Path, record: dict[str, Any], output: JobOutput | None = None
    ) -> None:
        self.spec = spec
        self.run_dir = run_dir
        self.record = record
        # A resume in this viewer goes on with the previous process's output (its log ring and
        # its points): each line once, the page's cursors still valid.
        self.output = output or JobOutput(spec.base, merged=self.merged_output)
        self.log, self.progress = self.output.log, self.output.progress
        self._ended_before_attach = False
        self._lock = threading.Lock()
        self._done = threading.Event()  # the job's process is gone
        self._finished = threading.Event()  # ... and its output read
        self._pause_since: float | None = None
        self._kill_timer: threading.Thread | None = None

    # -- starting and attaching

    @classmethod
    def start(
        cls, spec: Spec, run_dir: Path, record: dict[str, Any], output: JobOutput | None = None
    ) -> Job:
        """The job launched, or JobError with nothing of it left behind (a new run directory it
        made is removed again, a resumed one keeps what it had). `output`: the previous
        process's, when this one resumes it in the same viewer."""
        made = [p for p in (run_dir, *run_dir.parents) if not p.exists()]  # innermost first
        run_dir.mkdir(parents=True, exist_ok=True)
        write_control(run_dir / CONTROL, pause=False, stop=False)
        job = cls(spec, run_dir, record, output)
        job.output.sizes(run_dir)  # a resume appends: what is there is the previous run's
        now = time.time()
        record.update(
            backend=cls.backend,
            started_at=now,
            status="running",
            outcome=None,
            exit_code=None,
            force_killed=False,
            paused_seconds=0.0,
            pauses=[],
            ended_at=None,
            message=None,
        )
        attempts = list(record.get("attempts") or [])
        if record.get("resumed_from"):
            attempts.append(
                {
                    "index": len(attempts) + 1,
                    "started_at": now,
                    "start_timesteps": int(record.get("start_timesteps") or 0),
                    "resumed_from": record["resumed_from"],
                    "stdout_offset": job.output.old_bytes.get("stdout.log", 0),
                }
            )
        record["attempts"] = attempts
        try:
            job.launch()
        except Exception:  # a JobError, or anything else: nothing of a refused start stays
            if made:
                _remove_new_run_dir(run_dir, made)
            raise
        if record.get("resumed_from"):
            if output is not None:  # the log read so far is the previous process's
                job.output.begin_attempt(attempts[-1], now)
            else:  # read from the start: the attempt begins where its output does
                job.output.attempts_from(attempts)
        job.save()
        job._follow()
        return job

    @classmethod
    def attach(cls, spec: Spec, run_dir: Path, record: dict[str, Any]) -> Job:
        """A job from its record: followed while its work is alive, else ended."""
        job = cls(spec, run_dir, record)
        job.output.sizes(run_dir)  # written before this viewer watched: no phase timed by it
        job.output.attempts_from(list(record.get("attempts") or []))
        alive = record.get("status") not in FINAL and job.alive()
        if not alive and record.get("status") not in FINAL:
            record.update(status="exited", ended_at=record.get("ended_at") or time.time())
            job.ended_unseen()
            record["outcome"] = job._outcome(record["status"])
        if not alive:
            record.setdefault("outcome", job._outcome(str(record.get("status"))))
            job._ended_before_attach = True  # a new start need not wait for its log's reading
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
        code = self.await_end()
        self._done.set()
        for reader in readers:
            reader.join()
        self.progress.finish()
        with self._lock:
            if self.record.get("status") not in FINAL:
                self._resume_clock()
                status = self._final_status(code)
                self.record.update(status=status, exit_code=code, ended_at=time.time())
                self.record["outcome"] = self._outcome(status)
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

    def _outcome(self, status: str) -> str:
        """How a job of this final `status` ended, as the page and the JSON say it: "finished"
        (ran to its end), "stopped" (after the user's stop), "forced" (killed after the grace
        period) or "failed" (a non-zero exit, a failure record, a signal nobody here sent)."""
        if self.record.get("force_killed"):
            return "forced"
        if status == "failed":
            return "failed"
        if self.record.get("stop_requested_at"):
            return "stopped"  # (a SIGTERM the stop sent to a script without the control file)
        if status == "killed":
            return "failed"  # a signal nobody here sent: the system's OOM killer, a kill -9
        return "finished"

    # -- requests

    control_path = property(lambda self: self.run_dir / CONTROL)

    def status(self) -> str:
        with self._lock:
            stored = self.record.get("status", "idle")
            if stored in FINAL or stored == "stopping":
                return stored
            if self._pause_since is not None:
                return "paused" if self._acknowledged() else "pausing"
            if self._starting():
                return "starting"
            return "running"

    def _acknowledged(self) -> bool:
        """Whether the script says it is blocked in this pause: its ack names this pause's
        request (or, from an older script, was written since it)."""
        ack = read_ack(self.control_path)
        if ack is None:
            return False
        request = self.record.get("pause_request")
        if ack.get("request") is not None and request is not None:
            return bool(ack["request"] == request)
        return float(ack.get("since") or 0) >= float(self._pause_since or 0)

    def note(self, status: str) -> str | None:
        """What the page says beside `status` (this job's, just read): a pause the script has
        not acknowledged."""
        with self._lock:
            since = self._pause_since
        if since is None or status != "pausing":
            return None
        waited = time.time() - since
        if waited < PAUSE_NOTE_AFTER:
            return None
        return (
            f"the script has not acknowledged the pause for {waited:.0f} s: it pauses at its"
            " next control-file check (does it call rollouts.control? a long update delays it);"
            " a stop works either way"
        )

    def _starting(self) -> bool:
        return self.output.last_output == 0.0 and time.time() - self.record["started_at"] < 5

    @property
    def running(self) -> bool:
        """Whether its work may still run: false at once for a job that had ended before this
        viewer attached (its log may still be being read back; a new start need not wait)."""
        return not (self._ended_before_attach or self._finished.is_set())

    def pause(self) -> None:
        with self._lock:
            self._require_control("pause")
            if self._pause_since is not None:
                raise JobError("the job is already paused")
            request = write_control(self.control_path, pause=True)
            self._pause_since = time.time()
            self.record.update(paused_at=self._pause_since, pause_request=request)
            self.record.setdefault("pauses", []).append([self._pause_since, None])
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
            now = time.time()
            self.record["paused_seconds"] += now - self._pause_since
            pauses = self.record.setdefault("pauses", [])
            if pauses and pauses[-1][1] is None:
                pauses[-1][1] = now
            self._pause_since = None
            self.record.pop("paused_at", None)
            self.record.pop("pause_request", None)

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
                self.stop_without_control()
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
            how = self.force()
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

    # -- what a backend supplies: `backends.Backend` states each hook (the contract, checked by
    # mypy where the registry holds the class and by tests/unit/test_training_registry.py); the
    # defaults here only say that a hook is missing.

    forced_means = "the job was stopped by force"

    def launch(self) -> None:
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def ended_unseen(self) -> None:
        pass

    def await_end(self) -> int | None:
        raise NotImplementedError

    def stop_without_control(self) -> None:
        raise NotImplementedError

    def force(self) -> str:
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
