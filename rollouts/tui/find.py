"""Find in the shown sample: the find bar, the matches, and where they are on screen.

The bar is a widget (an input and a "2/5" count); the app asks it for the query and tells it
the count, and uses the functions here to mark the matches in the rendered text and to scroll
to the current one.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Label

CURRENT_STYLE = "black on yellow"
OTHER_STYLE = "reverse"


def find_matches(text: str, query: str) -> list[int]:
    """Start offsets of `query` in `text`, case-insensitive, not overlapping."""
    if not query:
        return []
    return [m.start() for m in re.finditer(re.escape(query), text, re.IGNORECASE)]


def highlight(text: Text, matches: list[int], length: int, current: int) -> None:
    """Mark every match in `text`; `current` (1-based) stands out."""
    for number, start in enumerate(matches, 1):
        text.stylize(CURRENT_STYLE if number == current else OTHER_STYLE, start, start + length)


def rows_above(plain: str, offset: int, width: int) -> int:
    """Screen rows above `offset` of `plain` in a pane `width` columns wide (soft wraps too)."""
    return sum(max(1, -(-len(line) // width)) for line in plain[:offset].split("\n"))


class FindBar(Horizontal):
    """Hidden until `f`: the query input (`#find`) and the match count (`#find-count`)."""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in this sample", id="find")
        yield Label("", id="find-count")

    def on_mount(self) -> None:
        self.display = False

    @property
    def query_text(self) -> str:
        """What to find: the input's text while the bar is open."""
        return self.query_one("#find", Input).value if self.display else ""

    def open(self) -> None:
        self.display = True
        self.query_one("#find", Input).focus()

    def close(self) -> None:
        self.query_one("#find", Input).value = ""
        self.display = False

    def show_count(self, current: int, total: int) -> None:
        count = self.query_one("#find-count", Label)
        if not self.query_text:
            count.update("")
        elif not total:
            count.update("no match")
        else:
            count.update(f"{current}/{total}")
