"""The Ray backend: the spec's argument list submitted as a Ray job (`JobSubmissionClient`: the
job id is the submission id, a resume adds `-resume-N`; environment variables through
`runtime_env`), its status read from Ray, its log followed through Ray's incremental tail and
kept in `stdout.log` in the run directory (so progress, curves and the log are read exactly as
for a local job, and a restarted viewer or a resume reads them back whole).

Pause, resume and stop go through the control file (the run directory is on storage the
cluster shares); after the grace period, or for a command that does not read the file, Ray's
`stop_job`. When the cluster does not answer, the job keeps its last known state and the
snapshot says "cluster unreachable"; the calls are retried until it answers again.
"""

from __future__ import annotations

import os
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

from ..job import CONTROL, BackendUnavailable, Job, JobError
from ..output import JobOutput
from ..runfiles import Refused, open_append, write_all
from ..snapshot import backend_part
from ..spec import Spec
from .raycluster import (
    TERMINAL,
    Cluster,
    Rejected,
    entrypoint_for,
    one_line,
    shown_line,
    status_name,
)

STATUS_EVERY = 0.5  # seconds between status reads
RETRY_EVERY = 1.0  # seconds before asking an unreachable cluster again
DRAIN_SECONDS = 20.0  # how long the log may still arrive once Ray says the job ended
OUTSIDE = "stopped outside the viewer (Ray's dashboard or `ray job stop`)"


class RayJob(Job):
    backend = "ray"
    merged_output = True  # Ray keeps one log: stdout and stderr together
    forced_means = "Ray's stop_job ended it"

    def __init__(
        self, spec: Spec, run_dir: Path, record: dict[str, Any], output: JobOutput | None = None
    ) -> None:
        super().__init__(spec, run_dir, record, output)
        self.cluster = Cluster(record.get("ray_address") or spec.ray["address"])
        self._ray_status: str | None = record.get("ray_status")
        self._stop_pending = False  # a stop_job the cluster did not take yet
        self._pumped = threading.Event()  # the tail into stdout.log has ended
        self._mirror_lock = threading.Lock()
        self._mirror_closed = False  # the log is complete: a late piece of the tail is dropped
        self._mirror: int | None = None  # stdout.log, opened once (never through a link)

    # -- the backend's hooks

    def launch(self) -> None:
        previous = list(self.record.get("submissions") or [])
        job_id = self.record["id"]
        sid = job_id if not previous else f"{job_id}-resume-{len(previous)}"
        control = self.run_dir / CONTROL
        env = {
            **self.spec.ray.get("env", {}),
            "RELAX_CONTROL_FILE": os.path.relpath(control, self.spec.base),
            "PYTHONUNBUFFERED": "1",
        }
        working_dir = self.spec.ray.get("working_dir") or str(self.spec.base)
        try:
            mirror = open_append(self.run_dir / "stdout.log")  # before anything is submitted
        except Refused as exc:
            raise JobError(str(exc)) from None
        try:
            self.cluster.submit_job(
                entrypoint=entrypoint_for(self.record["command"], working_dir),
                submission_id=sid,
                runtime_env={"env_vars": env},
                metadata={"relax_viewer_job": job_id},
            )
        except BaseException as exc:
            os.close(mirror)
            if isinstance(exc, Rejected):
                raise JobError(f"the cluster rejected the job: {exc}") from None
            raise
        said = f"[viewer] submitted as Ray job {sid} to {self.cluster.shown}\n"
        write_all(mirror, said.encode())
        self._mirror = mirror
        self.record.update(
            pid=None,
            ray_address=self.cluster.address,
            submission_id=sid,
            submissions=[*previous, sid],
            ray_status="PENDING",
            log_start=os.fstat(mirror).st_size,
        )

    def alive(self) -> bool:
        info = self._info()
        if info is None:
            return self.cluster.reachable is False  # unknown: followed, said to be unreachable
        return self._ray_status not in TERMINAL

    def ended_unseen(self) -> None:
        code = self.record.get("exit_code")
        self.record.update(status=self._final_status(code), exit_code=code)

    def _info(self) -> Any:
        """Ray's job info, or None (unreachable, or the cluster no longer knows the job)."""
        try:
            info = self.cluster.get_job_info(self.record["submission_id"])
        except BackendUnavailable:
            return None
        except Rejected as exc:
            self._ray_status = "UNKNOWN"
            self.record["message"] = f"the cluster no longer knows the Ray job: {exc}"
            return None
        self._ray_status = self.record["ray_status"] = status_name(info.status)
        if self._ray_status in TERMINAL:
            self.record["exit_code"] = info.driver_exit_code
            if self._ray_status == "FAILED" and info.message:
                self.record["message"] = "Ray: " + shown_line(info.message)
        return info

    def _follow(self) -> None:
        if self._mirror is None and not self.record.get("log_complete"):
            self._open_mirror()  # re-attached: the mirror goes on in the same file
        if not self._done.is_set():
            threading.Thread(target=self._pump, daemon=True).start()
        else:  # ended: its whole log before the readers start (they stop at its end)
            self._complete_log()
            self._pumped.set()
        super()._follow()

    def await_end(self) -> int | None:
        while not self._done.is_set() and self._ray_status not in (*TERMINAL, "UNKNOWN"):
            if self._info() is not None and self._stop_pending:
                self._stop_job()
            time.sleep(STATUS_EVERY if self.cluster.reachable else RETRY_EVERY)
        self._pumped.wait(DRAIN_SECONDS)
        self._complete_log()
        self._close_mirror()
        code = self.record.get("exit_code")
        return code if isinstance(code, int) else None

    def _final_status(self, code: int | None) -> str:
        status = self._ray_status
        if status == "STOPPED":
            if not self.record.get("stop_requested_at"):
                self.record["message"] = OUTSIDE
            return "killed"
        if status == "FAILED" or status == "UNKNOWN":
            return "killed" if self.record.get("force_killed") else "failed"
        return super()._final_status(code)

    def _outcome(self, status: str) -> str:
        if self.record.get("message") == OUTSIDE:
            return "forced"  # stopped from Ray's side: nobody here asked, nothing was saved
        return super()._outcome(status)

    def stop_without_control(self) -> None:
        self._stop_job()

    def force(self) -> str:
        self._stop_job()
        return "Ray stop_job (SIGTERM, then SIGKILL)"

    def _stop_job(self) -> None:
        try:
            self.cluster.stop_job(self.record["submission_id"])
            self._stop_pending = False
        except (BackendUnavailable, Rejected) as exc:
            self._stop_pending = isinstance(exc, BackendUnavailable)
            self.output.log.add(f"[viewer] Ray's stop_job did not go through: {exc}", "error")

    def _starting(self) -> bool:
        return self._ray_status == "PENDING" or super()._starting()

    def backend_part(self) -> dict[str, Any]:
        part = backend_part("ray", self.cluster.address, self.record.get("submission_id"))
        part.update(
            reachable=self.cluster.reachable,
            message=self.cluster.message,
            ray_status=self._ray_status,
        )
        return part

    # -- the log, mirrored from Ray into stdout.log

    def _open_mirror(self) -> None:
        """stdout.log of a re-attached job, opened once for the mirror; a file the viewer will
        not write (a link, another user's) leaves the log unmirrored, and the job says so."""
        try:
            self._mirror = open_append(self.run_dir / "stdout.log")
        except Refused as exc:
            self._mirror_closed = True
            self.record["message"] = f"the Ray log is not mirrored: {exc}"
            self.output.log.add(f"[viewer] {self.record['message']}", "error")

    def _close_mirror(self) -> None:
        with self._mirror_lock:
            self._mirror_closed = True
            if self._mirror is not None:
                os.close(self._mirror)
                self._mirror = None

    def _mirrored(self) -> int:
        """Bytes of this submission's log already in stdout.log (the file the mirror holds
        open, whatever the name now points to)."""
        if self._mirror is None:
            return 0
        size = os.fstat(self._mirror).st_size
        start = self.record.get("log_start")
        return max(0, size - start) if isinstance(start, int) else 0

    def _append(self, skip: list[int] | None, text: str) -> None:
        """`text` onto stdout.log past the first `skip[0]` bytes the stream repeats; with no
        `skip`, Ray's whole log: what the mirror lacks of it, and nothing after. Written
        through the one descriptor the mirror holds, never by opening the name again."""
        data = text.encode("utf-8", "replace")
        with self._mirror_lock:
            if self._mirror_closed or self._mirror is None:
                return
            if skip is None:
                skip, self._mirror_closed = [self._mirrored()], True
            cut = min(skip[0], len(data))
            skip[0] -= cut
            if data[cut:]:
                write_all(self._mirror, data[cut:])

    def _pump(self) -> None:
        """Ray's tail into stdout.log; after a break (cluster unreachable) the stream starts at
        the beginning again, so what is already mirrored is skipped."""
        try:
            while self._ray_status not in (*TERMINAL, "UNKNOWN") and not self._done.is_set():
                with self._mirror_lock:
                    skip = [self._mirrored()]
                try:
                    self.cluster.tail(self.record["submission_id"], partial(self._append, skip))
                    break  # the stream ended with the job
                except (BackendUnavailable, Rejected):
                    time.sleep(RETRY_EVERY)
        finally:
            self._pumped.set()

    def _complete_log(self) -> None:
        """Once the job ended: what the tail did not bring (it broke, or nobody watched), from
        Ray's whole log, once."""
        if self.record.get("log_complete") or "submission_id" not in self.record:
            return
        try:
            whole = self.cluster.get_job_logs(self.record["submission_id"])
        except JobError as exc:
            self.output.log.add(
                f"[viewer] the end of the Ray log is missing: {one_line(exc)}", "error"
            )
            return
        self._append(None, whole)
        self.record["log_complete"] = True
