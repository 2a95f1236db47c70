"""The control file a training loop reads: pause and stop requests (standard library only).

A minimal stand-in for helper CORE's module of the same API (issue 13's contract); theirs
replaces this one at the merge. `{"pause": bool, "stop": bool, "updated": <unix time>}`,
written atomically (a temporary file in the same directory, then `os.replace`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

ENV = "RELAX_CONTROL_FILE"
POLL_SECONDS = 0.15  # between reads while paused


def read_control(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The requests in the file; a missing or unreadable file requests nothing."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    return {"pause": data.get("pause") is True, "stop": data.get("stop") is True}


def write_control(
    path: str | os.PathLike[str], *, pause: bool | None = None, stop: bool | None = None
) -> None:
    """Set the requests given (the others keep their value), atomically."""
    target = Path(path)
    current = read_control(target)
    data = {
        "pause": current["pause"] if pause is None else bool(pause),
        "stop": current["stop"] if stop is None else bool(stop),
        "updated": time.time(),
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(data, file)
    os.replace(temporary, target)


class TrainingControl:
    """What a training loop asks between steps: whether to stop (blocking while paused)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        raw = path if path is not None else os.environ.get(ENV) or None
        self.path = Path(raw) if raw is not None else None
        self._paused = 0.0

    @property
    def paused_seconds(self) -> float:
        """Total time `check` spent blocked in a pause."""
        return self._paused

    def check(self) -> bool:
        """True when a stop is requested; while a pause is, blocks until resumed or stopped."""
        if self.path is None:
            return False
        state = read_control(self.path)
        if not state["pause"] or state["stop"]:
            return bool(state["stop"])
        began = time.monotonic()
        try:
            while True:
                time.sleep(POLL_SECONDS)
                state = read_control(self.path)
                if state["stop"] or not state["pause"]:
                    return bool(state["stop"])
        finally:
            self._paused += time.monotonic() - began
