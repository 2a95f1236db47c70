"""The control file a training loop reads: pause and stop requests, standard library only.

The viewer writes `{"pause": bool, "stop": bool, "updated": <unix time>}` atomically (a
temporary file in the same directory, then `os.replace`), so a reader never sees half a file.
A training loop calls `TrainingControl().check()` every N steps: it blocks while paused (the
time blocked is `paused_seconds`, to leave out of a wall-clock budget) and returns True when a
stop is requested. Signals are only the fallback for scripts that never read the file.

    from rollouts.control import TrainingControl
    control = TrainingControl()          # the path from env RELAX_CONTROL_FILE; none: a no-op
    for step in range(steps):
        if control.check():
            save_and_exit()
        train_one_step()
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

ENV = "RELAX_CONTROL_FILE"
ACK_SUFFIX = ".ack"  # beside the control file: the loop says it is blocked in a pause
POLL_SECONDS = 0.15  # between reads while paused


MAX_BYTES = 1 << 16  # a control file or an ack is a few dozen bytes


def _read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The file's JSON object, or {}: missing, unreadable, too big, or not a regular file (the
    viewer reads the ack on every poll: a FIFO put in its place must not block it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            data = json.loads(file.read(MAX_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def read_control(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The requests in the file, `{"pause", "stop"}`; missing or unreadable: no request."""
    return _requests(_read(path))


def write_control(
    path: str | os.PathLike[str], *, pause: bool | None = None, stop: bool | None = None
) -> float:
    """Set the requests given (the others keep their value), atomically; returns the request's
    `updated` stamp, which the loop's ack of a pause names."""
    target = Path(path)
    current = read_control(target)
    data = {
        "pause": current["pause"] if pause is None else bool(pause),
        "stop": current["stop"] if stop is None else bool(stop),
        "updated": time.time(),
    }
    atomic_write_json(target, data)
    return data["updated"]


def ack_path(path: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(path)}{ACK_SUFFIX}")


def read_ack(path: str | os.PathLike[str]) -> dict[str, float | None] | None:
    """The loop's ack while it is blocked in a pause: `{"since": when it blocked, "request":
    the `updated` stamp of the control file it obeyed}`; None when it is not blocked."""
    data = _read(ack_path(path))
    since = data.get("since")
    if data.get("paused") is not True or not isinstance(since, int | float):
        return None
    request = data.get("request")
    return {"since": float(since), "request": request if isinstance(request, int | float) else None}


def atomic_write(target: Path, write: Callable[[BinaryIO], Any]) -> None:
    """What `write(file)` writes, at `target`: a temporary file in the same directory, flushed
    to disk, then `os.replace`, so a reader (or a resume after a kill -9 mid-save) finds the old
    file or the new one, never half of one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def atomic_write_json(target: Path, data: Any) -> None:
    """`data` as JSON at `target`, atomically (`atomic_write`)."""
    encoded = json.dumps(data).encode("utf-8")
    atomic_write(Path(target), lambda file: file.write(encoded))


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
        raw = _read(self.path)
        state = _requests(raw)
        if not state["pause"] or state["stop"]:
            return bool(state["stop"])
        began = time.monotonic()
        self._ack(True, raw.get("updated"))
        try:
            while True:
                time.sleep(POLL_SECONDS)
                state = read_control(self.path)
                if state["stop"] or not state["pause"]:
                    return state["stop"]
        finally:
            self._paused += time.monotonic() - began
            self._ack(False)

    def _ack(self, paused: bool, request: Any = None) -> None:
        """Tell the viewer the loop is blocked (so it shows "paused", not "pausing"), naming
        the request it obeys (no clock comparison: the cluster's clock may not be the
        viewer's)."""
        if self.path is None:
            return
        data = {"paused": paused, "since": time.time(), "request": request}
        with contextlib.suppress(OSError):
            atomic_write_json(ack_path(self.path), data)


def _requests(data: dict[str, Any]) -> dict[str, bool]:
    return {"pause": data.get("pause") is True, "stop": data.get("stop") is True}
