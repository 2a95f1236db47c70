"""The live log: the last MAX_LINES lines, each numbered, so a client asks for what is newer."""

from __future__ import annotations

import re
import threading
from collections import deque
from typing import Any

MAX_LINES = 4000
MAX_LINE_CHARS = 4000  # a line longer than this is cut (a progress bar without newlines)
ERROR = re.compile(r"Traceback \(most recent call last\)|\b\w*(Error|Exception)\b|\bFATAL\b")


class LogRing:
    def __init__(self, max_lines: int = MAX_LINES) -> None:
        self.lines: deque[tuple[int, str, str]] = deque(maxlen=max_lines)
        self.cursor = 0  # the number of the newest line
        self._lock = threading.Lock()

    def add(self, text: str, kind: str) -> None:
        text = text.rstrip("\r\n")[:MAX_LINE_CHARS]
        if kind == "stderr" and ERROR.search(text):
            kind = "error"
        with self._lock:
            self.cursor += 1
            self.lines.append((self.cursor, text, kind))

    def tail(self, limit: int | None = None, after: int | None = None) -> dict[str, Any]:
        with self._lock:
            lines = [line for line in self.lines if after is None or line[0] > after]
            cursor = self.cursor
        if limit is not None:
            lines = lines[-limit:] if limit > 0 else []
        return {
            "lines": [{"n": n, "text": text, "kind": kind} for n, text, kind in lines],
            "cursor": cursor,
        }
