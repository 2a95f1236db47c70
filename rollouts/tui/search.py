"""Search every step of the bucket from the terminal (`/`): a query, the hits as they come in
(slice after slice of `store.search`, on a worker thread; the latest step first, as on the web),
each with its reward, status and answer check, Enter on a hit to open it.

The screen answers the step name and position of the chosen hit (or None), and the app opens
that sample, as the web's hit list links to it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, Label, OptionList, Select
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from ..presentation import answer_check, hit_badges
from ..store import Catalog, StoreError
from ..store.search import Budget, Cursor, Hit, Query, SearchResult, search

HIT_LIMIT = 500  # hits listed (counting goes on for the status line)
SLICE_SECONDS = 0.25  # each slice, so the list fills in and Escape is heard
MATCH_STYLE = "black on yellow"
# A chip's tone (presentation.verdict) as a terminal colour.
TONE_STYLES = {"right": "green", "ok": "green", "wrong": "red", "bad": "red", "none": "dim"}
# Where to look, as the web page's `field` (a hit names the field it was found in).
FIELD_OPTIONS = (
    ("any field", "any"),
    ("response", "response"),
    ("prompt", "prompt"),
    ("label", "label"),
)


def hit_text(hit: Hit) -> Text:
    """One line of the hit list: where, the sample's reward, status and answer check (coloured
    as the web's chips), then the snippet on one line with the match marked."""
    text = Text(f"step {hit.step} #{hit.position} {hit.field} [", style="dim")
    parts = [
        (f"reward {b.display}" if b.name == "reward" else b.display, b.tone)
        for b in hit_badges(hit.reward, hit.status)
    ]
    if hit.match is not None:
        parts.append(("\u2713" if hit.match else "\u2717", "right" if hit.match else "wrong"))
    for i, (shown, tone) in enumerate(parts):
        text.append((", " if i else "") + shown, style=TONE_STYLES.get(tone, "yellow"))
    text.append("]: ", style="dim")
    snippet = hit.snippet
    for part, style in ((snippet.before, ""), (snippet.match, MATCH_STYLE), (snippet.after, "")):
        text.append(part.replace("\n", "\u23ce"), style=style)
    return text


class SearchScreen(ModalScreen[tuple[str, int] | None]):
    """The query input, the field, regex and case switches, the progress line and the hits."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "close")]

    def __init__(self, catalog: Catalog, bucket: str) -> None:
        super().__init__()
        self.catalog = catalog
        self.bucket = bucket

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box"):
            yield Label(f"Search every step of {self.bucket} (Enter to search, Esc to close)")
            with Horizontal(id="search-bar"):
                yield Input(placeholder="I apologize", id="search-query")
                yield Select(FIELD_OPTIONS, value="any", allow_blank=False, id="search-field")
                yield Checkbox("regex", id="search-regex")
                yield Checkbox("case", id="search-case")
            yield Label("", id="search-status")
            yield OptionList(id="search-hits")

    def on_mount(self) -> None:
        self.query_one("#search-query", Input).focus()

    def action_close(self) -> None:
        self.workers.cancel_group(self, "search")
        self.dismiss(None)

    @on(Input.Submitted, "#search-query")
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            query = Query(
                event.value,
                field=str(self.query_one("#search-field", Select).value),
                regex=self.query_one("#search-regex", Checkbox).value,
                case=self.query_one("#search-case", Checkbox).value,
            )
            query.matcher()
        except StoreError as exc:
            self._status(str(exc))
            return
        self.query_one("#search-hits", OptionList).clear_options()
        self._status("searching ...")
        self._search(query)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: Query) -> None:
        worker = get_current_worker()
        cursor: Cursor | None = None
        while not worker.is_cancelled:
            try:
                result = search(
                    self.catalog,
                    self.bucket,
                    query,
                    limit=HIT_LIMIT,
                    after=cursor,
                    budget=Budget(SLICE_SECONDS),
                    newest=True,
                    check=answer_check,
                )
            except StoreError as exc:
                self.app.call_from_thread(self._status, str(exc))
                return
            if worker.is_cancelled:
                return
            self.app.call_from_thread(self._add, result)
            if result.done or result.cursor is None:
                return
            cursor = result.cursor

    def _add(self, result: SearchResult) -> None:
        hits = self.query_one("#search-hits", OptionList)
        hits.add_options(
            Option(hit_text(hit), id=f"{hit.name}:{hit.position}") for hit in result.hits
        )
        where = f"{result.scanned_steps} of {result.total_steps} steps"
        state = "searched" if result.done else "searching ..."
        listed = f" ({result.listed} listed)" if result.listed < result.matches else ""
        self._status(f"{result.matches} matching samples{listed}, {where} {state}")
        if result.hits and hits.highlighted is None:
            hits.highlighted = 0

    def _status(self, message: str) -> None:
        self.query_one("#search-status", Label).update(message)

    @on(OptionList.OptionSelected, "#search-hits")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        name, _, position = (event.option.id or "").partition(":")
        self.workers.cancel_group(self, "search")
        self.dismiss((name, int(position)))
