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
        self.phases: list[dict[str, float | str]] = []
        self.last_output = 0.0
        self.merged = merged  # stdout and stderr come as one stream: find errors in it too
        self._scrub = path_scrubber(base)  # no server path in an answer, logs included

    def follow(self, run_dir: Path, done: threading.Event) -> list[threading.Thread]:
        """Reader threads, one per log file; each ends at the file's end once `done` is set."""
        readers = [
            threading.Thread(target=self._read, args=(run_dir / name, kind, done), daemon=True)
            for name, kind in STREAMS
        ]
        for reader in readers:
            reader.start()
        return readers

    def _read(self, path: Path, kind: str, done: threading.Event) -> None:
        partial = b""
        with open(path, "a+b") as stream:
            stream.seek(0)
            while True:
                chunk = stream.readline()
                if chunk.endswith(b"\n"):
                    self.line((partial + chunk).decode("utf-8", "replace"), kind)
                    partial = b""
                    continue
                partial += chunk
                if done.is_set() and not chunk:
                    if partial:
                        self.line(partial.decode("utf-8", "replace"), kind)
                    return
                if not chunk:
                    time.sleep(POLL)

    def line(self, text: str, kind: str) -> None:
        self.last_output = time.time()
        if kind == "stdout":
            kind = self.progress.feed(text) or kind
            if kind == "stdout" and self.merged and ERROR.search(text):
                kind = "error"
            phase = self.progress.phase
            if phase and (not self.phases or self.phases[-1]["name"] != phase):
                self.phases.append({"name": phase, "started_at": time.time()})
                del self.phases[:-100]
        self.log.add(self._scrub(text), kind)
