"""A job's output: `stdout.log` and `stderr.log` in its run directory, followed line by line
into the live log, the progress points and the phase timeline.

A viewer that re-attaches reads them from the start, so the log and the curves come back whole;
the job's record says at which byte of `stdout.log` each resumed attempt began, so its points
are that attempt's again. A resume in the same viewer keeps this object: its readers go on from
where the previous process's ended, so every line is in the log once and the cursor a page
holds stays valid."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from .logring import ERROR, LogRing
from .progress import Progress
from .recovery import path_scrubber
from .runfiles import Refused, open_read

STREAMS = (("stdout.log", "stdout"), ("stderr.log", "stderr"))
POLL = 0.05  # seconds between looks at a log file that has nothing new
MAX_LINE_BYTES = 64 * 1024  # a longer line is cut here; the rest of it, to its newline, skipped
SKIP_BYTES = 1 << 20  # read at a time while skipping the rest of a cut line
CUT = (
    f"[viewer] the line above was longer than {MAX_LINE_BYTES // 1024} KiB:"
    " cut there, the rest of it skipped"
)


class JobOutput:
    def __init__(self, base: Path, merged: bool = False) -> None:
        self.log = LogRing()
        self.progress = Progress()
        self.last_output = 0.0
        self.merged = merged  # stdout and stderr come as one stream: find errors in it too
        self._scrub = path_scrubber(base)  # no server path in an answer, logs included
        self.old_bytes: dict[str, int] = {}  # per log file: the bytes written before this job
        self.read_to: dict[str, int] = {name: 0 for name, _ in STREAMS}  # where reading ended
        self._boundaries: list[dict[str, Any]] = []  # attempts still to begin, by stdout offset

    @property
    def phases(self) -> list[dict[str, Any]]:
        return self.progress.phases

    def follow(self, run_dir: Path, done: threading.Event) -> list[threading.Thread]:
        """Reader threads, one per log file, from where the last reading of this output ended
        (the start, for a new output); each ends at the file's end once `done` is set. What the
        files held before (`sizes` taken before the launch, or at a re-attach) feeds the log,
        the curves and the phase names, but no phase is timed by when it is read (its start and
        length are unknown: null)."""
        readers = [
            threading.Thread(
                target=self._read,
                args=(run_dir / name, name, kind, done, self.old_bytes.get(name, 0)),
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
                self.old_bytes[name] = (run_dir / name).lstat().st_size
            except OSError:
                self.old_bytes[name] = 0

    def attempts_from(self, attempts: list[dict[str, Any]]) -> None:
        """The resumed attempts of a job's record, each begun when the stdout reader reaches
        the byte it started at (a re-attach reads the whole log again)."""
        self._boundaries = sorted(
            (a for a in attempts if isinstance(a.get("stdout_offset"), int)),
            key=lambda a: int(a["stdout_offset"]),
        )

    def begin_attempt(self, attempt: dict[str, Any], at: float | None) -> None:
        """A resumed process starts: its points are a new attempt, and the log says so."""
        start = int(attempt.get("start_timesteps") or 0)
        source = attempt.get("resumed_from")
        self.progress.begin_attempt(start, source, attempt.get("started_at", at))
        said = f" from {source}" if source else ""
        self.log.add(f"[viewer] resumed{said} at {start} timesteps", "stdout")

    def _read(self, path: Path, name: str, kind: str, done: threading.Event, old: int) -> None:
        """`path` line by line from where reading ended, until `done` and its end. A line
        longer than MAX_LINE_BYTES is cut there and the rest of it skipped, with a line saying
        so: a child writing without newlines costs this reader MAX_LINE_BYTES, not its output."""
        stream = self._opened(path, done)
        if stream is None:
            return
        with stream:
            stream.seek(self.read_to[name])
            line_start = stream.tell()
            partial = b""
            skipping = False  # in the rest of a line that was cut
            while True:
                limit = SKIP_BYTES if skipping else MAX_LINE_BYTES + 1 - len(partial)
                chunk = stream.readline(limit)
                whole = chunk.endswith(b"\n")
                if skipping:
                    skipping = not whole
                    if whole:
                        line_start = self.read_to[name] = stream.tell()
                elif whole or len(partial) + len(chunk) > MAX_LINE_BYTES:
                    end = stream.tell()
                    if kind == "stdout":
                        self._reach(line_start)
                    text = partial + chunk if whole else (partial + chunk)[:MAX_LINE_BYTES]
                    self.line(text.decode("utf-8", "replace"), kind, end > old)
                    if not whole:
                        self.log.add(CUT, "stdout")
                        skipping = True
                    partial, line_start = b"", end
                    self.read_to[name] = end
                    continue
                else:
                    partial += chunk
                if chunk:
                    continue
                if done.is_set():
                    if partial:
                        self.line(partial.decode("utf-8", "replace"), kind)
                    self.read_to[name] = stream.tell()
                    return
                time.sleep(POLL)

    def _opened(self, path: Path, done: threading.Event) -> BinaryIO | None:
        """The log file, once it exists (None if it never does before `done`); never through a
        symbolic link, never a FIFO: a file that is not the job's output is not read."""
        while True:
            try:
                return open_read(path)
            except FileNotFoundError:
                if done.is_set():
                    return None
                time.sleep(POLL)
            except Refused as exc:
                self.log.add(f"[viewer] {exc}", "error")
                return None

    def _reach(self, offset: int) -> None:
        while self._boundaries and int(self._boundaries[0]["stdout_offset"]) <= offset:
            self.begin_attempt(self._boundaries.pop(0), None)

    def line(self, text: str, kind: str, timed: bool = True) -> None:
        """One line; `timed`: written now, so a phase it starts starts now."""
        now = time.time()
        self.last_output = now  # (an old line too: the job has said something)
        if kind == "stdout":
            kind = self.progress.feed(text, now if timed else None) or kind
            if kind == "stdout" and self.merged and ERROR.search(text):
                kind = "error"
        self.log.add(self._scrub(text), kind)
