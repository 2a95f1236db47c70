"""Hosting a training run: the job spec, the process, its progress, its reading (no Django)."""

from .episodes import EPISODE_ROWS, MAX_ROWS
from .job import BackendUnavailable, JobError
from .manager import (
    HostedElsewhere,
    Manager,
    ValidationFailed,
    claim_runs,
    latest_run_dir,
    manager_for,
    stop_leftover,
)
from .preview import preview_snapshot
from .snapshot import PREVIEWS
from .spec import Spec, SpecError
from .specfile import load_spec

__all__ = [
    "EPISODE_ROWS",
    "MAX_ROWS",
    "PREVIEWS",
    "BackendUnavailable",
    "HostedElsewhere",
    "JobError",
    "Manager",
    "Spec",
    "SpecError",
    "ValidationFailed",
    "claim_runs",
    "latest_run_dir",
    "load_spec",
    "manager_for",
    "preview_snapshot",
    "stop_leftover",
]
