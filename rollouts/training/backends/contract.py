"""What a training backend supplies: the `Backend` protocol. `job.Job` is the shared machinery
(the record, the output, pause and resume through the control file, the stop and its grace,
the outcome); a backend is a subclass of it that supplies these hooks, and `Job` calls them
and nothing else of the backend's own."""

from __future__ import annotations

from typing import Protocol


class Backend(Protocol):
    """The hooks `job.Job` calls on the class that runs its work. `launch` runs in `start`
    before any thread shares the job; `stop_without_control` and `force` with the job's lock
    held (they may write the record); `await_end` on the job's own waiting thread."""

    backend: str  # its name in the registry, in the job's record and in the snapshot
    merged_output: bool  # stdout and stderr come as one stream (`stdout.log` only)
    forced_means: str  # what the force did, as the log says it after the grace

    def launch(self) -> None:
        """Start the work, putting what a re-attach needs into `self.record`; JobError (or
        BackendUnavailable) when it cannot, with nothing of it started."""
        ...

    def alive(self) -> bool:
        """Whether a re-attached record's work still runs."""
        ...

    def ended_unseen(self) -> None:
        """What to record of work that ended while no viewer watched it."""
        ...

    def await_end(self) -> int | None:
        """Block until the work ended and its output is in the log files; its exit code, or
        None when it is not known."""
        ...

    def stop_without_control(self) -> None:
        """The stop for a command that does not read the control file (a signal, a job stop)."""
        ...

    def force(self) -> str:
        """End the work by force after the grace period; how (for `forced_stop.json`)."""
        ...
