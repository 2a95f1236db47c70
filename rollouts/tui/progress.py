"""The progress bar of the column pass: shown while the open step's columns are decoded (seconds
on a 1 GB step), hidden otherwise."""

from __future__ import annotations

from textual.widgets import ProgressBar

from .session import Session

PROGRESS_INTERVAL = 0.2  # seconds between updates while indexing


class ColumnProgress(ProgressBar):
    def __init__(self, session: Session) -> None:
        super().__init__(id="progress", show_eta=False)
        self.session = session

    def on_mount(self) -> None:
        self.display = False
        self.set_interval(PROGRESS_INTERVAL, self._follow)

    def _follow(self) -> None:
        if not self.app.is_running:  # the timer can fire once more while the app shuts down
            return
        done, total = self.session.columns_progress()
        indexing = self.session.index is not None and not self.session.columns_ready
        self.display = indexing and total > 0
        if self.display:
            self.update(total=total, progress=done)
