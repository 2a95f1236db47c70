"""A Ray cluster as the Ray backend sees it: Ray's own `JobSubmissionClient` for one dashboard
address, made on first use and again after a failure, with every failure said in one line
(unreachable: a 503 and "cluster unreachable" on the page; anything the job server answers with
an error: the job was rejected). Ray is an optional extra, imported only here and only when a
job runs on Ray."""

from __future__ import annotations

import asyncio
import re
import shlex
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ...install import install_hint
from ..job import BackendUnavailable, JobError
from ..snapshot import shown_address

INSTALL_RAY = f"the ray backend needs Ray's job client: {install_hint('ray')}"
TERMINAL = ("STOPPED", "SUCCEEDED", "FAILED")
LAST_ERROR = re.compile(r"^\s*[\w.]*(?:Error|Exception): (.+?)\.?\s*$")
STATUS_PREFIX = re.compile(r"^Request failed with status code \d+: ")
MAX_MESSAGE = 300
# An absolute path inside a message (a traceback's file, a working_dir Ray could not use): the
# cluster's directories are not shown, its last part is.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s'\"/:]+/)+([^\s'\"/:]*)")


T = TypeVar("T")


class Rejected(JobError):
    """The job server answered with an error (a submission it refused, a job it does not know)."""


def one_line(exc: BaseException) -> str:
    """The one line of a Ray error a person needs: the last `...Error: message` of a server
    traceback, else the text after "Request failed with status code N:"."""
    text = str(exc).strip()
    found = [m.group(1) for m in map(LAST_ERROR.match, text.splitlines()) if m]
    line = found[-1] if found else STATUS_PREFIX.sub("", text).splitlines()[0] if text else ""
    return shown_line(line.strip().rstrip(".") or type(exc).__name__)


def shown_line(text: str) -> str:
    """The first line of a message from the cluster, its absolute paths cut to their last
    part, at most MAX_MESSAGE characters."""
    lines = text.strip().splitlines()
    line = ABSOLUTE_PATH.sub(r"\1", lines[0] if lines else "")
    return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 1] + "…"


def status_name(status: Any) -> str:
    return str(getattr(status, "value", status))


def entrypoint_for(command: list[str], working_dir: str) -> str:
    """The Ray entrypoint: the argument list quoted with `shlex.join`, run in the spec's
    directory as the cluster sees it; `exec`, so Ray's stop signals reach the command itself."""
    return f"cd {shlex.quote(working_dir)} && exec {shlex.join(command)}"


def ray_available() -> bool:
    try:
        from ray.job_submission import JobSubmissionClient  # noqa: F401
    except ImportError:
        return False
    return True


def _client(address: str) -> Any:
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError:
        raise BackendUnavailable(INSTALL_RAY) from None
    return JobSubmissionClient(address)


class Cluster:
    def __init__(self, address: str) -> None:
        self.address = address
        self.shown = shown_address(address)
        self.reachable: bool | None = None
        self.message: str | None = None
        self._client: Any = None
        self._lock = threading.Lock()

    def _unreachable(self, exc: BaseException) -> BackendUnavailable:
        self._client = None  # made again on the next call
        reason = shown_line(str(exc)) or type(exc).__name__
        if "Failed to connect" in reason or "Max retries" in reason or "Connection" in reason:
            reason = "no answer from its dashboard"
        self.reachable, self.message = False, f"cluster unreachable at {self.shown}: {reason}"
        return BackendUnavailable(self.message)

    def _call(self, request: Callable[[Any], T]) -> T:
        """`request` on Ray's `JobSubmissionClient`: BackendUnavailable when the cluster does
        not answer, Rejected when its job server answers with an error."""
        try:
            with self._lock:
                if self._client is None:
                    self._client = _client(self.address)
                client = self._client
            result = request(client)
        except JobError:
            raise
        except OSError as exc:  # ConnectionError, and every `requests` error
            raise self._unreachable(exc) from None
        except Exception as exc:  # the job server's answer, whatever Ray raised for it
            self.reachable, self.message = True, None
            raise Rejected(one_line(exc)) from None
        self.reachable, self.message = True, None
        return result

    # Ray's job-submission calls the backend makes, each through `_call`.

    def submit_job(
        self,
        *,
        entrypoint: str,
        submission_id: str,
        runtime_env: dict[str, Any],
        metadata: dict[str, str],
    ) -> str:
        return str(
            self._call(
                lambda client: client.submit_job(
                    entrypoint=entrypoint,
                    submission_id=submission_id,
                    runtime_env=runtime_env,
                    metadata=metadata,
                )
            )
        )

    def get_job_info(self, submission_id: str) -> Any:
        """Ray's `JobDetails` (status, driver_exit_code, message, ...)."""
        return self._call(lambda client: client.get_job_info(submission_id))

    def get_job_status(self, submission_id: str) -> Any:
        return self._call(lambda client: client.get_job_status(submission_id))

    def stop_job(self, submission_id: str) -> bool:
        return bool(self._call(lambda client: client.stop_job(submission_id)))

    def get_job_logs(self, submission_id: str) -> str:
        return str(self._call(lambda client: client.get_job_logs(submission_id)))

    def tail(self, submission_id: str, chunk: Callable[[str], None]) -> None:
        """Ray's incremental log (a websocket from the start of the job's log), each piece to
        `chunk`, until the job has ended; BackendUnavailable when the stream breaks first."""
        self.get_job_status(submission_id)  # the client made, or one line why not
        client = self._client
        if client is None:
            raise BackendUnavailable(self.message or f"cluster unreachable at {self.shown}")

        async def follow() -> None:
            async for text in client.tail_job_logs(submission_id):
                chunk(text)

        try:
            asyncio.run(follow())
        except Exception as exc:  # the socket closed or failed before the job ended
            raise self._unreachable(exc) from None
