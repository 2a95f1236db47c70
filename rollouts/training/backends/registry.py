"""The backends by name: each registered with a loader, so a backend's own dependencies (Ray)
are imported only when a job runs on it. `backend_for` is the dispatch, `unavailable` why a
backend cannot run on this machine."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..job import Job
from ..spec import SpecError
from .contract import Backend
from .raycluster import INSTALL_RAY, ray_available

if TYPE_CHECKING:  # mypy checks that each registered class keeps the contract
    from .local import LocalJob
    from .rayjob import RayJob

    _KEEP_THE_CONTRACT: tuple[type[Backend], ...] = (LocalJob, RayJob)


def _local() -> type[Job]:
    from .local import LocalJob

    return LocalJob


def _ray() -> type[Job]:
    from .rayjob import RayJob  # Ray itself is imported only when a Ray job runs

    return RayJob


# A new backend: a `Job` subclass with the `Backend` hooks in a module of this package, and its
# loader here.
BACKENDS: dict[str, Callable[[], type[Job]]] = {"local": _local, "ray": _ray}


def check_backend(value: Any, where: str = "[job] backend") -> str:
    if value not in BACKENDS:
        raise SpecError(f"{where} must be one of {', '.join(BACKENDS)} (got {value!r})")
    return str(value)


def backend_for(name: str) -> type[Job]:
    """The job class of the backend `name`; SpecError naming the known ones for any other."""
    return BACKENDS[check_backend(name, "the backend")]()


def unavailable(name: str) -> str | None:
    """Why the backend `name` cannot run jobs from this machine (what to install), or None."""
    if name == "ray" and not ray_available():
        return INSTALL_RAY
    return None
