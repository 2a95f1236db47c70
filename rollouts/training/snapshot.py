"""The snapshot `GET api/train/state` answers: job, progress, metrics, reading, cards, log,
episodes, recovery. Built the same way for a real job and for the offline preview, so both have
exactly the same keys."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

from .backends import shown_address
from .convergence import cards, convergence, metric_keys
from .episodes import episodes
from .logring import LogRing
from .progress import Progress
from .recovery import recovery, scrub

DEFAULT_LOG_TAIL = 500
PREVIEWS = ("rising", "plateau", "kl")


def shown_command(command: list[str]) -> list[str]:
    """The command as shown: the interpreter's absolute path as `python`."""
    return ["python" if arg == sys.executable else str(scrub(arg)) for arg in command]


def backend_part(
    kind: str, address: str | None = None, submission_id: str | None = None
) -> dict[str, Any]:
    """Where the job runs: `local`, or `ray` with the cluster's address (no user or password),
    the submission id, whether the cluster answered the last call and, if not, why."""
    if address:
        address = shown_address(address)
    return {
        "kind": kind,
        "address": address,
        "submission_id": submission_id,
        "reachable": None,
        "message": None,
        "ray_status": None,
    }


def job_part(
    record: dict[str, Any] | None,
    status: str,
    wall: float | None,
    backend: dict[str, Any] | None = None,
) -> dict[str, Any]:
    record = record or {}
    command = shown_command(record.get("command", []))
    return {
        "id": record.get("id"),
        "status": status,
        "pid": record.get("pid"),
        "command": command,
        "command_line": shlex.join(command),
        "started_at": record.get("started_at"),
        "wall_seconds": wall,
        "exit_code": record.get("exit_code"),
        "force_killed": bool(record.get("force_killed")),
        "values": scrub(record.get("values", {})),
        "run": record.get("run"),
        "device": record.get("device"),
        "message": record.get("message"),
        "backend": backend or backend_part("local"),
    }


def progress_part(
    progress: Progress,
    phases: list[dict[str, Any]],
    wall: float | None,
    end: float | None,
    start_ticks: int = 0,
) -> dict[str, Any]:
    """Throughput counts the timesteps this process ran (`start_ticks`: where a resume began)."""
    points = progress.snapshot(limit=1)
    ticks = points[-1].timesteps if points else None
    total = progress.total
    fraction = min(1.0, ticks / total) if ticks is not None and total else None
    throughput = None
    if ticks is not None and wall:
        done = ticks - start_ticks
        throughput = done / wall if done > 0 else None
    eta = None
    if throughput and total and ticks is not None:
        eta = max(0.0, (total - ticks) / throughput)
    now = end or time.time()
    timeline = []
    for n, phase in enumerate(phases):
        until = phases[n + 1]["started_at"] if n + 1 < len(phases) else now
        began = phase["started_at"]
        seconds = until - began if until is not None and began is not None else None
        timeline.append({"name": phase["name"], "started_at": began, "seconds": seconds})
    return {
        "timesteps": ticks,
        "total": total,
        "fraction": fraction,
        "throughput": throughput,
        "eta_seconds": eta,
        "phase": progress.phase,
        "phases": timeline,
    }


def assemble(
    spec: Any,
    job: dict[str, Any],
    progress: Progress,
    phases: list[dict[str, Any]],
    log: LogRing,
    run_dir: Path | None,
    params: dict[str, Any],
    end: float | None = None,
    preview: str | None = None,
    start_ticks: int = 0,
    tensorboard: dict[str, Any] | None = None,
) -> dict[str, Any]:
    derived = progress.derived(
        lambda every: {
            "keys": metric_keys(every),
            "reading": convergence(every, spec.main_metric),
            "cards": cards(every, spec.metrics),
        }
    )
    shown, cursor = progress.since(params.get("after_metric"), params.get("metric_limit"))
    return {
        "job": job,
        "progress": progress_part(progress, phases, job["wall_seconds"], end, start_ticks),
        "metrics": {
            "points": [p.as_json() for p in shown],
            "cursor": cursor,
            "keys": derived["keys"],
        },
        "reading": derived["reading"],
        "cards": derived["cards"],
        "log": log.tail(params.get("log_tail", DEFAULT_LOG_TAIL), params.get("after_log")),
        "episodes": episodes(spec, run_dir),
        "recovery": recovery(spec, run_dir, job["started_at"]),
        "links": {"samples": None, "trends": None, "stats": None},
        "preview": preview,
        # The spec's TensorBoard directory, read as a third progress source (None: not named).
        "tensorboard": tensorboard,
    }
