"""A job's output: `stdout.log` and `stderr.log` in its run directory, followed line by line
into the live log, the progress points and the phase timeline. Read from the start, so a viewer
that re-attaches (or a resume, which appends) gets the log and the curves back whole."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from .logring import ERROR, LogRing
from .progress import Progress
from .recovery import path_scrubber

STREAMS = (("stdout.log", "stdout"), ("stderr.log", "stderr"))
POLL = 0.05  # seconds between looks at a log file that has nothing new


class JobOutput:
    def __init__(self, base: Path, merged: bool = False) -> None:
        self.log = LogRing()
        self.progress = Progress()
        self.phases: list[dict[str, float | str | None]] = []
        self.last_output = 0.0
        self.merged = merged  # stdout and stderr come as one stream: find errors in it too
        self._scrub = path_scrubber(base)  # no server path in an answer, logs included
        self.old_bytes: dict[str, int] = {}  # per log file: the bytes written before this job

    def follow(self, run_dir: Path, done: threading.Event) -> list[threading.Thread]:
        """Reader threads, one per log file; each ends at the file's end once `done` is set.
        What the files held before (`sizes` taken before the launch, or at a re-attach) is
        read into the log, the curves and the phase names, but no phase is timed by when it is
        read (its start and length are unknown: null)."""
        readers = [
            threading.Thread(
                target=self._read,
                args=(run_dir / name, kind, done, self.old_bytes.get(name, 0)),
                daemon=True,
            )
            for name, kind in STREAMS
        ]
        for reader in readers:
            reader.start()
        return readers

    def sizes(self, run_dir: Path) -> None:
        """The log files' sizes now: what is in them is older than what comes next."""
        for name, _ in STREAMS:
            try:
                self.old_bytes[name] = (run_dir / name).stat().st_size
            except OSError:
                self.old_bytes[name] = 0

    def _read(self, path: Path, kind: str, done: threading.Event, old: int) -> None:
        partial = b""
        with open(path, "a+b") as stream:
            stream.seek(0)
            while True:
                chunk = stream.readline()
                if chunk.endswith(b"\n"):
                    timed = stream.tell() > old
                    self.line((partial + chunk).decode("utf-8", "replace"), kind, timed)
                    partial = b""
                    continue
                partial += chunk
                if done.is_set() and not chunk:
                    if partial:
                        self.line(partial.decode("utf-8", "replace"), kind)
                    return
                if not chunk:
                    time.sleep(POLL)

    def line(self, text: str, kind: str, timed: bool = True) -> None:
        """One line; `timed`: written now, so a phase it starts starts now."""
        self.last_output = time.time()  # (an old line too: the job has said something)
        if kind == "stdout":
            kind = self.progress.feed(text) or kind
            if kind == "stdout" and self.merged and ERROR.search(text):
                kind = "error"
            phase = self.progress.phase
            if phase and (not self.phases or self.phases[-1]["name"] != phase):
                # an old line's phase: its name in the timeline, its times unknown
                self.phases.append({"name": phase, "started_at": time.time() if timed else None})
                del self.phases[:-100]
        self.log.add(self._scrub(text), kind)
