"""The one training job a viewer hosts: starting it (fresh, or from the latest checkpoint),
re-attaching to it after a restart, and its snapshot. One manager per spec file, and one process
hosting it: `manager_for` locks the spec file (`flock`, for as long as the process lives), so a
second process (another gunicorn worker, another viewer) answers HostedElsewhere instead of
starting a second job beside the first or showing an idle job while one runs."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from .backends import BACKENDS, backend_for, with_backend
from .job import BackendUnavailable, Job, JobError
from .logring import LogRing
from .progress import Progress
from .recovery import resume_target
from .scalars import TensorBoardSource
from .snapshot import assemble, backend_part, job_part
from .spec import Spec, fill, python
from .specfile import load_spec


class ValidationFailed(JobError):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(
            "the values are invalid: " + "; ".join(f"{k}: {v}" for k, v in errors.items())
        )
        self.errors = errors


class Manager:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.job: Job | None = None
        self._lock = threading.Lock()
        self.launch_problem: str | None = None  # why the last start could not reach its backend
        self._board: tuple[Job, TensorBoardSource] | None = None
        self.job = self._latest_job()

    def _latest_job(self) -> Job | None:
        """The newest job a viewer started here: re-attached when its process still runs."""
        run_dir = latest_run_dir(self.spec)
        record = Job.read_record(run_dir) if run_dir is not None else None
        if not run_dir or not record:
            return None
        name = str(record.get("backend", "local"))
        # (a record of no known backend is followed as a local job, as it always was)
        job_class = backend_for(name if name in BACKENDS else "local")
        return job_class.attach(self.spec, run_dir, record)

    def _new_id(self) -> tuple[str, Path]:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for n in range(1, 1000):
            job_id = stamp if n == 1 else f"{stamp}-{n}"
            run_dir = self.spec.base / fill(self.spec.run_dir, {"job_id": job_id})
            if not run_dir.exists():
                return job_id, run_dir
        raise JobError("no free job id")

    def start(self, values: Any, resume_latest: bool = False) -> Job:
        with self._lock:
            if self.job is not None and self.job.running:
                raise JobError("a job is already running (a paused job counts): stop it first")
            base: dict[str, Any] = {}
            builtins: dict[str, str] = {"python": python()}
            if resume_latest:
                if not self.spec.resume_args:
                    raise JobError("this spec has no resume_args: it cannot resume")
                previous = self.job
                target = resume_target(self.spec, previous.run_dir) if previous else None
                if previous is None or target is None:
                    raise JobError("no checkpoint to resume from (no resume.json, no checkpoint)")
                base = dict(previous.record.get("values", {}))
                carried = {
                    "submissions": previous.record.get("submissions") or [],
                    "attempts": previous.record.get("attempts") or [],
                }
                job_id, run_dir = previous.record["id"], previous.run_dir
                builtins["resume_path"] = _relative(run_dir / target["checkpoint"], self.spec.base)
                start_ticks = target["timesteps"] if isinstance(target["timesteps"], int) else 0
                output = previous.output
            else:
                job_id, run_dir = self._new_id()
                start_ticks = 0
                carried = {}
                output = None
            clean, errors = self.spec.validate(values, base)  # a refusal is said at once
            if errors:
                raise ValidationFailed(errors)
            if resume_latest and previous is not None:
                # The resumed process's lines follow the previous one's in the same log ring:
                # its readers must have reached the end of the files first.
                previous.wait(10)
            relative_run = _relative(run_dir, self.spec.base)
            builtins.update(
                job_id=job_id, run_dir=relative_run, control_file=f"{relative_run}/control.json"
            )
            record = {
                "id": job_id,
                "run": run_dir.name,
                "command": self.spec.command_for(clean, builtins),
                "values": clean,
                "device": str(clean.get("device", self.spec.device)),
                "resumed_from": builtins.get("resume_path"),
                "start_timesteps": start_ticks,
                **carried,
            }
            try:
                self.job = backend_for(self.spec.backend).start(self.spec, run_dir, record, output)
            except BackendUnavailable as exc:
                self.launch_problem = str(exc)
                raise
            self.launch_problem = None
            return self.job

    def rollout_dir(self) -> Path | None:
        return self.job.run_dir / self.spec.rollout_result if self.job else None

    def backend(self) -> dict[str, Any]:
        """Where jobs run: the running job's backend (or the last job's, when the spec still
        runs there), else the spec's; a start that could not reach the cluster says so until a
        start succeeds."""
        job = self.job
        if job is not None and (job.running or job.backend == self.spec.backend):
            part = job.backend_part()
        else:
            part = backend_part(self.spec.backend, self.spec.ray.get("address"))
        if self.launch_problem:
            part.update(reachable=False, message=self.launch_problem)
        return part

    def snapshot(self, params: dict[str, Any]) -> dict[str, Any]:
        job = self.job
        if job is None:
            idle = job_part(None, "idle", None, self.backend())
            return assemble(self.spec, idle, Progress(), LogRing(), None, params)
        board = self._tensorboard_of(job)
        board.feed(job.progress, final=not job.running)
        status = job.status()  # (reads the ack file once a poll)
        part = job_part(job.record, status, job.wall_seconds(), self.backend())
        part["note"] = job.note(status)
        return assemble(
            self.spec,
            part,
            job.progress,
            job.log,
            job.run_dir,
            params,
            end=job.record.get("ended_at"),
            pauses=job.record.get("pauses") or [],
            spec_total=self.spec.total_of(job.record.get("values") or {}),
            tensorboard=board.source(),
        )

    def _tensorboard_of(self, job: Any) -> TensorBoardSource:
        """The job's TensorBoard directory as a progress source (one per job, kept here)."""
        if self._board is None or self._board[0] is not job:
            self._board = (job, TensorBoardSource(self.spec, job.run_dir))
        return self._board[1]

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop the running job (gracefully, then by force after the grace) and wait for it."""
        job = self.job
        if job is None or not job.running:
            return
        with contextlib.suppress(JobError):
            job.stop()
        job.wait(timeout if timeout is not None else self.spec.grace_seconds + 5)


def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


_managers: dict[str, Manager] = {}
_managers_lock = threading.Lock()


class HostedElsewhere(RuntimeError):
    """This process cannot host the spec's jobs (another one does, or the lock cannot be made)."""


_claims: dict[str, int] = {}  # spec path -> the open descriptor holding its lock


def claim_runs(spec: Spec) -> int:
    """The spec file locked for this process (`flock`, nothing written): the descriptor that
    holds the lock, released when it is closed or the process ends."""
    try:
        fd = os.open(spec.path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise HostedElsewhere(f"cannot open the spec {spec.path.name}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise HostedElsewhere(
            f"training of {spec.path.name} is hosted by another process; run the site in one "
            "process (gunicorn: one worker, several threads)"
        ) from None
    return fd


def manager_for(
    spec_path: str | os.PathLike[str], backend: str | None = None, address: str | None = None
) -> Manager:
    """This process's manager of the spec (its backend and Ray address overridden by a flag or
    a setting, on first use); HostedElsewhere when another process hosts it."""
    key = str(Path(spec_path).expanduser().resolve())
    with _managers_lock:
        manager = _managers.get(key)
        if manager is None:
            spec = with_backend(load_spec(key), backend, address)
            _claims[key] = claim_runs(spec)
            manager = _managers[key] = Manager(spec)
        return manager


def forget_managers() -> None:
    """For tests: stop what they started and let go of the locks; the next `manager_for` reads
    its spec again."""
    with _managers_lock:
        managers = list(_managers.values())
        claims = list(_claims.values())
        _managers.clear()
        _claims.clear()
    for manager in managers:
        manager.shutdown()
    for fd in claims:
        os.close(fd)


__all__ = ["HostedElsewhere", "JobError", "Manager", "ValidationFailed", "manager_for"]


def latest_run_dir(spec: Spec) -> Path | None:
    """The newest run directory with a job record (none attached: no thread is started)."""
    root = spec.runs_root()
    try:
        dirs = [p for p in root.iterdir() if (p / "job.json").is_file()]
    except OSError:
        return None
    return max(dirs, key=lambda p: (p / "job.json").stat().st_mtime, default=None)


def stop_leftover(spec: Spec) -> None:
    """Stop the newest local job if its process still runs (re-attached through its record); a
    Ray job is left to its cluster, as `ray job submit` leaves it."""
    run_dir = latest_run_dir(spec)
    record = Job.read_record(run_dir) if run_dir is not None else None
    if record is None or record.get("status") in ("exited", "failed", "killed"):
        return
    if record.get("backend", "local") == "local":
        Manager(spec).shutdown()
