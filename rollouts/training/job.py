"""One training process: started in its own process group, its output read, paused, resumed and
stopped through the control file, killed with its whole group after the grace period.

The child writes its stdout and stderr to `stdout.log` / `stderr.log` in the run directory
and reader threads follow those files: a viewer restarted while the child runs re-attaches
(`attach`) and reads the same files from the start, so the log and the curves come back whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from ..control import atomic_write_json, read_ack, write_control
from . import process
from .logring import LogRing
from .progress import Progress
from .recovery import forced_stop_record, path_scrubber, read_json

RECORD = "job.json"
CONTROL = "control.json"
STREAMS = (("stdout.log", "stdout"), ("stderr.log", "stderr"))
FINAL = ("exited", "failed", "killed")
QUIET_PAUSE = 2.0  # a pause is taken as effective after this long without output (no ack)
POLL = 0.05


class JobError(RuntimeError):
    """A request the job cannot take in its state (a 409)."""


class Job:
    def __init__(self, spec: Any, run_dir: Path, record: dict[str, Any]) -> None:
        self.spec = spec
        self.run_dir = run_dir
        self.record = record
        self.log = LogRing()
        self.progress = Progress()
        self.phases: list[dict[str, Any]] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()  # the process is gone
        self._finished = threading.Event()  # ... and its output read
        self._last_output = 0.0
        self._pause_since: float | None = None
        self._kill_timer: threading.Thread | None = None
        self._scrub = path_scrubber(spec.base)  # no server path in an answer, logs included

    # -- starting and attaching

    @classmethod
    def start(cls, spec: Any, run_dir: Path, record: dict[str, Any]) -> Job:
        run_dir.mkdir(parents=True, exist_ok=True)
        control = run_dir / CONTROL
        write_control(control, pause=False, stop=False)
        job = cls(spec, run_dir, record)
        env = {
            **os.environ,
            "RELAX_CONTROL_FILE": os.path.relpath(control, spec.base),
            "PYTHONUNBUFFERED": "1",
        }
        with open(run_dir / "stdout.log", "ab") as out, open(run_dir / "stderr.log", "ab") as err:
            proc = subprocess.Popen(
                record["command"],
                cwd=spec.base,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                start_new_session=True,  # its own process group: stopped as a whole
            )
        job._proc = proc
        record.update(
            pid=proc.pid,
            pid_start=process.start_time(proc.pid),
            started_at=time.time(),
            status="running",
            exit_code=None,
            force_killed=False,
            paused_seconds=0.0,
            ended_at=None,
        )
        job.save()
        job._follow()
        return job

    @classmethod
    def attach(cls, spec: Any, run_dir: Path, record: dict[str, Any]) -> Job:
        """A job from its record: followed while its process is ours and alive, else ended."""
        job = cls(spec, run_dir, record)
        alive = record.get("status") not in FINAL and process.is_ours(
            int(record.get("pid") or 0), record.get("pid_start")
        )
        if not alive and record.get("status") not in FINAL:
            record.update(status="exited", ended_at=record.get("ended_at") or time.time())
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
        readers = [
            threading.Thread(target=self._read, args=(name, kind), daemon=True)
            for name, kind in STREAMS
        ]
        for reader in readers:
            reader.start()
        threading.Thread(target=self._wait, args=(readers,), daemon=True).start()

    # -- the threads

    def _read(self, name: str, kind: str) -> None:
        path = self.run_dir / name
        partial = b""
        with open(path, "a+b") as stream:
            stream.seek(0)
            while True:
                chunk = stream.readline()
                if chunk.endswith(b"\n"):
                    self._line((partial + chunk).decode("utf-8", "replace"), kind)
                    partial = b""
                    continue
                partial += chunk
                if self._done.is_set() and not chunk:
                    if partial:
                        self._line(partial.decode("utf-8", "replace"), kind)
                    return
                if not chunk:
                    time.sleep(POLL)

    def _line(self, text: str, kind: str) -> None:
        self._last_output = time.time()
        if kind == "stdout":
            kind = self.progress.feed(text) or kind
            phase = self.progress.phase
            if phase and (not self.phases or self.phases[-1]["name"] != phase):
                self.phases.append({"name": phase, "started_at": time.time()})
                del self.phases[:-100]
        self.log.add(self._scrub(text), kind)

    def _wait(self, readers: list[threading.Thread]) -> None:
        code: int | None = None
        if self._proc is not None:
            code = self._proc.wait()
        else:
            pid, started = int(self.record.get("pid") or 0), self.record.get("pid_start")
            while not self._done.is_set() and process.is_ours(pid, started):
                time.sleep(0.2)
        pgid = self.record.get("pid")
        if pgid and process.group_alive(pgid) and self.record.get("status") not in FINAL:
            process.kill_group(pgid)  # what the child left in its group would be orphans
        self._done.set()
        for reader in readers:
            reader.join()
        self.progress.finish()
        with self._lock:
            if self.record.get("status") not in FINAL:
                self._resume_clock()
                if self.record.get("force_killed") or (code is not None and code < 0):
                    status = "killed"
                elif code or (code is None and self._failed_since_start()):
                    status = "failed"  # (re-attached: no exit code, but its failure record)
                else:
                    status = "exited"
                self.record.update(status=status, exit_code=code, ended_at=time.time())
                self.save()
        if self.record.get("status") == "killed" or (code is not None and code < 0):
            self.log.add(f"[viewer] the process was killed (exit code {code})", "error")
        self._finished.set()

    # -- requests

    @property
    def control_path(self) -> Path:
        return self.run_dir / CONTROL

    def status(self) -> str:
        with self._lock:
            stored = self.record.get("status", "idle")
            if stored in FINAL or stored == "stopping":
                return stored
            if self._pause_since is not None:
                ack = read_ack(self.control_path)
                quiet = time.time() - max(self._pause_since, self._last_output)
                return (
                    "paused"
                    if (ack or 0) >= self._pause_since or quiet > QUIET_PAUSE
                    else "pausing"
                )
            if self._last_output == 0.0 and time.time() - self.record["started_at"] < 5:
                return "starting"
            return "running"

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
                process.kill_group(self.record["pid"], signal.SIGTERM)
            self.log.add("[viewer] stop requested", "stdout")
        self._kill_timer = threading.Thread(target=self._kill_after_grace, daemon=True)
        self._kill_timer.start()

    def _kill_after_grace(self) -> None:
        if self._done.wait(self.spec.grace_seconds):
            return
        with self._lock:
            self.record["force_killed"] = True
            process.kill_group(self.record["pid"])
            atomic_write_json(
                self.run_dir / "forced_stop.json",
                forced_stop_record(self.spec, self.run_dir, self.record),
            )
            self.save()
        self.log.add(
            f"[viewer] no exit within {self.spec.grace_seconds:g} s of the stop request:"
            " the process group was killed (see forced_stop.json)",
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

    @staticmethod
    def read_record(run_dir: Path) -> dict[str, Any] | None:
        record = read_json(run_dir / RECORD)
        return record if isinstance(record, dict) and "command" in record else None
