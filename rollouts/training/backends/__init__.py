"""Where a training job runs: `local` (a process group on this machine, the default) or `ray` (a
Ray job on a cluster, through Ray's own job API). The choice comes from the spec (`[job]
backend`, `[ray]`), and a command line flag or a setting may override it.

This is the package's face, the one import for the rest of the app: `Backend` (the hooks a
backend supplies), the registry (`BACKENDS`, `backend_for`, `unavailable`) and the checks of a
spec's choice. The modules inside it: `contract` (the protocol), `registry`, `choice` (the
flag, the setting and the `[ray]` table), `local`, `rayjob` and `raycluster` (the only module
that imports Ray, and only when a Ray job runs).
"""

from __future__ import annotations

from ..snapshot import shown_address
from .choice import check_address, ray_options, with_backend
from .contract import Backend
from .raycluster import INSTALL_RAY, ray_available
from .registry import BACKENDS, backend_for, check_backend, unavailable

__all__ = [
    "BACKENDS",
    "INSTALL_RAY",
    "Backend",
    "backend_for",
    "check_address",
    "check_backend",
    "ray_available",
    "ray_options",
    "shown_address",
    "unavailable",
    "with_backend",
]
