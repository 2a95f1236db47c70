"""What the demo trainer keeps in its run directory, every file written atomically.

A reader (the viewer, a test polling while the trainer runs, a resume after a SIGKILL) never
sees half a file: each one is written to a temporary name in the same directory (a dot name
that matches no step, checkpoint or JSON pattern) and then `os.replace`d into place.

    checkpoints/baseline.json    before the first step (kept)
    checkpoints/latest.json      the rolling recovery point, after every step (kept)
    checkpoints/step-<N>.json    every --checkpoint-every steps; the last K kept
    checkpoints/emergency.json   on an exception
    resume.json                  {"checkpoint", "timesteps", "step", "updated"}: the target
    stopped.json                 after a graceful stop: what stopped it and what was saved
    training_failure.json        after an exception: the error and the recovery target
    episodes.csv                 episode,reward,length,time: appended whole lines
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from rollouts.control import atomic_write as write_atomically

CHECKPOINTS = "checkpoints"
NUMBERED = re.compile(r"^step-(\d+)\.json$")
EPISODE_COLUMNS = ("episode", "reward", "length", "time")


def atomic_write(target: Path, data: bytes) -> None:
    """`data` at `target`, atomically (`rollouts.control.atomic_write`)."""
    write_atomically(target, lambda file: file.write(data))


def write_json(target: Path, data: Any) -> None:
    atomic_write(target, (json.dumps(data, indent=1) + "\n").encode("utf-8"))


def write_jsonl(target: Path, records: list[dict[str, Any]]) -> None:
    """Records one per line, as the Relax writer does, but replaced whole."""
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    atomic_write(target, lines.encode("utf-8"))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class RunFiles:
    """The files of one run directory; every path it records is relative to that directory."""

    def __init__(self, run_dir: Path, keep: int) -> None:
        self.root = Path(run_dir)
        self.keep = max(1, keep)
        self.checkpoints = self.root / CHECKPOINTS

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def step_file(self, bucket: str, step: int) -> Path:
        return self.root / "rollout_result" / bucket / f"{step}.jsonl"

    def save_checkpoint(self, name: str, state: dict[str, Any]) -> str:
        """Write `checkpoints/<name>.json`; return its relative path."""
        path = self.checkpoints / f"{name}.json"
        write_json(path, {**state, "kind": name.split("-")[0], "saved_at": time.time()})
        return self.relative(path)

    def save_numbered(self, state: dict[str, Any]) -> str:
        """`step-<N>.json`, then drop the oldest numbered ones beyond the last `keep`."""
        saved = self.save_checkpoint(f"step-{state['step']}", state)
        for path in self.numbered()[: -self.keep]:
            path.unlink(missing_ok=True)
        return saved

    def numbered(self) -> list[Path]:
        """The numbered checkpoints, oldest first."""
        found = []
        for path in self.checkpoints.glob("step-*.json"):
            match = NUMBERED.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return [path for _, path in sorted(found)]

    def checkpoint_files(self) -> list[str]:
        names = ("baseline.json", "latest.json", "emergency.json")
        kept = [self.checkpoints / n for n in names if (self.checkpoints / n).exists()]
        return [self.relative(p) for p in [*kept, *self.numbered()]]

    def write_resume(self, checkpoint: str, state: dict[str, Any]) -> None:
        write_json(
            self.root / "resume.json",
            {
                "checkpoint": checkpoint,
                "timesteps": state["timesteps"],
                "step": state["step"],
                "updated": time.time(),
                "regime": state["regime"],
                "seed": state["seed"],
            },
        )

    def start_episodes(self) -> None:
        path = self.root / "episodes.csv"
        if not path.exists() or path.stat().st_size == 0:
            atomic_write(path, (",".join(EPISODE_COLUMNS) + "\n").encode())

    def append_episodes(self, rows: list[tuple[int, float, int, float]]) -> None:
        """Whole lines in one write, so a reader sees no half row but at the very end."""
        text = "".join(f"{e},{r:.4g},{n},{t:.2f}\n" for e, r, n, t in rows)
        fd = os.open(self.root / "episodes.csv", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def write_record(self, name: str, data: dict[str, Any]) -> None:
        """`stopped.json` or `training_failure.json`."""
        write_json(self.root / name, {**data, "checkpoint_files": self.checkpoint_files()})


def load_resume(path: Path) -> tuple[dict[str, Any], Path]:
    """The checkpoint state `--resume PATH` names, and the checkpoint's own path.

    PATH may be a checkpoint, a `resume.json` (its `checkpoint` is relative to its directory),
    or a run directory (its `resume.json`).
    """
    if path.is_dir():
        path = path / "resume.json"
    data = read_json(path)
    if isinstance(data, dict) and isinstance(data.get("checkpoint"), str) and "state" not in data:
        path = path.parent / data["checkpoint"]
        data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("timesteps"), int):
        raise ValueError(f"{path.name} is not a demo trainer checkpoint")
    return data, path
