"""Is it learning? The shown bucket's reading as one line: the verdict's label in its tone's
style (presentation/learning.py, the web's words and tones), read on a worker thread until the
bucket's steps are all read."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual import work
from textual.widgets import Label
from textual.worker import get_current_worker

from ..presentation import LearningVerdict
from ..store import Catalog, StoreError
from .session import Session
from .text import verdict_text

# A catalog's bucket's reading with its verdict, or None while its steps are still read.
ReadingOf = Callable[[Catalog, str], dict[str, Any] | None]
READING_POLL_S = 0.25  # how often the reading is asked again while the steps are read
READING_WAIT_S = 600.0  # then it stays "reading the steps" until a refresh asks again


class LearningLine(Label):
    """The line under the find bar: `bucket:  LABEL  why`."""

    def __init__(self, session: Session, reading_of: ReadingOf, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.session = session
        self.reading_of = reading_of
        self.bucket: str | None = None
        self.verdict: LearningVerdict | None = None  # the shown bucket's, once read
        self.asked = False  # whether the shown bucket's reading was asked for

    def ask(self) -> None:
        """Show the session's bucket's reading: "reading the steps" now, the verdict once it is
        known. The app asks once its shown step's columns are built (so the reading never
        delays that step); asked once per bucket shown, and again after `forget`."""
        catalog, bucket = self.session.catalog, self.session.bucket
        if bucket == self.bucket and self.asked:
            return
        if bucket != self.bucket:
            self.bucket, self.verdict = bucket, None
            self.update(verdict_text(bucket, None))
        self.asked = True
        self._ask(catalog, bucket)

    def forget(self) -> None:
        """A refresh: the next `ask` reads the reading again (the verdict stays until then)."""
        self.asked = False

    @work(thread=True, exclusive=True, group="learning")
    def _ask(self, catalog: Catalog, bucket: str) -> None:
        worker = get_current_worker()
        deadline = time.monotonic() + READING_WAIT_S
        while not worker.is_cancelled:
            try:
                reading = self.reading_of(catalog, bucket)
            except (StoreError, OSError):
                return
            if reading is not None:
                self.app.call_from_thread(self._show, bucket, reading["verdict"])
                return
            if time.monotonic() > deadline:
                return
            time.sleep(READING_POLL_S)

    def _show(self, bucket: str, verdict: LearningVerdict) -> None:
        if bucket != self.bucket:  # another bucket was chosen meanwhile
            return
        self.verdict = verdict
        self.update(verdict_text(bucket, verdict))
