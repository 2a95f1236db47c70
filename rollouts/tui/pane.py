"""The main pane: one presented sample as plain text or a table, its find matches, and scrolling;
above it, the sample's flags (`FlagsLine`).

The app decides what to show (`show`) and with which fields hidden; the pane renders it, marks
the matches of the find query, and scrolls (to a match, a page, an edge).
"""

from __future__ import annotations

from collections.abc import Collection

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label, Static

from ..presentation import PresentedSample
from .find import find_matches, highlight, rows_above
from .text import flags_line, sample_table, sample_text

CONTEXT_ROWS = 3  # rows shown above a match scrolled to


class FlagsLine(Label):
    """The shown sample's flags with their reasons, above it; hidden when it has none."""

    def __init__(self) -> None:
        super().__init__("", id="flags")

    def show(self, flags: list[dict[str, str]] | None) -> None:
        """`flags` as `Session.flags` gives them (None: the columns are not built yet)."""
        self.update("flags: after indexing" if flags is None else flags_line(flags))
        self.display = flags is None or bool(flags)


class SamplePane(VerticalScroll):
    def __init__(self) -> None:
        super().__init__(id="pane")
        self.presented: PresentedSample | None = None
        self.line = 0
        self.plain = ""  # the plain-mode text, where matches are found
        self.matches: list[int] = []
        self.match_number = 0  # 1-based; 0 when there is no current match

    def compose(self) -> ComposeResult:
        yield Static("", id="view")

    def show(self, presented: PresentedSample | None, line: int = 0) -> None:
        self.presented, self.line = presented, line

    def render_sample(self, hidden: Collection[str], table: bool, query: str) -> None:
        """Draw the shown sample (nothing without one), with the matches of `query` marked."""
        if self.presented is None:
            return
        text = sample_text(self.presented, self.line, hidden)
        self.plain = text.plain
        self.matches = find_matches(self.plain, query)
        if self.match_number > len(self.matches):
            self.match_number = min(1, len(self.matches))
        highlight(text, self.matches, len(query), self.match_number)
        view = self.query_one("#view", Static)
        view.update(sample_table(self.presented, self.line, hidden) if table else text)

    def show_message(self, message: str) -> None:
        self.query_one("#view", Static).update(Text(message, style="bold red"))

    def next_match(self) -> bool:
        """Move to the next match (wrapping around); False when there is none."""
        if not self.matches:
            return False
        self.match_number = self.match_number % len(self.matches) + 1
        return True

    def scroll_to_match(self) -> None:
        """Bring the current match into view (plain mode: a table lays rows out its own way)."""
        if not self.matches or not self.match_number:
            return
        offset = self.matches[self.match_number - 1]
        width = max(self.size.width - 2, 20)
        rows = rows_above(self.plain, offset, width)
        self.scroll_to(y=max(rows - CONTEXT_ROWS, 0), animate=False)

    def page(self, direction: int) -> None:
        (self.scroll_page_down if direction > 0 else self.scroll_page_up)(animate=False)

    def edge(self, bottom: bool) -> None:
        (self.scroll_end if bottom else self.scroll_home)(animate=False)
