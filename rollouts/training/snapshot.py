"""The snapshot `GET api/train/state` answers: job, progress, metrics, reading, cards, log,
episodes, recovery. Built the same way for a real job and for the offline preview, so both have
exactly the same keys."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .convergence import cards, convergence, metric_keys
from .episodes import EPISODE_ROWS, episodes
from .logring import LogRing
from .progress import Point, Progress, Running, effective
from .recovery import recovery, scrub
from .spec import Spec

DEFAULT_LOG_TAIL = 500
FINAL = ("exited", "failed", "killed")  # a job's statuses once it ended (it has an outcome)
PREVIEWS = ("rising", "plateau", "kl")


def shown_command(command: list[str]) -> list[str]:
    """The command as shown: the interpreter's absolute path as `python`."""
    return ["python" if arg == sys.executable else str(scrub(arg)) for arg in command]


def shown_address(address: str) -> str:
    """The address without any user name or password in it."""
    parts = urlsplit(address)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


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
        "outcome": record.get("outcome") if status in FINAL else None,
        "note": None,
        "force_killed": bool(record.get("force_killed")),
        "values": scrub(record.get("values", {})),
        "run": record.get("run"),
        "device": record.get("device"),
        "message": record.get("message"),
        "backend": backend or backend_part("local"),
    }


def overlap(pauses: list[Any], began: float, until: float) -> float:
    """Seconds of [began, until] spent paused (a pause still going counts to `until`)."""
    total = 0.0
    for pause in pauses:
        if not isinstance(pause, list | tuple) or len(pause) != 2:
            continue
        start, stop = pause
        if not isinstance(start, int | float):
            continue
        stop = stop if isinstance(stop, int | float) else until
        total += max(0.0, min(stop, until) - max(start, began))
    return total


def throughput_of(running: Running, pauses: list[Any]) -> tuple[float | None, str | None]:
    """Timesteps per second of the running attempt, and where it came from: "progress" (the
    timesteps between its first and latest point written while watched, over that time less
    its pauses: interpreter start-up and model building are not training), else "fps" (the
    latest fps SB3 printed), else none."""
    last = running.last
    if running.first_timed is not None and last is not None and last.at is not None:
        first_ticks, first_at = running.first_timed
        seconds = last.at - first_at - overlap(pauses, first_at, last.at)
        done = last.timesteps - first_ticks
        if seconds > 0 and done > 0:
            return done / seconds, "progress"
    if running.fps is not None and running.fps > 0:
        return float(running.fps), "fps"
    return None, None


def progress_part(
    progress: Progress,
    end: float | None,
    pauses: list[Any] | None = None,
    spec_total: int | None = None,
    started_at: float | None = None,
    running: Running | None = None,
) -> dict[str, Any]:
    """The running attempt's own progress (a resumed run's, not the killed run's maximum); the
    total from its progress JSON, else the spec's total field counted from where it resumed.
    `running`: `progress.running()` when the caller already read it."""
    pauses = pauses or []
    running = running or progress.running()
    attempts, phases = running.attempts, running.phases
    current = attempts[-1]
    if running.last is not None:
        ticks: int | None = running.last.timesteps
    else:
        ticks = current["start_timesteps"] if len(attempts) > 1 else None
    total = progress.total
    if total is None and spec_total is not None:
        total = spec_total + int(current["start_timesteps"])
    fraction = min(1.0, max(0.0, ticks / total)) if ticks is not None and total else None
    throughput, source = throughput_of(running, pauses)
    eta = None
    if throughput and total and ticks is not None:
        eta = max(0.0, (total - ticks) / throughput)
    now = end or time.time()
    timeline = []
    for n, phase in enumerate(phases):
        following = phases[n + 1] if n + 1 < len(phases) else None
        if following is None:
            until = now
        elif following["attempt"] == phase["attempt"]:
            until = following["started_at"]
        else:
            until = None  # the process was ended in this phase: when is not known
        began = phase["started_at"]
        seconds = paused = None
        if until is not None and began is not None:
            paused = overlap(pauses, began, until)
            seconds = max(0.0, until - began - paused)
        timeline.append(
            {
                "name": phase["name"],
                "kind": phase["kind"],
                "attempt": phase["attempt"],
                "started_at": began,
                "seconds": seconds,
                "paused_seconds": paused,
            }
        )
    return {
        "timesteps": ticks,
        "total": total,
        "fraction": fraction,
        "throughput": throughput,
        "throughput_source": source,
        "eta_seconds": eta,
        "started_at": started_at,
        "attempt": current["index"],
        "phase": progress.phase,
        "phases": timeline,
    }


def failed_reading(reading: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """A failed job's reading: "failed", never the curve's green; what the curve read before it
    failed is kept as the first note."""
    code = job.get("exit_code")
    said = f" (exit code {code})" if code is not None else ""
    why = f"the job failed{said}" + (f": {job['message']}" if job.get("message") else "")
    before = f"before it failed the curve read {reading['reading']}: {reading.get('why', '')}"
    return {**reading, "reading": "failed", "why": why, "notes": [before, *reading["notes"]]}


def assemble(
    spec: Spec,
    job: dict[str, Any],
    progress: Progress,
    log: LogRing,
    run_dir: Path | None,
    params: dict[str, Any],
    end: float | None = None,
    preview: str | None = None,
    pauses: list[Any] | None = None,
    spec_total: int | None = None,
    tensorboard: dict[str, Any] | None = None,
) -> dict[str, Any]:
    def compute(every: list[Point], attempts: list[dict[str, Any]]) -> dict[str, Any]:
        history = effective(every, attempts)  # the model's own history across resumes
        return {
            "keys": metric_keys(every),
            "reading": convergence(history, spec.main_metric),
            "cards": cards(history, spec.metrics),
        }

    derived = progress.derived(compute)
    reading = derived["reading"]
    if job.get("outcome") == "failed":
        reading = failed_reading(reading, job)
    shown, cursor = progress.since(params.get("after_metric"), params.get("metric_limit"))
    running = progress.running()
    return {
        "job": job,
        "progress": progress_part(
            progress, end, pauses, spec_total, job.get("started_at"), running
        ),
        "metrics": {
            "points": [p.as_json() for p in shown],
            "cursor": cursor,
            "keys": derived["keys"],
            "attempts": running.attempts,
        },
        "reading": reading,
        "cards": derived["cards"],
        "log": log.tail(params.get("log_tail", DEFAULT_LOG_TAIL), params.get("after_log")),
        "episodes": episodes(
            spec,
            run_dir,
            params.get("episodes_offset", 0),
            params.get("episodes_limit", EPISODE_ROWS),
        ),
        "recovery": recovery(spec, run_dir, job["started_at"]),
        "links": {"samples": None, "trends": None, "stats": None},
        "preview": preview,
        # The spec's TensorBoard directory, read as a third progress source (None: not named).
        "tensorboard": tensorboard,
    }
