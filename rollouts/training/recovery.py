"""What a run directory offers to recover from: `resume.json`, checkpoints, a forced stop, a
failure; and the episode CSV. Paths in answers are relative to the run directory, never absolute.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from .runfiles import read_small
from .spec import Spec

MAX_JSON_BYTES = 1 << 20
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where `rollouts` is installed


def read_json(path: Path) -> Any:
    """A small JSON file's content, or None (missing, too big, unreadable, not a regular file:
    a FIFO a job put there must not hold the reading thread)."""
    data = read_small(path, MAX_JSON_BYTES)
    try:
        return json.loads(data.decode("utf-8")) if data is not None else None
    except (ValueError, RecursionError):
        return None


def scrub(value: Any) -> Any:
    """`value` with every absolute path replaced by its last part (no server path goes out)."""
    if isinstance(value, dict):
        return {str(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and (value.startswith("/") or re.match(r"^[A-Za-z]:\\", value)):
        return PurePosixPath(value.replace("\\", "/")).name
    return value


def path_scrubber(base: Path) -> Callable[[str], str]:
    """A log line with this machine's directories cut out (a traceback's file names): the spec's
    directory (paths become relative), then the interpreter's prefixes, the package, the home."""
    roots = {str(base.resolve()): ""}
    for other in (sys.prefix, sys.base_prefix, sys.exec_prefix, PACKAGE_ROOT, Path.home()):
        roots.setdefault(str(Path(other).resolve()), "…/")
    ordered = sorted((r for r in roots if r not in ("/", "")), key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(r) + r"(?:/|(?![\w.-]))" for r in ordered))
    return lambda text: pattern.sub(lambda m: roots[m.group(0).rstrip("/")], text)


def checkpoints(spec: Spec, run_dir: Path) -> list[dict[str, Any]]:
    """The checkpoints, newest first, one entry each: a model file and its JSON sidecar of the
    same stem (SB3's `ppo_2048.zip` + `ppo_2048.json`) are one checkpoint named by the model;
    a JSON alone (a script that checkpoints as JSON) is its own. {"name", "sidecar",
    "timesteps" (the sidecar's, when it says), "kind"}."""
    directory = run_dir / spec.checkpoints
    try:
        entries = [e for e in os.scandir(directory) if e.is_file() and not e.name.startswith(".")]
    except OSError:
        return []
    by_stem: dict[str, dict[str, Any]] = {}
    for entry in entries:
        stem, suffix = os.path.splitext(entry.name)
        group = by_stem.setdefault(stem, {"model": None, "json": None, "mtime": 0.0})
        group["json" if suffix == ".json" else "model"] = entry.name
        group["mtime"] = max(group["mtime"], entry.stat().st_mtime)
    groups = sorted(by_stem.items(), key=lambda item: item[1]["mtime"], reverse=True)
    result = []
    for stem, group in groups[:50]:
        sidecar = group["json"] if group["model"] else None
        data = read_json(directory / group["json"]) if group["json"] else None
        ticks = data.get("timesteps") if isinstance(data, dict) else None
        if not isinstance(ticks, int) or isinstance(ticks, bool):
            ticks = None
        kind = next(
            (k for k in ("baseline", "latest", "emergency", "final") if k in stem), "checkpoint"
        )
        result.append(
            {
                "name": f"{spec.checkpoints}/{group['model'] or group['json']}",
                "sidecar": f"{spec.checkpoints}/{sidecar}" if sidecar else None,
                "timesteps": ticks,
                "kind": kind,
            }
        )
    return result


def resume_target(spec: Spec, run_dir: Path) -> dict[str, Any] | None:
    """What to resume from: `resume.json`'s checkpoint when it exists, else the newest
    checkpoint; {"checkpoint": <relative to the run dir>, "timesteps"} or None."""
    pointer = read_json(run_dir / spec.resume_file)
    if isinstance(pointer, dict) and isinstance(pointer.get("checkpoint"), str):
        relative = pointer["checkpoint"]
        target = run_dir / relative
        inside = (
            not PurePosixPath(relative).is_absolute() and ".." not in PurePosixPath(relative).parts
        )
        if inside and target.is_file():  # a dangling or outside pointer: scan instead
            return {"checkpoint": relative, "timesteps": pointer.get("timesteps")}
    found = [c for c in checkpoints(spec, run_dir) if c["kind"] != "baseline"]
    if found:
        return {"checkpoint": found[0]["name"], "timesteps": found[0]["timesteps"]}
    return None


def forced_stop_record(spec: Spec, run_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    return {
        "job_id": record.get("id"),
        "killed_at": time.time(),
        "grace_seconds": spec.grace_seconds,
        "signal": "SIGKILL",
        "reason": f"no exit within {spec.grace_seconds:g} s of the stop request",
        "recovery": resume_target(spec, run_dir),
    }


def recent_json(path: Path, since: float | None) -> Any:
    """`read_json`, but None for a file older than `since` (a previous job's, in a resumed run)."""
    try:
        if since is not None and path.stat().st_mtime < since:
            return None
    except OSError:
        return None
    return read_json(path)


def recovery(spec: Spec, run_dir: Path | None, since: float | None = None) -> dict[str, Any]:
    """What to recover from; a forced stop or a failure only when written since the job began."""
    if run_dir is None:
        return {"resume": None, "checkpoints": [], "forced_stop": None, "failure": None}
    pointer = read_json(run_dir / spec.resume_file)
    forced = recent_json(run_dir / "forced_stop.json", since)
    failure = recent_json(run_dir / "training_failure.json", since)
    return {
        "resume": scrub(pointer) if isinstance(pointer, dict) else None,
        "checkpoints": checkpoints(spec, run_dir),
        "forced_stop": scrub(forced) if isinstance(forced, dict) else None,
        "failure": scrub(failure) if isinstance(failure, dict) else None,
    }
